// PodDisruptionBudgets: status computation (the disruption controller) and eviction admission.
#pragma once

#include <expected>
#include <nlohmann/json_fwd.hpp>

#include "sim/apiserver/api_error.h"

namespace kubex::sim {
class ApiServer;
}

namespace kubex::sim::pdb {

struct Health {
  std::int64_t expected_pods = 0;
  std::int64_t current_healthy = 0;
  std::int64_t desired_healthy = 0;
  std::int64_t disruptions_allowed = 0;
};

// Allows or refuses (429) the eviction of `pod`; on success (and not dry-run) records the disruption in the
// matching budget's status.
std::expected<void, ApiError> check_eviction(ApiServer& server, const nlohmann::json& pod, bool dry_run);

// Recomputes and writes the status of every PodDisruptionBudget whose numbers changed.
void refresh_all(ApiServer& server);

}  // namespace kubex::sim::pdb
