// The parts of the simulated cluster (workload controllers, schedulers, kubelet, GPU model) share one
// lifecycle: constructed with the ClusterContext (registering their feed handlers), started after the
// cluster's nodes and CRDs exist, stopped before the API server.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "sim/cluster/model.h"

namespace kubex::sim::cluster {

class ClusterContext;

class Subsystem {
 public:
  virtual ~Subsystem() = default;
  virtual void start() = 0;
  virtual void stop() = 0;
};

// Decides when a running container crashes for GPU reasons (CUDA out of memory). Implemented by the GPU
// usage model (src/sim/gpu); consulted by the kubelet emulation.
class GpuHealth {
 public:
  virtual ~GpuHealth() = default;
  // The message of the crash (e.g. "CUDA out of memory: 9000 MiB working set exceeds the 8192 MiB
  // allocation"), or nullopt while the container is fine.
  virtual std::optional<std::string> crash_reason(const SimPod& pod, const SimContainer& container,
                                                  common::TimePoint now) const = 0;
};

// Factories (one per part; each lives in its own .cpp).
std::vector<std::unique_ptr<Subsystem>> make_workload_controllers(ClusterContext& ctx);
std::unique_ptr<Subsystem> make_default_scheduler(ClusterContext& ctx);
std::unique_ptr<Subsystem> make_kai_scheduler(ClusterContext& ctx);
std::unique_ptr<Subsystem> make_kubelet(ClusterContext& ctx, const GpuHealth* gpu);

}  // namespace kubex::sim::cluster
