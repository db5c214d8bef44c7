// The owner (and mirrored pod) annotations `<prefix>.rightsizing.kubex.ai/desired-resource-requests` and
// `-limits` (SPEC §2): their keys, and their JSON value
// `{"<container>":{"cpu":"200m","gpu":"0.48","memory":"256Mi"}}` with sorted keys.
// Read by policy/ (SEL-6 sources), admission/ (ADM-14 mirroring) and the owner-annotation controllers, so it
// sits at decide/'s top.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/kinds.h"
#include "decide/gpu_value.h"

namespace kubex::decide {

// Built once per kind: a reference to a static string.
const std::string& desired_requests_key(api::Kind policy_kind);
const std::string& desired_limits_key(api::Kind policy_kind);
std::string reactive_state_key(api::Kind policy_kind);
std::string proactive_state_key(api::Kind policy_kind);  // PRO-7
// True for "<any prefix>.rightsizing.kubex.ai/desired-resource-requests" and "…-limits".
bool is_desired_key(std::string_view key);

// The requests.gpu values of a desired-resource-requests annotation: {"app":{"gpu":"0.48"}} -> {app: 48}.
// nullopt when the text is not a JSON object (VAL-7: the whole source is ignored). A container entry that
// is not an object, or whose gpu is absent or not a number/decimal string > 0, is skipped. Values are
// desired values (GPU-2).
std::optional<std::map<std::string, Hundredths>> parse_desired_gpu(std::string_view text);

// OBS-5 `kubex_gpu_recommendations_total{direction}`: what writing `after` over `before` (nullopt: the
// annotation was absent) into a desired-resource-requests annotation does to each container's GPU value,
// compared as GPU-2 desired values. A container with no readable value before gets "initial"; a higher
// value "upsize", a lower one "downsize"; an unchanged value, or none after, is left out. Sorted by
// container.
std::vector<std::string> gpu_recommendation_directions(const std::optional<std::string>& before,
                                                       std::string_view after);

// container -> resource ("cpu", "gpu", "memory") -> value as written.
using DesiredValues = std::map<std::string, std::map<std::string, std::string>>;
// Compact JSON with sorted keys: {"app":{"cpu":"200m","gpu":"0.48"}}.
std::string format_desired(const DesiredValues& values);

}  // namespace kubex::decide
