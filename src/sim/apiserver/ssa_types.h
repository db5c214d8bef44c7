// The type information server-side apply needs (DESIGN §5): which objects are structs (declared fields) or maps
// (free keys), which maps, structs and lists are atomic, and how lists merge: `x-kubernetes-list-type` map (by
// `x-kubernetes-list-map-keys`), set, or atomic. Custom resources read it from their CRD's openAPIV3Schema;
// built-in kinds from a table of the list types and map types of k8s.io/api that kubex-sim's kinds use
// (containers by name, ports by containerPort+protocol, env by name, webhooks by name, ...). Anything the
// table does not name is a struct whose lists are atomic, as in the Kubernetes OpenAPI.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace kubex::sim {
struct ResourceInfo;
}

namespace kubex::sim::ssa {

enum class ListKind { kAtomic, kSet, kMap };

// A position in a type. Cheap to copy.
struct TypePos {
  enum class Src : unsigned char { kBuiltin, kSchema, kDeduced };
  Src src = Src::kBuiltin;
  std::string_view builtin;                 // kBuiltin: type name in the table ("" = a struct without rules)
  const nlohmann::json* schema = nullptr;   // kSchema: the schema node
  bool atomic = false;                      // the whole value is one leaf (atomic map/struct/list)
  bool scalar = false;                      // a declared scalar (kSchema only)
  bool root = false;                        // the object itself (apiVersion, kind, metadata)
  const void* list_rule = nullptr;          // kBuiltin lists: the table's rule

  // The type of `key` in an object at this position; `declared` is false for map entries (keys that are not
  // struct fields), whose paths are members of a field set in their own right.
  TypePos field(const std::string& key, bool& declared) const;
  // For lists: how they merge and the type of their items.
  ListKind list_kind() const;
  const std::vector<std::string>& list_keys() const;
  TypePos item() const;
  // The value a list-map key field takes when an item leaves it out (ports' protocol: "TCP"), or null.
  nlohmann::json key_default(const std::string& key) const;
};

// The root type of a resource's objects.
TypePos root_type(const ResourceInfo& r);

// The path element of a list item at this (list) position: k:{...} for list-type map, v:... for sets, i:N for
// atomic lists; "" when a map list's item is not an object.
std::string item_pe(const TypePos& list, const nlohmann::json& item, std::size_t index);

}  // namespace kubex::sim::ssa
