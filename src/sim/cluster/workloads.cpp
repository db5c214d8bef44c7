// Placeholder until the workload controllers land: no controllers.
#include "sim/cluster/subsystem.h"

namespace kubex::sim::cluster {

std::vector<std::unique_ptr<Subsystem>> make_workload_controllers(ClusterContext&) { return {}; }

}  // namespace kubex::sim::cluster
