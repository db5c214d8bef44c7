#include "decide/packing/movability.h"

namespace kubex::decide::packing {

std::string unmovable_reason(const MovabilityFacts& f) {
  if (f.controller_kind.empty()) return "no controller owner";
  if (f.controller_kind == "DaemonSet") return "owned by a DaemonSet";
  if (f.num_devices) return "gpu-fraction-num-devices";
  if (f.do_not_disrupt) return "do-not-disrupt";
  if (f.pdb_blocked) return "PDB allows no disruption";
  if (f.terminating) return "terminating";
  if (f.inter_pod_affinity) return "required inter-pod affinity";
  if (f.hard_topology_spread) return "topology spread DoNotSchedule";
  return "";
}

std::string unmovable_blocker(const std::string& reason) {
  if (reason == "no controller owner") return "owner";
  if (reason == "owned by a DaemonSet") return "daemonset";
  if (reason == "gpu-fraction-num-devices") return "gpu";
  if (reason == "do-not-disrupt") return "do-not-disrupt";
  if (reason == "PDB allows no disruption") return "pdb";
  if (reason == "required inter-pod affinity" || reason == "topology spread DoNotSchedule") return "topology";
  return "none";
}

}  // namespace kubex::decide::packing
