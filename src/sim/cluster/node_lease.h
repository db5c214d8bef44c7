// Node heartbeats of `kubex-sim agent` (SIM-2): like a kubelet, it renews each of its nodes' Lease in
// kube-node-lease every 10 s and posts the node's conditions through the status subresource at registration and
// every 5 minutes, so kube-controller-manager's node lifecycle controller keeps the nodes Ready. When it stops,
// the renewals stop and the nodes go NotReady as a real node's would.
#pragma once

#include <chrono>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "common/clock.h"
#include "sim/cluster/subsystem.h"

namespace kubex::sim::cluster {

inline constexpr const char* kNodeLeaseNamespace = "kube-node-lease";
inline constexpr std::chrono::seconds kNodeLeaseRenewInterval{10};
inline constexpr int kNodeLeaseDurationSeconds = 40;
inline constexpr std::chrono::minutes kNodeStatusReportInterval{5};

// The Lease of node `name` (uid `node_uid`, owner of the Lease so it goes with the node) renewed at `now`.
nlohmann::json node_lease_object(const std::string& name, const std::string& node_uid, common::TimePoint now);
// The status patch that reports the node Ready at `now` (conditions with heartbeat and transition times).
nlohmann::json node_ready_status_patch(common::TimePoint now);

std::unique_ptr<Subsystem> make_node_heartbeat(ClusterContext& ctx);

}  // namespace kubex::sim::cluster
