// The parts of the simulated cluster (workload controllers, schedulers, kubelet, GPU model) share one
// lifecycle: constructed with the ClusterContext (registering their feed handlers), started after the
// cluster's nodes and CRDs exist, stopped before the API server.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "sim/cluster/model.h"

namespace kubex::sim::cluster {

class ClusterContext;

class Subsystem {
 public:
  virtual ~Subsystem() = default;
  virtual void start() = 0;
  virtual void stop() = 0;
  // Nothing to do right now (work scheduled for later does not count). Tests wait for it, with a deadline,
  // before asserting that something did not happen.
  virtual bool idle() const { return true; }
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

// The GPU usage model with its metrics endpoint (src/sim/gpu implements it). The cluster runs the part it
// is given and never includes sim/gpu, so the dependency points one way: gpu -> cluster.
class GpuPart : public Subsystem, public GpuHealth {
 public:
  // Serves the metrics on HOST:PORT (port 0 picks one); returns the bound port. Called before start().
  virtual common::Result<int> listen(const std::string& host_port) = 0;
};
using GpuPartFactory = std::function<std::unique_ptr<GpuPart>(ClusterContext& ctx)>;

// Factories (one per part; each lives in its own .cpp).
std::vector<std::unique_ptr<Subsystem>> make_workload_controllers(ClusterContext& ctx);
std::unique_ptr<Subsystem> make_default_scheduler(ClusterContext& ctx);
std::unique_ptr<Subsystem> make_kai_scheduler(ClusterContext& ctx);
std::unique_ptr<Subsystem> make_kubelet(ClusterContext& ctx, const GpuHealth* gpu);

}  // namespace kubex::sim::cluster
