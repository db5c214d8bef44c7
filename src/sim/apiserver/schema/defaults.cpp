// Defaulting (k8s.io/apiextensions-apiserver pkg/apiserver/schema/defaulting).
#include "sim/apiserver/schema/passes.h"

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace kubex::sim::schema {
namespace {

const Node* field_schema(const Node* s, std::string_view k) {
  if (s == nullptr) return nullptr;
  if (const Node* p = s->property(k)) return p;
  return s->additional == Additional::kSchema ? s->additional_schema.get() : nullptr;
}

// Nothing can be dropped below a value without schema, so the walk stops there (Go's recursion is a no-op).
void prune_non_nullable_nulls(json& x, const Node* s) {
  if (s == nullptr) return;
  if (x.is_object()) {
    std::vector<std::string> drop;
    for (auto it = x.begin(); it != x.end(); ++it) {
      const Node* fs = field_schema(s, it.key());
      if (it->is_null() && fs != nullptr && !fs->nullable && !fs->default_value) {
        drop.push_back(it.key());
      } else {
        prune_non_nullable_nulls(*it, fs);
      }
    }
    for (const auto& k : drop) x.erase(k);
  } else if (x.is_array()) {
    for (auto& e : x) prune_non_nullable_nulls(e, s->items.get());
  }
}

bool non_nullable_null(const json& x, const Node* s) {
  return x.is_null() && s != nullptr && !s->nullable;
}

void apply_defaults_to(json& x, const Node* s) {
  if (s == nullptr) return;
  if (x.is_object()) {
    for (const auto& [k, prop] : s->properties) {
      if (!prop->default_value) continue;
      auto it = x.find(k);
      if (it == x.end() || non_nullable_null(*it, prop.get())) x[k] = *prop->default_value;
    }
    for (auto it = x.begin(); it != x.end(); ++it) {
      if (const Node* prop = s->property(it.key())) {
        apply_defaults_to(*it, prop);
      } else if (s->additional != Additional::kNone) {
        const Node* ap = s->additional_schema.get();
        if (non_nullable_null(*it, ap) && ap->default_value) *it = *ap->default_value;
        apply_defaults_to(*it, ap);
      }
    }
  } else if (x.is_array()) {
    const Node* items = s->items.get();
    for (auto& e : x) {
      if (non_nullable_null(e, items) && items->default_value) e = *items->default_value;
      apply_defaults_to(e, items);
    }
  }
}

}  // namespace

void apply_defaults(json& x, const Node* root) {
  prune_non_nullable_nulls(x, root);
  apply_defaults_to(x, root);
}

}  // namespace kubex::sim::schema
