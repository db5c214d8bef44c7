// metadata.managedFields of kubex-sim's API server (server-side apply, DESIGN §5): field sets in the FieldsV1
// wire format ("f:name", "k:{...}", "v:...", "i:N" keys, "." for a node that is itself a member) and the
// managedFields entries (manager, operation Apply|Update, apiVersion, time, subresource) as kube-apiserver
// encodes them. The set algebra here is what server_side_apply.cpp computes ownership with.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kubex::sim::ssa {

// A set of field paths as a tree: each child is keyed by its FieldsV1 path element ("f:spec",
// `k:{"name":"c"}`, `v:"a"`, "i:0"); `member` says the path ending here is itself in the set.
struct FieldSet {
  bool member = false;
  std::map<std::string, FieldSet> children;

  bool empty() const { return !member && children.empty(); }
  // The child node for `pe`, created when absent.
  FieldSet& at(const std::string& pe) { return children[pe]; }
  const FieldSet* find(const std::string& pe) const;
  void insert(const std::vector<std::string>& path);
  bool contains(const std::vector<std::string>& path) const;

  FieldSet& unite(const FieldSet& o);
  // Member-wise difference (children of a removed member stay when they are members themselves).
  FieldSet& subtract(const FieldSet& o);
  // Removes every member of `o` together with everything under it.
  FieldSet& subtract_recursive(const FieldSet& o);
  FieldSet intersect(const FieldSet& o) const;
  // Drops nodes that hold no member.
  void prune_empty();

  // Every member's path, depth first in key order.
  void for_each(const std::function<void(const std::vector<std::string>&)>& fn) const;
  std::size_t size() const;

  nlohmann::json to_fields_v1() const;
  // nullopt when `v` is not a FieldsV1 object (bad keys, non-object values).
  static std::optional<FieldSet> from_fields_v1(const nlohmann::json& v);
  bool operator==(const FieldSet& o) const = default;
};

// Path elements.
std::string field_pe(std::string_view name);              // f:name
std::string key_pe(const nlohmann::json& key_fields);      // k:{"name":"c"} (fields sorted by name)
std::string value_pe(const nlohmann::json& v);             // v:"a"
std::string index_pe(std::size_t i);                       // i:3

// How structured-merge-diff prints a path in conflict messages: `.spec.containers[name="c"].image`,
// `.metadata.finalizers[="a"]`, `.spec.ports[port=80,protocol="TCP"]`.
std::string path_string(const std::vector<std::string>& path);

// One metadata.managedFields entry.
struct ManagedEntry {
  std::string manager;
  std::string operation;  // Apply | Update
  std::string api_version;
  std::string time;  // RFC 3339, may be empty
  std::string subresource;
  FieldSet set;

  // Identity of the entry as the field manager keys it: Apply entries are one per manager (and subresource),
  // Update entries one per manager, apiVersion and subresource.
  std::string id() const;
  // How conflict messages name the manager: `"m"`, `"m" using apps/v1`, `"m" with subresource "status"`.
  std::string label() const;
};

// The entries of a managedFields array; nullopt when it does not decode (kube-apiserver then falls back to the
// live object's entries).
std::optional<std::vector<ManagedEntry>> decode_managed_fields(const nlohmann::json& arr);
// The array as kube-apiserver stores it: entries with empty sets dropped, sorted by operation (Apply first),
// time, manager, apiVersion and subresource.
nlohmann::json encode_managed_fields(std::vector<ManagedEntry> entries);

// The manager kube-apiserver records for a request without ?fieldManager: the User-Agent up to its first '/'
// ("kubectl/v1.32 (linux/amd64)" -> "kubectl"), at most 128 bytes.
std::string manager_from_user_agent(std::string_view user_agent);

}  // namespace kubex::sim::ssa
