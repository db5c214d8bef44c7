// Deployment controller of the simulated cluster (kube-controller-manager's deployment controller): one
// ReplicaSet per pod template (`<deployment>-<pod-template-hash>`), RollingUpdate within maxSurge /
// maxUnavailable or Recreate, proportional scaling, revision annotations, history pruning to
// revisionHistoryLimit, and status with the Available and Progressing conditions.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "sim/cluster/workload_common.h"

namespace kubex::sim::cluster {

// The pod-template-hash of a Deployment's pod template (and status.collisionCount): 10 characters of
// [bcdfghjklmnpqrstvwxz2456789], stable for equal templates.
std::string pod_template_hash(const nlohmann::json& pod_template, std::int64_t collision_count);

// A pod template with the pod-template-hash label removed (how a ReplicaSet's template is compared with its
// Deployment's: equal templates mean "this is the new ReplicaSet").
nlohmann::json template_without_hash(const nlohmann::json& pod_template);

std::unique_ptr<Subsystem> make_deployment_controller(WorkloadEnv& env);

}  // namespace kubex::sim::cluster
