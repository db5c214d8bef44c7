// The GPU models kubex-sim knows (SIM-5): each model's memory as GPU Feature Discovery reports it in the
// `nvidia.com/gpu.memory` label, and its driver reserve. Pool files and traces name a model by its short name
// (`T4`, `A100-80GB`, as the Alibaba trace does) or by the product name GFD puts in `nvidia.com/gpu.product`
// (`Tesla-T4`, `NVIDIA-A100-SXM4-80GB`). Pure data: no dependencies beyond the standard library.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace kubex::sim::gpu {

struct KnownGpu {
  std::string_view name;                       // the short name: "T4"
  std::int64_t memory_mib;                     // per GPU, as GFD's nvidia.com/gpu.memory
  std::span<const std::string_view> products;  // GFD product names that mean this model
};

// Every known model, in the order of the table in docs/gpu-model.md.
std::span<const KnownGpu> known_gpus();

// The model named `name` (a short name or one of its GFD product names, exact and case-sensitive), or null.
const KnownGpu* find_known_gpu(std::string_view name);

// "T4, L4, A10, ..." for error messages.
std::string known_gpu_names();

// The memory a driver keeps on every GPU by default: max(3 % of the memory, 256 MiB), rounded up to a whole
// MiB (the SPEC's CON-2a default reserve). 0 for an unknown memory (<= 0).
std::int64_t default_driver_reserve_mib(std::int64_t memory_mib);

}  // namespace kubex::sim::gpu
