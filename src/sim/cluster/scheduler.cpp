// Placeholder until the schedulers land.
#include "sim/cluster/subsystem.h"

namespace kubex::sim::cluster {
namespace {
struct Idle : Subsystem {
  void start() override {}
  void stop() override {}
};
}  // namespace

std::unique_ptr<Subsystem> make_default_scheduler(ClusterContext&) { return std::make_unique<Idle>(); }
std::unique_ptr<Subsystem> make_kai_scheduler(ClusterContext&) { return std::make_unique<Idle>(); }

}  // namespace kubex::sim::cluster
