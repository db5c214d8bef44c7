// The input of GPU node consolidation planning (SPEC §9, CON-1…CON-6a): one snapshot of a compatibility pool
// as plain structs. observe/gpu_inventory fills them from nodes, pods and PDBs; decide/packing reads them and
// never touches the cluster (DESIGN §2, §3). Units: GPUs in hundredths (GPU-1), CPU in millicores, memory in
// bytes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "decide/gpu_value.h"

namespace kubex::decide::packing {

using Labels = std::map<std::string, std::string>;

// CON-7: the node taint a consolidation policy puts on the node it drains (`=<policy>:NoSchedule`).
inline constexpr const char* kConsolidatingTaint = "rightsizing.kubex.ai/consolidating";

// A node taint (spec.taints[]). effect: "NoSchedule", "PreferNoSchedule" or "NoExecute".
struct Taint {
  std::string key, value, effect;
  friend bool operator==(const Taint&, const Taint&) = default;
};

// A pod toleration (spec.tolerations[]). op: "Equal" (also when the field is empty) or "Exists". An empty key
// with op Exists tolerates every taint; an empty effect matches every effect.
struct Toleration {
  std::string key, op, value, effect;
  friend bool operator==(const Toleration&, const Toleration&) = default;
};

// One requirement of a required node-affinity term. op: In, NotIn, Exists, DoesNotExist, Gt, Lt (Gt/Lt compare
// the label value and values[0] as integers). Other operators never match.
struct NodeSelectorRequirement {
  std::string key, op;
  std::vector<std::string> values;
  friend bool operator==(const NodeSelectorRequirement&, const NodeSelectorRequirement&) = default;
};

// One `nodeSelectorTerms[]` entry: its matchExpressions (on node labels) and matchFields (only
// `metadata.name` exists in Kubernetes) are ANDed. A term with neither matches no node, as in Kubernetes.
struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;
  std::vector<NodeSelectorRequirement> match_fields;
  friend bool operator==(const NodeSelectorTerm&, const NodeSelectorTerm&) = default;
};

// One node of the pool (CON-1: the observe layer keeps only the nodes matching spec.nodeSelector; see
// pool_selector.h).
struct PoolNode {
  std::string name;
  std::int64_t gpu_capacity = 0;  // status.allocatable["nvidia.com/gpu"], whole GPUs (CON-2)
  std::int64_t cpu_millis = 0;    // status.allocatable.cpu, millicores (CON-6a)
  std::int64_t memory_bytes = 0;  // status.allocatable.memory, bytes (CON-6a)
  Labels labels;
  std::vector<Taint> taints;  // every taint, the consolidation taint included
  bool ready = false;         // condition Ready=True (CON-5)
  bool unschedulable = false;  // spec.unschedulable (CON-5)
  // Value of the node's `rightsizing.kubex.ai/consolidating` taint: the policy draining it; "" = no such taint
  // (CON-5, CON-7, CON-9).
  std::string consolidating_policy;
};

// One counted pod (CON-2: spec.nodeName on a pool node, phase Pending or Running, namespace other than
// GlobalConfiguration spec.kai.reservationNamespace). Pods without a GPU are counted too: their CPU and
// memory requests take room on their node (CON-6a); they are never moved.
struct PoolPod {
  std::string ns, name, node;
  std::string gpu_group;  // label `runai-gpu-group` ("" = none) (CON-3)
  // GPU allocation (CON-2): the `gpu-fraction` annotation in hundredths (1..99) when the pod has one, else 0;
  // whole_gpus is nvidia.com/gpu of its containers (limits, else requests), 0 when it has a fraction.
  Hundredths fraction = 0;
  std::int64_t whole_gpus = 0;
  // Requests as the kube-scheduler counts them (requests.h: containers plus init-container maximum).
  std::int64_t cpu_millis = 0, memory_bytes = 0;
  Labels node_selector;                            // spec.nodeSelector (CON-6a)
  std::vector<NodeSelectorTerm> required_affinity;  // requiredDuringScheduling… nodeSelectorTerms, ORed; empty = none
  std::vector<Toleration> tolerations;             // spec.tolerations (CON-6a)
  // Why the pod may not be moved ("" = movable): unmovable_reason() of movability.h (CON-4, CON-6a).
  std::string unmovable;
  // metadata.deletionTimestamp is set: the pod is leaving (a drain's eviction, a rollout). Whatever `unmovable`
  // names first (a PDB the same eviction spent comes before it), a leaving pod is not placed again (CON-7a).
  bool leaving = false;
  // CON-5b: KAI 0.18's compute mode of a fraction, "" (time-slicing, the default) or "sm-sharing" (gpu_device.h).
  std::string compute_mode;

  bool has_gpu() const { return fraction > 0 || whole_gpus > 0; }
  Hundredths gpu() const { return fraction > 0 ? fraction : from_whole(whole_gpus); }  // allocation (CON-2)
  std::string key() const { return ns + "/" + name; }
};

// One pool snapshot. Pods on nodes that are not in `nodes` are ignored.
struct Pool {
  std::vector<PoolNode> nodes;
  std::vector<PoolPod> pods;
};

}  // namespace kubex::decide::packing
