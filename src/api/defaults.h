// In-memory CRD defaulting (API-2): the engine never depends on the API server having defaulted an object.
// The defaults are the CRD schemas' `default` values (charts/kubex-crds), listed once in the field catalogue
// that the parity test compares with the CRD YAML.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "api/kinds.h"

namespace kubex::api {

// One field of a kind's schema as the C++ side knows it: "spec.enablement.gpu.requests.upsize".
// Map entries use "*" for the key ("spec.enablement.gpu.requests.containers.*.floor"), list items "[]".
struct FieldInfo {
  std::string path;
  std::string type;           // boolean integer string number object array int-or-string
  std::string default_json;   // "" when the field has no default; else the default as compact JSON
  std::size_t max = 0;        // the schema's maxLength / maxItems / maxProperties (gen-crds.py BOUNDS); 0: none
};
const std::vector<FieldInfo>& field_catalogue(Kind k);

// (path, message) for every value of `object` beyond its schema bound (FieldInfo::max): "must be at most N
// characters", "must have at most N items", "must have at most N entries". Paths as the validator's.
std::vector<std::pair<std::string, std::string>> bound_violations(Kind k, const nlohmann::json& object);

// Adds every absent defaulted field (like the API server's structural defaulting, only where the parent
// object exists). Leaves present fields alone; tolerates values of the wrong type.
void apply_defaults(Kind k, nlohmann::json& object);

}  // namespace kubex::api
