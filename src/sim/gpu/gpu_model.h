// The simulated GPUs: per-container demand from pod annotations (sim.kubex.ai/*), SM contention on shared
// GPUs, memory footprints, CUDA out-of-memory crashes (HAMi-core isolation or physical overflow), and a
// Prometheus exporter with the metric names, labels and semantics of Kubex's gpu-process-exporter.
// The rules live in the pure core (usage_core.h, usage_pattern.h); this class adds the sampler thread, the
// SM counters, Warning events for bad annotations and the HTTP endpoint. User docs: docs/gpu-model.md.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "sim/cluster/subsystem.h"
#include "sim/gpu/sample.h"

namespace kubex::sim::cluster {
class ClusterContext;
}

namespace kubex::sim::gpu {

class GpuModel : public cluster::GpuPart {
 public:
  explicit GpuModel(cluster::ClusterContext& ctx);
  ~GpuModel() override;
  // Serves GET /metrics and GET /healthz on HOST:PORT (port 0 picks one); returns the bound port. Call
  // before start(); stop() ends it.
  common::Result<int> listen(const std::string& host_port) override;
  void start() override;  // samples every ClusterConfig::gpu_sample_interval (steady cadence, own thread)
  void stop() override;
  std::optional<std::string> crash_reason(const cluster::SimPod& pod, const cluster::SimContainer& container,
                                          common::TimePoint now) const override;
  // Recomputes the samples for `now` (the sampler calls this; tests may call it with a fake clock).
  void sample(common::TimePoint now);
  std::vector<Sample> samples() const;
  // Prometheus text exposition of the current samples.
  std::string render_metrics() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The factory the cluster takes (cluster::GpuPartFactory).
std::unique_ptr<cluster::GpuPart> make_gpu_model(cluster::ClusterContext& ctx);

}  // namespace kubex::sim::gpu
