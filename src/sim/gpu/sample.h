// One exported series of the GPU model: a container on one physical GPU.
#pragma once

#include <cstdint>
#include <string>

namespace kubex::sim::gpu {

struct Sample {
  std::string ns, pod, container, node, gpu_uuid;
  std::string allocation_type;          // "fraction" (KAI gpu-fraction) or "whole" (nvidia.com/gpu)
  double sm_percent = 0;                // percent of one whole GPU, after contention
  double memory_footprint_percent = 0;  // of the allocation (fraction pods) or of the device (whole GPUs)
  std::int64_t memory_bytes = 0;
  double sm_percent_seconds_total = 0;  // counter: integral of sm_percent over time
  // Added to the agreed interface:
  std::string gpu_model;                // the device's product name (label gpu_model, as the real exporter)
  std::int64_t memory_total_bytes = 0;  // the footprint's denominator: the allocation on this device
  std::string pod_uid;                  // identity of the counter (not exported)
  int restart_count = 0;                // a restarted container starts a new counter (not exported)
};

}  // namespace kubex::sim::gpu
