// SIM-5: the GPU models kubex-sim knows, their memory and driver reserve, and the usable memory the GPU
// model's CUDA out-of-memory decisions use (the memory less the driver reserve).
#include "sim/gpu/gpu_catalog.h"

#include <gtest/gtest.h>

#include <map>

#include "sim/gpu/usage_core.h"
#include "test_pods.h"

using namespace kubex;
using namespace kubex::sim;
using namespace kubex::sim::gpu;
using namespace kubex::sim::gpu::testing;
using namespace std::chrono_literals;

// SIM-5
TEST(GpuCatalog, KnowsTheMemoryOfEveryModelTheSpecNames) {
  const std::map<std::string, std::int64_t> spec = {
      {"T4", 15360},      {"L4", 23034},        {"A10", 23028},       {"P100", 16384}, {"V100M16", 16384},
      {"V100M32", 32768}, {"A100-40GB", 40960}, {"A100-80GB", 81920}, {"H100", 81559}, {"H200", 143771}};
  ASSERT_EQ(known_gpus().size(), spec.size());
  for (const auto& [name, memory] : spec) {
    const KnownGpu* g = find_known_gpu(name);
    ASSERT_NE(g, nullptr) << name;
    EXPECT_EQ(g->memory_mib, memory) << name;
  }
  EXPECT_EQ(known_gpu_names(), "T4, L4, A10, P100, V100M16, V100M32, A100-40GB, A100-80GB, H100, H200");
}

// SIM-5: pools may name a model as GPU Feature Discovery's nvidia.com/gpu.product does.
TEST(GpuCatalog, GfdProductNamesMeanTheirModelAndOtherNamesAreUnknown) {
  ASSERT_NE(find_known_gpu("Tesla-T4"), nullptr);
  EXPECT_EQ(find_known_gpu("Tesla-T4")->name, "T4");
  EXPECT_EQ(find_known_gpu("NVIDIA-L4")->name, "L4");
  EXPECT_EQ(find_known_gpu("NVIDIA-A100-SXM4-80GB")->name, "A100-80GB");
  EXPECT_EQ(find_known_gpu("G2"), nullptr) << "the trace's undisclosed models have no known memory";
  EXPECT_EQ(find_known_gpu("t4"), nullptr) << "names are case-sensitive, like label values";
  EXPECT_EQ(find_known_gpu(""), nullptr);
}

// SIM-5, CON-2a: the default reserve is max(3 % of the memory, 256 MiB), rounded up to a whole MiB.
TEST(GpuCatalog, DefaultDriverReserveIsThreePercentAndAtLeast256MiB) {
  EXPECT_EQ(default_driver_reserve_mib(15360), 461);    // T4: 460.8
  EXPECT_EQ(default_driver_reserve_mib(16384), 492);    // 491.52
  EXPECT_EQ(default_driver_reserve_mib(81920), 2458);   // 2457.6
  EXPECT_EQ(default_driver_reserve_mib(143771), 4314);  // 4313.13
  EXPECT_EQ(default_driver_reserve_mib(4096), 256);     // 3 % is 122.88: the minimum wins
  EXPECT_EQ(default_driver_reserve_mib(0), 0);
  EXPECT_EQ(default_driver_reserve_mib(-5), 0);
}

// SIM-5: a whole-GPU container runs out of memory at its GPUs' memory less the driver reserve.
TEST(GpuCatalog, WholeGpuContainersCrashAtTheMemoryLessTheDriverReserve) {
  GpuContainer one{0, AllocationType::kWhole, 0, 1};
  EXPECT_FALSE(allocation_crash(one, 15892, 16384, MemoryIsolation::kNone, 492));
  auto r = allocation_crash(one, 15893, 16384, MemoryIsolation::kNone, 492);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(
      *r,
      "CUDA out of memory: 15893 MiB working set exceeds the 15892 MiB of its 1 GPU (16384 MiB each less the "
      "driver's 492 MiB)");
  GpuContainer two{0, AllocationType::kWhole, 0, 2};
  EXPECT_FALSE(allocation_crash(two, 2 * 15892, 16384, MemoryIsolation::kNone, 492));
  EXPECT_TRUE(allocation_crash(two, 2 * 15892 + 1, 16384, MemoryIsolation::kNone, 492));
  // HAMi-core holds a fraction to fraction × the device's memory, reserve or not.
  GpuContainer half{0, AllocationType::kFraction, 0.5, 0};
  EXPECT_FALSE(allocation_crash(half, 8192, 16384, MemoryIsolation::kHamiCore, 492));
}

// SIM-5: the GPUs of one device over-commit when their working sets pass the usable memory.
TEST(GpuCatalog, OvercommitIsMeasuredAgainstTheUsableMemory) {
  auto node = std::make_shared<cluster::SimNode>(*gpu_node("n1"));
  node->gpu_driver_reserve_mib = 492;  // 16384 - 492 = 15892 usable
  std::vector<std::shared_ptr<const cluster::SimNode>> nodes = {node};
  auto older = fraction_spec("older", 0.5, "g1", {{"sim.kubex.ai/gpu-memory-mib", "8000"}});
  auto newer = fraction_spec("newer", 0.5, "g1", {{"sim.kubex.ai/gpu-memory-mib", "8000"}});
  newer.started = kT0 + 10s;
  PatternCache cache;
  auto eval = [&](const PodSpec& a, const PodSpec& b) {
    std::vector<std::shared_ptr<const cluster::SimPod>> pods = {shared(reservation("g1", "0")),
                                                                shared(make_pod(a)), shared(make_pod(b))};
    return evaluate(pods, nodes, MemoryIsolation::kNone, kT0 + 1min, cache);
  };
  // 16000 MiB fits the 16384 MiB device but not the 15892 MiB the driver leaves.
  auto ev = eval(older, newer);
  ASSERT_EQ(ev.crashes.size(), 1u);
  const std::string& reason = ev.crashes.begin()->second;
  EXPECT_NE(reason.find("16000 MiB of 15892 MiB usable (16384 MiB less the driver's 492 MiB)"),
            std::string::npos)
      << reason;
  EXPECT_NE(reason.find("pod newer is the newest"), std::string::npos) << reason;
  newer.annotations["sim.kubex.ai/gpu-memory-mib"] = "7892";
  EXPECT_TRUE(eval(older, newer).crashes.empty()) << "15892 MiB fits exactly";
}
