// Discovery (/api, /apis, /version) and OpenAPI (/openapi/v2, /openapi/v3) documents.
#pragma once

#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "sim/apiserver/resource.h"

namespace kubex::sim {

nlohmann::json discovery_core_versions(const std::string& server_address);
nlohmann::json discovery_group_list(const Registry& registry);
// nullopt-like: returns a null json when the group or group/version is not served.
nlohmann::json discovery_group(const Registry& registry, const std::string& group);
nlohmann::json discovery_resource_list(const Registry& registry, const std::string& group, const std::string& version);
nlohmann::json version_info(const std::string& minor);

// OpenAPI v3: the root index (group-version -> document URL with a content hash) and one document per
// group-version ("api/v1", "apis/apps/v1"). Returns a null json for unknown group-versions.
nlohmann::json openapi_v3_root(const Registry& registry, const std::function<std::string(const std::string&)>& hash_of);
nlohmann::json openapi_v3_document(const Registry& registry, const std::string& gv_path);
// OpenAPI v2 (swagger 2.0) for clients that ask for JSON.
nlohmann::json openapi_v2_document(const Registry& registry);
// The same document as gnostic OpenAPIv2 protobuf, without definitions (swagger version and info only).
std::string openapi_v2_protobuf_minimal();

}  // namespace kubex::sim
