#include "sim/gpu/gpu_catalog.h"

#include <algorithm>
#include <array>

namespace kubex::sim::gpu {

namespace {

using namespace std::string_view_literals;

// GFD's nvidia.com/gpu.product is NVML's device name with spaces replaced by '-'.
constexpr std::array kT4 = {"Tesla-T4"sv};
constexpr std::array kL4 = {"NVIDIA-L4"sv};
constexpr std::array kA10 = {"NVIDIA-A10"sv};
constexpr std::array kP100 = {"Tesla-P100-PCIE-16GB"sv, "Tesla-P100-SXM2-16GB"sv};
constexpr std::array kV100M16 = {"Tesla-V100-SXM2-16GB"sv, "Tesla-V100-PCIE-16GB"sv};
constexpr std::array kV100M32 = {"Tesla-V100-SXM2-32GB"sv, "Tesla-V100-PCIE-32GB"sv};
constexpr std::array kA100_40 = {"NVIDIA-A100-SXM4-40GB"sv, "NVIDIA-A100-PCIE-40GB"sv};
constexpr std::array kA100_80 = {"NVIDIA-A100-SXM4-80GB"sv, "NVIDIA-A100-80GB-PCIe"sv};
constexpr std::array kH100 = {"NVIDIA-H100-80GB-HBM3"sv, "NVIDIA-H100-PCIe"sv};
constexpr std::array kH200 = {"NVIDIA-H200"sv};

// SIM-5: the memory of each model (MiB per GPU).
const std::array<KnownGpu, 10> kKnown = {{
    {"T4", 15360, kT4},
    {"L4", 23034, kL4},
    {"A10", 23028, kA10},
    {"P100", 16384, kP100},
    {"V100M16", 16384, kV100M16},
    {"V100M32", 32768, kV100M32},
    {"A100-40GB", 40960, kA100_40},
    {"A100-80GB", 81920, kA100_80},
    {"H100", 81559, kH100},
    {"H200", 143771, kH200},
}};

}  // namespace

std::span<const KnownGpu> known_gpus() {
  return kKnown;
}

const KnownGpu* find_known_gpu(std::string_view name) {
  for (const KnownGpu& g : kKnown) {
    if (g.name == name || std::find(g.products.begin(), g.products.end(), name) != g.products.end())
      return &g;
  }
  return nullptr;
}

std::string known_gpu_names() {
  std::string out;
  for (const KnownGpu& g : kKnown) {
    if (!out.empty()) out += ", ";
    out += g.name;
  }
  return out;
}

std::int64_t default_driver_reserve_mib(std::int64_t memory_mib) {
  if (memory_mib <= 0) return 0;
  std::int64_t percent = (memory_mib * 3 + 99) / 100;  // ceil(3 %)
  return std::max<std::int64_t>(percent, 256);
}

}  // namespace kubex::sim::gpu
