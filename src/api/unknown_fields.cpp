#include "api/unknown_fields.h"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <string_view>

namespace kubex::api {

namespace {

using nlohmann::json;

constexpr std::size_t kHintDistance = 2;

// metav1.ObjectMeta's fields (the CRD schemas leave metadata to the API server).
constexpr std::array<std::string_view, 15> kObjectMeta = {
    "name",       "generateName", "namespace",         "selfLink",  "uid",
    "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
    "labels",     "annotations",  "ownerReferences",   "finalizers", "managedFields"};

std::string suggest(const std::string& name, const std::vector<std::string>& known) {
  std::string found;
  int close = 0;
  for (const auto& k : known) {
    if (edit_distance(name, k) <= kHintDistance) {
      ++close;
      found = k;
    }
  }
  return close == 1 ? found : "";
}

std::string join(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

class Walker {
 public:
  explicit Walker(std::vector<UnknownField>& out) : out_(out) {}

  void walk(const json& schema, const json& value, const std::string& path) {
    if (!schema.is_object()) return;
    if (value.is_array()) {
      auto items = schema.find("items");
      if (items == schema.end()) return;
      for (std::size_t i = 0; i < value.size(); ++i) walk(*items, value[i], path + "[" + std::to_string(i) + "]");
      return;
    }
    if (!value.is_object()) return;
    const bool preserve = schema.value("x-kubernetes-preserve-unknown-fields", false);
    auto props = schema.find("properties");
    auto extra = schema.find("additionalProperties");
    const bool has_props = props != schema.end() && props->is_object();
    std::vector<std::string> known;
    if (has_props) {
      for (auto it = props->begin(); it != props->end(); ++it) known.push_back(it.key());
    }
    for (auto it = value.begin(); it != value.end(); ++it) {
      const std::string p = join(path, it.key());
      if (has_props && props->contains(it.key())) {
        walk((*props)[it.key()], it.value(), p);
      } else if (extra != schema.end()) {
        if (extra->is_object()) walk(*extra, it.value(), p);  // `true`: anything goes; `false`: no map
        else if (extra->is_boolean() && !extra->get<bool>() && !preserve) out_.push_back({p, suggest(it.key(), known)});
      } else if (!preserve) {
        out_.push_back({p, suggest(it.key(), known)});
      }
    }
  }

  void metadata(const json& value) {
    if (!value.is_object()) return;
    std::vector<std::string> known(kObjectMeta.begin(), kObjectMeta.end());
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (std::find(known.begin(), known.end(), it.key()) == known.end()) {
        out_.push_back({"metadata." + it.key(), suggest(it.key(), known)});
      }
    }
  }

 private:
  std::vector<UnknownField>& out_;
};

}  // namespace

std::string UnknownField::message() const {
  return suggestion.empty() ? "unknown field" : "unknown field (did you mean \"" + suggestion + "\"?)";
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::vector<UnknownField> unknown_fields(const json& schema, const json& object) {
  std::vector<UnknownField> out;
  if (!schema.is_object() || !object.is_object()) return out;
  Walker w(out);
  json root = schema;  // the root: apiVersion, kind and metadata are the API server's, whatever the schema says
  json& props = root["properties"];
  if (!props.is_object()) props = json::object();
  props["apiVersion"] = {{"type", "string"}};
  props["kind"] = {{"type", "string"}};
  props.erase("metadata");
  json rest = object;
  auto meta = object.find("metadata");
  if (meta != object.end()) rest.erase("metadata");
  std::vector<UnknownField> meta_out;
  if (meta != object.end()) Walker(meta_out).metadata(*meta);
  w.walk(root, rest, "");
  out.insert(out.begin(), meta_out.begin(), meta_out.end());
  return out;
}

}  // namespace kubex::api
