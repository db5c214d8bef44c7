// ReplicaSet controller of the simulated cluster (kube-controller-manager's replicaset controller): keeps
// spec.replicas active pods, replaces deleted, evicted and finished ones, scales down the least useful pods
// first, and reports replicas/fullyLabeled/ready/available counts.
#pragma once

#include <memory>
#include <vector>

#include "sim/cluster/model.h"
#include "sim/cluster/workload_common.h"

namespace kubex::sim::cluster {

// Pods in the order a ReplicaSet deletes them when scaling down (controller.ActivePodsWithRanks): unscheduled
// before scheduled, Pending before Unknown before Running, not ready before ready, pods sharing a node with
// more siblings first, more container restarts first, newer before older.
std::vector<std::shared_ptr<const SimPod>> scale_down_order(std::vector<std::shared_ptr<const SimPod>> pods);

std::unique_ptr<Subsystem> make_replicaset_controller(WorkloadEnv& env);

}  // namespace kubex::sim::cluster
