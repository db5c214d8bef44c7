// The simulated GPUs: per-container demand from pod annotations (sim.kubex.ai/*), SM contention on shared
// GPUs, memory footprints, CUDA out-of-memory crashes (HAMi-core isolation or physical overflow), and a
// Prometheus exporter with the metric names, labels and semantics of Kubex's gpu-process-exporter.
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

namespace kubex::sim::cluster {
class ClusterContext;
}

namespace kubex::sim::gpu {

// One exported series: a container on one physical GPU.
struct Sample {
  std::string ns, pod, container, node, gpu_uuid;
  std::string allocation_type;  // "fraction" (KAI gpu-fraction) or "whole" (nvidia.com/gpu)
  double sm_percent = 0;        // percent of one whole GPU, after contention
  double memory_footprint_percent = 0;  // of the allocation (fraction pods) or of the device (whole GPUs)
  std::int64_t memory_bytes = 0;
  double sm_percent_seconds_total = 0;  // counter: integral of sm_percent over time
};

class GpuModel : public cluster::Subsystem, public cluster::GpuHealth {
 public:
  explicit GpuModel(cluster::ClusterContext& ctx);
  ~GpuModel() override;
  // Serves GET /metrics on HOST:PORT (port 0 picks one); returns the bound port. Call before start().
  common::Result<int> listen(const std::string& host_port);
  void start() override;  // samples every ClusterConfig::gpu_sample_interval
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

}  // namespace kubex::sim::gpu
