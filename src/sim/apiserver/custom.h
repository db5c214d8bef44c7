// CustomResourceDefinitions and the custom resources they define.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "sim/apiserver/api_error.h"
#include "sim/apiserver/resource.h"

namespace kubex::sim::custom {

// --- the CRD object itself ---
// Full validation of a CRD (names, scope, versions, schemas, CEL rules); `old` for updates.
std::vector<StatusCause> validate_crd(const nlohmann::json& crd, const nlohmann::json* old);
// Sets status.acceptedNames, storedVersions and the Established/NamesAccepted conditions.
void set_crd_status(nlohmann::json& crd, const std::string& now_rfc3339);
// The served resources a valid CRD defines (one per served version).
std::vector<ResourcePtr> crd_resources(const nlohmann::json& crd);

// --- custom resources ---
// Removes fields unknown to the schema; returns their paths (for fieldValidation Strict/Warn).
std::vector<std::string> prune(const ResourceInfo& r, nlohmann::json& obj);
void apply_defaults(const ResourceInfo& r, nlohmann::json& obj);
// Schema + x-kubernetes-validations (CEL) validation; `old` enables transition rules.
std::vector<StatusCause> validate(const ResourceInfo& r, const nlohmann::json& obj, const nlohmann::json* old);

}  // namespace kubex::sim::custom
