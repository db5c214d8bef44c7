// Server-side apply and field ownership for kubex-sim's API server (DESIGN §5), with the semantics of
// k8s.io/apimachinery's field manager and sigs.k8s.io/structured-merge-diff (behaviour only):
//  - every create, update and patch records the fields it set under its manager (operation Update), taking
//    them from the managers that owned them before;
//  - an apply (PATCH application/apply-patch+yaml) merges the applied configuration into the object (lists by
//    their list type and keys), owns exactly the fields it sets (operation Apply), removes the fields it set
//    last time and no longer sets unless another manager owns them, and fails with 409 Conflict when it would
//    change a field another manager owns, unless forced.
#pragma once

#include <expected>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/apiserver/api_error.h"
#include "sim/apiserver/managed_fields.h"
#include "sim/apiserver/ssa_types.h"

namespace kubex::sim {
struct ResourceInfo;
}

namespace kubex::sim::ssa {

// The field set of every field an object sets (structured-merge-diff's ToFieldSet).
FieldSet to_field_set(const nlohmann::json& obj, const TypePos& t);

struct Comparison {
  FieldSet added, modified, removed;
  bool same() const { return added.empty() && modified.empty() && removed.empty(); }
};
// What changed from `lhs` to `rhs`; a non-leaf that appears or disappears is itself added or removed.
Comparison compare(const nlohmann::json& lhs, const nlohmann::json& rhs, const TypePos& t);

// `config` merged into `live`: maps and structs key by key, list-type map lists by key and sets by value, in
// structured-merge-diff's order; atomic values replaced.
nlohmann::json merge(const nlohmann::json& live, const nlohmann::json& config, const TypePos& t);

// Removes from `obj` what `last` holds and `owned` does not (nothing owned at or below it).
void remove_unowned(nlohmann::json& obj, const FieldSet& last, const FieldSet& owned, const TypePos& t);

// One write's view of field management.
struct Request {
  const ResourceInfo* resource = nullptr;
  std::string manager;
  std::string subresource;  // "" or "status"
  std::string now;          // RFC 3339
};

// The managedFields `next` gets when it replaces `live` (nullptr: a create) through an Update-operation write.
// `requested` holds the managedFields the request body carried, used instead of the live object's when it is a
// non-empty valid array (main resource only), as kube-apiserver does.
nlohmann::json updated_managed_fields(const Request& req, const nlohmann::json* live, const nlohmann::json& next,
                                      const nlohmann::json* requested);

// The object an apply of `config` makes of `live` (nullptr: the object does not exist yet), with its
// managedFields. 409 Conflict (causes of type FieldManagerConflict) when it would change fields other managers
// own and `force` is false.
std::expected<nlohmann::json, ApiError> apply(const Request& req, const nlohmann::json* live,
                                              const nlohmann::json& config, bool force);

// The managedFields of two objects equal, ignoring times.
bool same_managed_fields(const nlohmann::json& a, const nlohmann::json& b);

}  // namespace kubex::sim::ssa
