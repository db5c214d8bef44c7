// Pruning (k8s.io/apiextensions-apiserver pkg/apiserver/schema/pruning): unknown fields removed.
#include "sim/apiserver/schema/passes.h"

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace kubex::sim::schema {
namespace {

class Pruner {
 public:
  explicit Pruner(std::vector<std::string>* out) : out_(out) {}

  void prune(json& x, const Node* s, bool embedded) {
    if (s != nullptr && s->preserve_unknown) {
      skip_prune(x, s, embedded);
      return;
    }
    if (x.is_object()) {
      if (s == nullptr) {
        for (const auto& [k, v] : x.items()) record(k);
        x = json::object();
        return;
      }
      std::vector<std::string> drop;
      for (auto it = x.begin(); it != x.end(); ++it) {
        const std::string& k = it.key();
        if (embedded && is_meta_field(k)) continue;
        if (!prune_specified(k, *it, *s)) {
          record(k);
          drop.push_back(k);
        }
      }
      for (const auto& k : drop) x.erase(k);
    } else if (x.is_array()) {
      const Node* items = s != nullptr ? s->items.get() : nullptr;
      for (std::size_t i = 0; i < x.size(); ++i) {
        Mark m = push_index(i);
        prune(x[i], items, items != nullptr && items->embedded);
        pop(m);
      }
    }
  }

 private:
  using Mark = std::size_t;

  // x-kubernetes-preserve-unknown-fields: keep unknown fields, but prune below specified ones.
  void skip_prune(json& x, const Node* s, bool embedded) {
    if (s == nullptr) return;
    if (x.is_object()) {
      for (auto it = x.begin(); it != x.end(); ++it) {
        const std::string& k = it.key();
        if (embedded && is_meta_field(k)) continue;
        prune_specified(k, *it, *s);
      }
    } else if (x.is_array()) {
      const Node* items = s->items.get();
      for (std::size_t i = 0; i < x.size(); ++i) {
        Mark m = push_index(i);
        skip_prune(x[i], items, items != nullptr && items->embedded);
        pop(m);
      }
    }
  }

  // Prunes below field `k` of an object whose schema is `s`; false when `s` does not specify `k`.
  bool prune_specified(const std::string& k, json& v, const Node& s) {
    const Node* child = s.property(k);
    if (child == nullptr && s.additional == Additional::kNone) return false;
    if (child == nullptr) child = s.additional_schema.get();
    Mark m = push_key(k);
    prune(v, child, child != nullptr && child->embedded);
    pop(m);
    return true;
  }

  Mark push_key(const std::string& k) {
    Mark m = path_.size();
    if (out_ != nullptr) {
      if (!path_.empty()) path_ += '.';
      path_ += k;
    }
    return m;
  }
  Mark push_index(std::size_t i) {
    Mark m = path_.size();
    if (out_ != nullptr) path_ += "[" + std::to_string(i) + "]";
    return m;
  }
  void pop(Mark m) { path_.resize(m); }
  void record(const std::string& k) {
    if (out_ != nullptr) out_->push_back(path_.empty() ? k : path_ + "." + k);
  }

  std::vector<std::string>* out_;
  std::string path_;
};

}  // namespace

void prune_unknown(json& x, const Node* s, bool embedded, std::vector<std::string>* removed) {
  Pruner(removed).prune(x, s, embedded);
}

}  // namespace kubex::sim::schema
