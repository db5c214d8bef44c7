// The Node objects kubex-sim creates: pools expanded into NodeSpecs, and one NodeSpec as a Node with GPU
// Feature Discovery's labels (nvidia.com/gpu.present, .product, .memory, .count), the pool label, capacity
// and a Ready condition. Pure: tests read the objects without a server.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <vector>

#include "sim/cluster/config.h"

namespace kubex::sim::cluster {

// The pool label every simulated node carries (a GpuConsolidationPolicy nodeSelector can select a pool with
// it).
inline constexpr const char* kNodePoolLabel = "sim.kubex.ai/node-pool";

// The label `kubex-sim agent` puts on the nodes it registers, valued with the agent's name (SIM-2): it touches no
// other node.
inline constexpr const char* kNodeAgentLabel = "sim.kubex.ai/agent";

// The nodes of `config`: each pool's <pool>-node-<i> in pool order, then the explicit nodes.
std::vector<NodeSpec> node_specs(const ClusterConfig& config);

// The Node for `spec`, the `index`-th node of the cluster (its IP and pod CIDR derive from it).
nlohmann::json node_object(const NodeSpec& spec, int index);

}  // namespace kubex::sim::cluster
