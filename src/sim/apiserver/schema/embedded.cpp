// Embedded resources (k8s.io/apiextensions-apiserver pkg/apiserver/schema/objectmeta/validation.go):
// apiVersion and kind only.
#include "sim/apiserver/schema/passes.h"

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "sim/apiserver/schema/causes.h"
#include "sim/apiserver/schema/path.h"

namespace kubex::sim::schema {
namespace {

std::vector<std::string> dns1035_label_errors(const std::string& value) {
  std::vector<std::string> errs;
  if (value.size() > 63) errs.push_back("must be no more than 63 characters");
  bool ok = !value.empty() && value.front() >= 'a' && value.front() <= 'z';
  for (char c : value) ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-');
  ok = ok && value.back() != '-';
  if (!ok) {
    errs.push_back(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
        "alphabetic "
        "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
        "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')");
  }
  return errs;
}

void validate_embedded_resource(const json& x, const PathRef& p, std::vector<Cause>& out) {
  const std::string base = field_path(p);
  const std::string api_version_path = child_path(base, "apiVersion");
  const std::string kind_path = child_path(base, "kind");
  if (!x.contains("apiVersion")) out.push_back(required_cause(api_version_path, ""));
  if (!x.contains("kind")) out.push_back(required_cause(kind_path, ""));
  if (const json* v = find_member(x, "apiVersion")) {
    if (!v->is_string()) {
      out.push_back(invalid_cause(api_version_path, *v, "must be a string"));
    } else if (const auto& s = v->get_ref<const std::string&>(); s.empty()) {
      out.push_back(invalid_cause(api_version_path, *v, "must not be empty"));
    } else if (s != "/" && std::count(s.begin(), s.end(), '/') > 1) {
      out.push_back(invalid_cause(api_version_path, *v, "unexpected GroupVersion string: " + s));
    }
  }
  if (const json* v = find_member(x, "kind")) {
    if (!v->is_string()) {
      out.push_back(invalid_cause(kind_path, *v, "must be a string"));
    } else if (const auto& s = v->get_ref<const std::string&>(); s.empty()) {
      out.push_back(invalid_cause(kind_path, *v, "must not be empty"));
    } else {
      std::string lower = s;
      for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      auto errs = dns1035_label_errors(lower);
      if (!errs.empty()) {
        std::string joined;
        for (const auto& e : errs) joined += (joined.empty() ? "" : ",") + e;
        out.push_back(
            invalid_cause(kind_path, *v, "may have mixed case, but should otherwise match: " + joined));
      }
    }
  }
}

void walk_embedded(const Node* s, const json& x, const PathRef& p, std::vector<Cause>& out) {
  if (s == nullptr || !s->subtree_embedded) return;
  if (x.is_object()) {
    if (s->embedded) validate_embedded_resource(x, p, out);
    for (const auto& [k, v] : x.items()) {
      if (const Node* prop = s->property(k)) {
        walk_embedded(prop, v, p.field(k), out);
      } else if (s->additional != Additional::kNone) {
        walk_embedded(s->additional_schema.get(), v, p.key(k), out);
      }
    }
  } else if (x.is_array()) {
    for (std::size_t i = 0; i < x.size(); ++i) walk_embedded(s->items.get(), x[i], p.at(i), out);
  }
}

}  // namespace

void validate_embedded(const Node* root, const json& x, std::vector<Cause>& out) {
  walk_embedded(root, x, PathRef{}, out);
}

}  // namespace kubex::sim::schema
