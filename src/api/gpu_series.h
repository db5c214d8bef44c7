// The per-container GPU series (docs/gpu-model.md, TEL-3) that kubex-sim's exporter and `kubex gpu-exporter` both
// serve: one struct, one footprint rule and one text rendering, so the same policy YAML reads either.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kubex::api {

inline constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

// One container on one physical GPU.
struct GpuContainerSample {
  std::string ns, pod, container, node, gpu_uuid;
  std::string gpu_model;                // the device's product name (label gpu_model)
  std::string allocation_type;          // "fraction" (KAI gpu-fraction) or "whole" (nvidia.com/gpu)
  double sm_percent = 0;                // percent of one whole GPU, summed over the container's processes
  double memory_footprint_percent = 0;  // memory_bytes / memory_total_bytes × 100 (gpu_footprint_percent)
  std::int64_t memory_bytes = 0;
  std::int64_t memory_total_bytes = 0;  // the footprint's denominator: the allocation on this device
  double sm_percent_seconds_total = 0;  // counter: integral of sm_percent over time
  std::string pod_uid;                  // identity of the counter (not exported)
  int restart_count = 0;                // a restarted container starts a new counter (not exported)
};

// TEL-3: the allocation a footprint is relative to: gpu-fraction × device memory for a KAI fraction pod
// (allocation_type "fraction"), one whole device for a whole-GPU pod ("whole"), rounded down to a byte.
std::int64_t gpu_allocation_bytes(std::string_view allocation_type, double gpu_fraction, std::int64_t device_bytes);
// memory / allocation × 100; 0 when the allocation is 0.
double gpu_footprint_percent(std::int64_t memory_bytes, std::int64_t allocation_bytes);

// Text exposition format 0.0.4: every kubex_gpu_container_* family with HELP and TYPE lines (also when there are
// no samples), one series per sample in the order given, labels namespace, pod, container, node, gpu_uuid,
// gpu_model, gpu_allocation_type.
std::string render_gpu_series(const std::vector<GpuContainerSample>& samples);

// Escapes a label value (backslash, double quote, newline) for the text format.
std::string escape_label_value(std::string_view v);

}  // namespace kubex::api
