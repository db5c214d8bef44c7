// In-memory CRD defaulting (API-2): the engine never depends on the API server having defaulted an object.
// The defaults are the CRD schemas' `default` values (charts/kubex-crds), listed once in the field catalogue
// that the parity test compares with the CRD YAML.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "api/kinds.h"

namespace kubex::api {

// One field of a kind's schema as the C++ side knows it: "spec.enablement.gpu.requests.upsize".
// Map entries use "*" for the key ("spec.enablement.gpu.requests.containers.*.floor"), list items "[]".
struct FieldInfo {
  std::string path;
  std::string type;           // boolean integer string number object array int-or-string
  std::string default_json;   // "" when the field has no default; else the default as compact JSON
};
const std::vector<FieldInfo>& field_catalogue(Kind k);

// Adds every absent defaulted field (like the API server's structural defaulting, only where the parent
// object exists). Leaves present fields alone; tolerates values of the wrong type.
void apply_defaults(Kind k, nlohmann::json& object);

}  // namespace kubex::api
