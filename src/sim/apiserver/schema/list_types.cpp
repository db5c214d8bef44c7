// x-kubernetes-list-type set/map uniqueness (k8s.io/apiextensions-apiserver pkg/apiserver/schema/listtype).
#include "sim/apiserver/schema/passes.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/apiserver/schema/causes.h"
#include "sim/apiserver/schema/path.h"

namespace kubex::sim::schema {
namespace {

// Shortest round-trip scientific form, the identity of a float64 among list items.
std::string scientific(double v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  return std::string(buf, res.ptr);
}

// Identity of a list element as Go compares it: scalars by dynamic type and value, compound values by JSON.
std::string identity(const json& v) {
  switch (kind_of(v)) {
    case Kind::kNull:
      return "n";
    case Kind::kBool:
      return v.get<bool>() ? "b1" : "b0";
    case Kind::kInt:
      return "i" + std::to_string(as_int(v));
    case Kind::kFloat:
      return "f" + scientific(v.get<double>());
    case Kind::kString:
      return "s" + v.get<std::string>();
    default:
      return "c" + go_json(v);
  }
}

// Indices of the first repeated appearance of each non-unique identity.
std::vector<std::size_t> non_unique(const std::vector<std::string>& ids) {
  std::unordered_map<std::string_view, int> seen;
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (++seen[ids[i]] == 2) out.push_back(i);
  }
  return out;
}

void validate_list_map(const Node& s, const json& arr, const PathRef& p, std::vector<Cause>& out) {
  for (std::size_t i = 0; i < arr.size(); ++i) {
    if (!arr[i].is_object() && !arr[i].is_null()) {
      out.push_back(
          invalid_cause(field_path(p.at(i)), arr[i], "must be an object for an array of list-type map"));
      return;
    }
  }
  if (arr.size() <= 1) return;
  std::vector<json> keys;
  std::vector<std::string> ids;
  for (const auto& x : arr) {
    json key = json::object();
    for (const auto& k : s.list_map_keys) {
      if (const json* v = x.is_object() ? find_member(x, k) : nullptr) key[k] = *v;
    }
    if (s.list_map_keys.size() == 1) {
      ids.push_back(key.empty() ? std::string("u") : identity(key.begin().value()));
    } else {
      ids.push_back(identity(key));
    }
    keys.push_back(std::move(key));
  }
  for (std::size_t i : non_unique(ids)) out.push_back(duplicate_cause(field_path(p.at(i)), keys[i]));
}

void walk_lists(const Node* s, const json& x, const PathRef& p, std::vector<Cause>& out);

void walk_list_object(const Node* s, const json& x, const PathRef& p, std::vector<Cause>& out) {
  if (s->additional == Additional::kSchema) {
    for (const auto& [k, v] : x.items()) walk_lists(s->additional_schema.get(), v, p.key(k), out);
  }
  if (!s->properties.empty()) {
    for (const auto& [k, v] : x.items()) {
      if (const Node* prop = s->property(k)) walk_lists(prop, v, p.field(k), out);
    }
  }
}

void walk_lists(const Node* s, const json& x, const PathRef& p, std::vector<Cause>& out) {
  if (s == nullptr || !s->subtree_list) return;
  if (x.is_object()) {
    walk_list_object(s, x, p, out);
  } else if (x.is_array()) {
    if (s->list_type == ListType::kSet) {
      std::vector<std::string> ids;
      ids.reserve(x.size());
      for (const auto& e : x) ids.push_back(identity(e));
      for (std::size_t i : non_unique(ids)) out.push_back(duplicate_cause(field_path(p.at(i)), x[i]));
    } else if (s->list_type == ListType::kMap) {
      validate_list_map(*s, x, p, out);
    }
    if (s->items) {
      for (std::size_t i = 0; i < x.size(); ++i) walk_lists(s->items.get(), x[i], p.at(i), out);
    }
  }
}

}  // namespace

void validate_list_types(const Node* root, const json& x, std::vector<Cause>& out) {
  if (x.is_object() && root->subtree_list) walk_list_object(root, x, PathRef{}, out);
}

}  // namespace kubex::sim::schema
