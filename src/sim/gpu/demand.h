// Which containers of a pod use GPUs, and what they demand according to the sim.kubex.ai/gpu-* annotations.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/result.h"
#include "sim/cluster/model.h"
#include "sim/gpu/usage_pattern.h"

namespace kubex::sim::gpu {

// Percent of ONE whole GPU the GPU container would use (before contention).
inline constexpr const char* kSmPercentAnnotation = "sim.kubex.ai/gpu-sm-percent";
// The GPU container's GPU memory working set in MiB.
inline constexpr const char* kMemoryMibAnnotation = "sim.kubex.ai/gpu-memory-mib";

enum class AllocationType { kFraction, kWhole };
// The gpu_allocation_type label value: "fraction" or "whole".
const char* allocation_type_label(AllocationType t);

// A container that holds a GPU allocation.
struct GpuContainer {
  std::size_t index = 0;  // into SimPod::containers
  AllocationType type = AllocationType::kWhole;
  double fraction = 0;    // kFraction: the pod's gpu-fraction (the request)
  std::int64_t gpus = 0;  // kWhole: its nvidia.com/gpu count
  double limit = 0;       // kFraction: a valid gpu-fraction.limit (KAI 0.18 burst limit), 0 = none
};

// Containers with whole nvidia.com/gpu, or the fraction container of a gpu-fraction pod (named by
// gpu-fraction-container-name, else the first regular container), in pod order.
std::vector<GpuContainer> gpu_containers(const cluster::SimPod& pod);

// The annotation that sets `base` for `container`: "<base>.<container>" wins over "<base>". Null when absent.
const std::pair<const std::string, std::string>* demand_annotation(const cluster::SimPod& pod,
                                                                   std::string_view base,
                                                                   const std::string& container);

// Per-container annotation keys ("<base>.<name>") whose <name> is not one of the pod's GPU containers.
std::vector<std::string> stray_container_keys(const cluster::SimPod& pod, std::string_view base,
                                              const std::vector<GpuContainer>& gpu);

// Parsed annotation values, shared by every pod that uses the same text. Thread-safe.
class PatternCache {
 public:
  using Entry = std::shared_ptr<const common::Result<UsagePattern>>;
  Entry get(const std::string& text);

 private:
  std::mutex mu_;
  std::unordered_map<std::string, Entry> by_text_;
};

}  // namespace kubex::sim::gpu
