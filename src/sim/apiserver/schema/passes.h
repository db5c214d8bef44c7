// The passes over a compiled schema, one job a file: compile (compile.cpp), prune (prune.cpp), default
// (defaults.cpp), OpenAPI validation (validate.cpp), embedded resources (embedded.cpp), list types
// (list_types.cpp) and the x-kubernetes-validations hook (rules_hook.cpp). StructuralSchema (schema.cpp) runs
// them in kube-apiserver's order.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "sim/apiserver/schema.h"
#include "sim/apiserver/schema/node.h"

namespace kubex::sim::schema {

// Compiles an openAPIV3Schema found at `path`; every problem goes to `errors` (empty when it compiled).
std::unique_ptr<Node> compile_node(const json& schema, const std::string& path, std::vector<Cause>& errors);

// Removes what `s` does not specify; `embedded` keeps apiVersion/kind/metadata. The removed paths go to
// `removed` (unsorted) when it is given.
void prune_unknown(json& x, const Node* s, bool embedded, std::vector<std::string>* removed);

// Drops non-nullable nulls without a default, then fills in `default:` values.
void apply_defaults(json& x, const Node* root);

// OpenAPI v3 validation of `x` against `n`, as field errors under `base` ("" = the root, printed "<nil>").
void validate_openapi(const Node& n, const json& x, const std::string& base, std::vector<Cause>& out);

// apiVersion and kind of every x-kubernetes-embedded-resource value.
void validate_embedded(const Node* root, const json& x, std::vector<Cause>& out);

// Duplicates in x-kubernetes-list-type set and map lists.
void validate_list_types(const Node* root, const json& x, std::vector<Cause>& out);

// Calls `hook` for every present value whose node carries x-kubernetes-validations, parents first, with the
// correlated old value (`old` is the old object on update, else nullptr).
void run_validation_rules(const Node* root, const json& x, const json* old, const ValidationRulesHook& hook,
                          std::vector<Cause>& out);

}  // namespace kubex::sim::schema
