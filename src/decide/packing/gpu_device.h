// What one GPU device may still take, beyond its share (SPEC CON-2a, CON-5a, CON-5b): the cap from its memory and
// the driver reserve, its model, and the compute mode of the fractions on it. Consolidation (CON-6) and the
// upsize check of actuation (ACT-2a) read the same rules from here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "decide/gpu_value.h"
#include "decide/packing/model.h"

namespace kubex::api {
struct GlobalConfigSpec;
}

namespace kubex::decide::packing {

// CON-2a: GlobalConfiguration spec.consolidation.gpuMemoryReserve. Both 0 disables the reserve.
struct MemoryReserve {
  std::int32_t percent = 3;
  std::int64_t minimum_mib = 256;
  friend bool operator==(const MemoryReserve&, const MemoryReserve&) = default;
};
// The reserve a GlobalConfiguration asks for (its minimum rounded up to a whole MiB).
MemoryReserve memory_reserve(const api::GlobalConfigSpec& global);

// The node's `nvidia.com/gpu.product` label ("" when it has none).
std::string gpu_product(const PoolNode& node);
// The node's `nvidia.com/gpu.memory` label in MiB; 0 when absent or not a positive whole number.
std::int64_t gpu_memory_mib(const PoolNode& node);

// The reserve r of CON-2a in whole MiB, rounded up: max(M × percent / 100, minimum). 0 when M is 0 (unknown).
std::int64_t reserve_mib(std::int64_t memory_mib, const MemoryReserve& reserve);
// CON-2a: the share of one GPU of `memory_mib` MiB that may be filled, floor((M − r) / M × 100) hundredths
// (a T4, 15360 MiB, reserve 3 % / 256 MiB: r = 461 MiB, cap 96). 100 when M is 0 (unknown); never below 0.
Hundredths gpu_cap(std::int64_t memory_mib, const MemoryReserve& reserve);
inline Hundredths gpu_cap(const PoolNode& node, const MemoryReserve& reserve) {
  return gpu_cap(gpu_memory_mib(node), reserve);
}

// CON-5b: the compute modes of KAI 0.18. A pod's mode comes from `kai.scheduler/gpu-compute-sharing-mode` or
// `nvidia.com/container.<c>.gpu-compute.mode`; absent means time-slicing.
inline constexpr const char* kTimeSlicing = "time-slicing";
inline constexpr const char* kSmSharing = "sm-sharing";
// What a GPU's fractions run as: "" while it holds no fraction, the one mode of all of them, or kMixedModes
// when it already holds several (it then takes no more fractions).
inline constexpr const char* kMixedModes = "mixed";
// The mode of a pod as written ("" = time-slicing).
inline std::string_view compute_mode(const PoolPod& pod) {
  return pod.compute_mode.empty() ? std::string_view(kTimeSlicing) : std::string_view(pod.compute_mode);
}
// CON-5b: may a fraction of `mode` join a GPU whose fractions run as `gpu_mode`?
inline bool mode_fits(std::string_view gpu_mode, std::string_view mode) {
  return gpu_mode.empty() || gpu_mode == mode;
}
// The GPU's mode after a fraction of `mode` joins it.
inline std::string joined_mode(std::string_view gpu_mode, std::string_view mode) {
  if (gpu_mode.empty() || gpu_mode == mode) return std::string(mode);
  return kMixedModes;
}

}  // namespace kubex::decide::packing
