// Server-side printing: meta.k8s.io/v1 Table responses for `kubectl get` (Accept: ...;as=Table).
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "common/clock.h"
#include "sim/apiserver/resource.h"

namespace kubex::sim {

// `include_object`: "None", "Metadata" (default) or "Object".
nlohmann::json to_table(const ResourceInfo& r, const std::vector<const nlohmann::json*>& items,
                        const std::string& include_object, bool with_headers, std::uint64_t rv,
                        const std::string& continue_token);

// kube's duration.HumanDuration: "45s", "3m12s", "5h", "3d4h", "2y10d".
std::string human_duration(common::Duration d);

// Evaluates a kubectl-style JSONPath (".status.conditions[?(@.type==\"Ready\")].status", ".spec.x[0]",
// ".items[*].name") against `obj`; returns every match.
std::vector<nlohmann::json> jsonpath_find(const nlohmann::json& obj, const std::string& path);

}  // namespace kubex::sim
