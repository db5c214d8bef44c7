// The arithmetic of Deployment rollouts, as pure functions (kube-controller-manager's deployment/util and
// rolling.go semantics): resolving maxSurge/maxUnavailable, how far a new ReplicaSet may grow, how far old
// ones may shrink, and proportional scaling of several active ReplicaSets.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/result.h"

namespace kubex::sim::cluster {

struct RolloutLimits {
  std::int64_t max_surge = 0;
  std::int64_t max_unavailable = 0;
};

// maxSurge rounds percentages up, maxUnavailable rounds down (of `replicas`); both zero makes
// maxUnavailable 1 so a rollout can progress. Malformed values are errors naming the field.
common::Result<RolloutLimits> resolve_fenceposts(const nlohmann::json& max_surge,
                                                 const nlohmann::json& max_unavailable,
                                                 std::int64_t replicas);

// A ReplicaSet as the rollout arithmetic sees it.
struct RsView {
  std::string name;
  std::int64_t replicas = 0;       // spec.replicas
  std::int64_t available = 0;      // status.availableReplicas
  std::int64_t max_replicas = -1;  // deployment.kubernetes.io/max-replicas annotation; -1 when absent
  common::TimePoint created{};
};

// RollingUpdate: the new ReplicaSet's size so the total (sum of spec.replicas of all ReplicaSets,
// `all_replicas`) stays within replicas + maxSurge.
std::int64_t rolling_new_replicas(std::int64_t replicas, std::int64_t max_surge, std::int64_t all_replicas,
                                  std::int64_t new_rs_replicas);

// RollingUpdate: the sizes of the old ReplicaSets (same order as `old_rss`) after one scale-down step:
// first unhealthy (unavailable) replicas of the oldest sets, then available ones, never dropping the
// available total below replicas - maxUnavailable. `new_rs` may be an empty view when there is none.
std::vector<std::int64_t> rolling_scale_down_old(std::int64_t replicas, std::int64_t max_unavailable,
                                                 const RsView& new_rs, const std::vector<RsView>& old_rss);

// Scaling a Deployment while several ReplicaSets are active (a RollingUpdate in progress): distributes the
// change of (replicas + maxSurge - current total) over the sets in proportion to their size relative to the
// max-replicas they were sized for; the remainder goes to the largest. `status_replicas` stands in for a
// missing max-replicas annotation. Returns the new sizes in the order of `rss`.
std::vector<std::int64_t> proportional_sizes(std::int64_t replicas, std::int64_t max_surge,
                                             std::int64_t status_replicas, const std::vector<RsView>& rss);

}  // namespace kubex::sim::cluster
