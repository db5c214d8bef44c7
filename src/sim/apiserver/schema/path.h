// Field paths while walking a value: built on the stack, rendered as kube-openapi or field.Path prints them
// only when an error needs one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kubex::sim::schema {

// A field path built on the stack while walking a value, rendered only when an error needs it.
struct PathRef {
  enum class Seg : uint8_t { kRoot, kField, kKey, kIndex };
  const PathRef* parent = nullptr;
  Seg seg = Seg::kRoot;
  std::string_view name;
  std::size_t index = 0;

  PathRef field(std::string_view n) const { return {this, Seg::kField, n, 0}; }
  PathRef key(std::string_view n) const { return {this, Seg::kKey, n, 0}; }
  PathRef at(std::size_t i) const { return {this, Seg::kIndex, {}, i}; }
};

// kube-openapi's path: properties join with "." (none at the root), additionalProperties keys always get a
// leading "." (".foo" at the root), list items "[i]".
std::string openapi_name(const PathRef& p);

// field.Path: Child "a.b", Key "a[k]", Index "a[0]".
std::string field_path(const PathRef& p);

// `parent.name`, or `name` at the root.
std::string child_path(const std::string& parent, std::string_view name);

}  // namespace kubex::sim::schema
