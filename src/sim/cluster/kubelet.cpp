// Placeholder until the kubelet emulation lands.
#include "sim/cluster/subsystem.h"

namespace kubex::sim::cluster {
namespace {
struct Idle : Subsystem {
  void start() override {}
  void stop() override {}
};
}  // namespace

std::unique_ptr<Subsystem> make_kubelet(ClusterContext&, const GpuHealth*) { return std::make_unique<Idle>(); }

}  // namespace kubex::sim::cluster
