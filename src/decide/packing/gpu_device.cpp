// CON-2a caps and the GPU Feature Discovery labels they read.
#include "decide/packing/gpu_device.h"

#include <algorithm>
#include <charconv>

#include "api/objects.h"

namespace kubex::decide::packing {

namespace {

constexpr const char* kProductLabel = "nvidia.com/gpu.product";
constexpr const char* kMemoryLabel = "nvidia.com/gpu.memory";
constexpr std::int64_t kMaxMib = 1LL << 40;  // far above any device; keeps the arithmetic in range

}  // namespace

std::string gpu_product(const PoolNode& node) {
  auto it = node.labels.find(kProductLabel);
  return it == node.labels.end() ? std::string() : it->second;
}

std::int64_t gpu_memory_mib(const PoolNode& node) {
  auto it = node.labels.find(kMemoryLabel);
  if (it == node.labels.end() || it->second.empty()) return 0;
  std::int64_t v = 0;
  const std::string& s = it->second;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v <= 0 || v > kMaxMib) return 0;
  return v;
}

MemoryReserve memory_reserve(const api::GlobalConfigSpec& global) {
  constexpr std::int64_t kMib = 1024 * 1024;
  const std::int64_t bytes = std::max<std::int64_t>(0, global.gpu_memory_reserve_minimum_bytes);
  return {global.gpu_memory_reserve_percent, bytes / kMib + (bytes % kMib != 0 ? 1 : 0)};
}

std::int64_t reserve_mib(std::int64_t m, const MemoryReserve& reserve) {
  if (m <= 0) return 0;
  const std::int64_t pct = std::max<std::int64_t>(0, reserve.percent);
  const std::int64_t by_percent = (m * pct + 99) / 100;  // rounded up to a whole MiB
  return std::max(by_percent, std::max<std::int64_t>(0, reserve.minimum_mib));
}

Hundredths gpu_cap(std::int64_t m, const MemoryReserve& reserve) {
  if (m <= 0) return kOneGpu;
  const std::int64_t r = reserve_mib(m, reserve);
  if (r >= m) return 0;
  return (m - r) * kOneGpu / m;  // floor
}

}  // namespace kubex::decide::packing
