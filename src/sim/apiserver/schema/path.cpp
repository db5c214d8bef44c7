#include "sim/apiserver/schema/path.h"

namespace kubex::sim::schema {

// kube-openapi's path: properties join with "." (none at the root), additionalProperties keys always get a
// leading "." (".foo" at the root), list items "[i]".
std::string openapi_name(const PathRef& p) {
  if (p.seg == PathRef::Seg::kRoot) return {};
  std::string parent = openapi_name(*p.parent);
  switch (p.seg) {
    case PathRef::Seg::kField:
      if (parent.empty()) return std::string(p.name);
      return parent + "." + std::string(p.name);
    case PathRef::Seg::kKey:
      return parent + "." + std::string(p.name);
    default:
      return parent + "[" + std::to_string(p.index) + "]";
  }
}

// field.Path: Child "a.b", Key "a[k]", Index "a[0]".
std::string field_path(const PathRef& p) {
  if (p.seg == PathRef::Seg::kRoot) return {};
  std::string parent = field_path(*p.parent);
  switch (p.seg) {
    case PathRef::Seg::kField:
      if (parent.empty()) return std::string(p.name);
      return parent + "." + std::string(p.name);
    case PathRef::Seg::kKey:
      return parent + "[" + std::string(p.name) + "]";
    default:
      return parent + "[" + std::to_string(p.index) + "]";
  }
}

std::string child_path(const std::string& parent, std::string_view name) {
  return parent.empty() ? std::string(name) : parent + "." + std::string(name);
}

}  // namespace kubex::sim::schema
