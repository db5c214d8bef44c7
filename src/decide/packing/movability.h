// Which counted GPU pods a consolidation may move (CON-4, CON-6a). observe/gpu_inventory gathers the facts of
// each pod; unmovable_reason() turns them into PoolPod::unmovable.
#pragma once

#include <string>

namespace kubex::decide::packing {

struct MovabilityFacts {
  std::string controller_kind;  // kind of the ownerReference with controller: true; "" = no controller owner
  bool num_devices = false;     // annotation `gpu-fraction-num-devices` present
  bool do_not_disrupt = false;  // `rightsizing.kubex.ai/do-not-disrupt` or `karpenter.sh/do-not-disrupt` is "true"
  bool pdb_blocked = false;     // a PDB whose selector matches the pod has status.disruptionsAllowed == 0
  bool terminating = false;     // metadata.deletionTimestamp is set
  bool inter_pod_affinity = false;  // required pod affinity or pod anti-affinity (CON-6a)
  bool hard_topology_spread = false;  // a topologySpreadConstraints entry with whenUnsatisfiable DoNotSchedule
};

// "" when movable; else the first reason in the order of the fields above:
// "no controller owner", "owned by a DaemonSet", "gpu-fraction-num-devices", "do-not-disrupt",
// "PDB allows no disruption", "terminating", "required inter-pod affinity", "topology spread DoNotSchedule".
std::string unmovable_reason(const MovabilityFacts& facts);

// CON-12: the `blocker` label of an unmovable_reason(): "owner", "daemonset", "gpu" (multi-device fractions),
// "do-not-disrupt", "pdb", "topology"; "none" for a terminating pod (it is leaving by itself).
std::string unmovable_blocker(const std::string& reason);

}  // namespace kubex::decide::packing
