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

}  // namespace kubex::decide::packing
