// SIM-4 in the GPU model: under KAI 0.18 NvFractions a fraction may burst to its gpu-fraction.limit (without
// one, to its request), and a contended GPU reclaims memory above the requests first, largest excess first,
// before the overflow rule (newest first) applies. Other modes and 0.17 keep today's rules.
#include <gtest/gtest.h>

#include "sim/gpu/usage_core.h"
#include "test_pods.h"

using namespace kubex;
using namespace kubex::sim;
using namespace kubex::sim::gpu;
using namespace kubex::sim::gpu::testing;
using namespace std::chrono_literals;

namespace {

constexpr const char* kMem = "sim.kubex.ai/gpu-memory-mib";
constexpr double kMiB = 1024.0 * 1024.0;

Evaluation run(const std::vector<cluster::SimPod>& pods, MemoryIsolation iso) {
  static PatternCache cache;
  std::vector<std::shared_ptr<const cluster::SimPod>> ptrs;
  for (const auto& p : pods) ptrs.push_back(std::make_shared<const cluster::SimPod>(p));
  return evaluate(ptrs, {gpu_node("n1")}, iso, kT0 + 1min, cache);
}

Tenant tenant(const std::string& pod, double working_set, double request, common::TimePoint started = kT0) {
  Tenant t{started, pod, 0, working_set};
  t.request_mib = request;
  return t;
}

}  // namespace

TEST(KaiMemory, IsolationOfVersionAndMode) {
  using cluster::GpuSharingMode;
  using cluster::KaiVersion;
  struct Case {
    KaiVersion version;
    GpuSharingMode mode;
    MemoryIsolation isolation;
  };
  std::vector<Case> cases = {
      {KaiVersion::k0_18, GpuSharingMode::kNvFractions, MemoryIsolation::kNvFractions},
      {KaiVersion::k0_18, GpuSharingMode::kHamiCore, MemoryIsolation::kHamiCore},
      {KaiVersion::k0_17, GpuSharingMode::kHamiCore, MemoryIsolation::kHamiCore},
      {KaiVersion::k0_18, GpuSharingMode::kNonMemoryEnforced, MemoryIsolation::kNone},
      {KaiVersion::k0_17, GpuSharingMode::kNonMemoryEnforced, MemoryIsolation::kNone},
      {KaiVersion::k0_18, GpuSharingMode::kDisabled, MemoryIsolation::kNone},
      {KaiVersion::k0_17, GpuSharingMode::kNvFractions, MemoryIsolation::kNone},  // refused by the config
  };
  for (const auto& c : cases) {
    EXPECT_EQ(isolation_for({c.version, c.mode}), c.isolation)
        << cluster::kai_version_name(c.version) << " " << cluster::gpu_sharing_mode_name(c.mode);
  }
}

TEST(KaiMemory, FractionContainersCarryAValidLimitOnly) {
  struct Case {
    const char* limit;
    double want;
  };
  for (const Case& c : std::vector<Case>{{"0.63", 0.63}, {"1", 1}, {"0.3", 0}, {"0.2", 0}, {"1.2", 0}, {"x", 0}}) {
    auto pod = make_pod(fraction_spec("f", 0.3, "g", {{"gpu-fraction.limit", c.limit}}));
    auto g = gpu_containers(pod);
    ASSERT_EQ(g.size(), 1u);
    EXPECT_DOUBLE_EQ(g[0].limit, c.want) << c.limit;
    EXPECT_DOUBLE_EQ(g[0].fraction, 0.3) << "the request stays the fraction";
  }
}

TEST(KaiMemory, NvFractionsCapsAtTheLimitElseTheRequest) {
  GpuContainer limited{0, AllocationType::kFraction, 0.3, 0, 0.63};  // cap 10321.92 MiB of 16384
  GpuContainer plain{0, AllocationType::kFraction, 0.5, 0};           // cap 8192 MiB
  struct Case {
    const char* name;
    GpuContainer g;
    double working_set;
    MemoryIsolation iso;
    std::string crash;  // "" = none; else the whole message
  };
  std::vector<Case> cases = {
      {"above the request, under the limit", limited, 9000, MemoryIsolation::kNvFractions, ""},
      {"at the limit", limited, 0.63 * 16384, MemoryIsolation::kNvFractions, ""},
      {"above the limit", limited, 10400, MemoryIsolation::kNvFractions,
       "CUDA out of memory: 10400 MiB working set exceeds the 10321.9 MiB limit (gpu-fraction.limit 0.63 of a "
       "16384 MiB GPU, NvFractions)"},
      {"no limit: the request is the cap", plain, 9000, MemoryIsolation::kNvFractions,
       "CUDA out of memory: 9000 MiB working set exceeds the 8192 MiB allocation (gpu-fraction 0.5 of a 16384 MiB "
       "GPU, NvFractions without a gpu-fraction.limit)"},
      {"no limit, within the request", plain, 8192, MemoryIsolation::kNvFractions, ""},
      {"HAMi-core ignores the limit", limited, 9000, MemoryIsolation::kHamiCore,
       "CUDA out of memory: 9000 MiB working set exceeds the 4915.2 MiB allocation (gpu-fraction 0.3 of a 16384 MiB "
       "GPU, HAMi-core memory isolation)"},
      {"NonMemoryEnforced never caps", limited, 16000, MemoryIsolation::kNone, ""},
  };
  for (const auto& c : cases) {
    auto r = allocation_crash(c.g, c.working_set, 16384, c.iso, 492);
    EXPECT_EQ(r.value_or(""), c.crash) << c.name;
  }
}

TEST(KaiMemory, ReclaimVictimsLargestExcessFirstThenNewest) {
  // a: 4000 above its request, b: 1000 above, c: under its request; newest is c, then b, then a.
  std::vector<Tenant> t = {tenant("ns/a", 6000, 2000, kT0), tenant("ns/b", 5000, 4000, kT0 + 1s),
                           tenant("ns/c", 3000, 5000, kT0 + 2s)};
  struct Case {
    const char* name;
    double capacity;
    std::vector<std::pair<std::size_t, bool>> victims;  // index, excess
  };
  std::vector<Case> cases = {
      {"fits", 14000, {}},
      {"the largest excess goes first, though the oldest", 8000, {{0, true}}},
      {"then the next excess", 4000, {{0, true}, {1, true}}},
      {"then the newest of the rest", 2000, {{0, true}, {1, true}, {2, false}}},
  };
  for (const auto& c : cases) {
    auto v = reclaim_victims(t, c.capacity);
    std::vector<std::pair<std::size_t, bool>> got;
    for (const auto& x : v) got.emplace_back(x.index, x.excess);
    EXPECT_EQ(got, c.victims) << c.name;
  }
  // Equal excesses: the newest goes first. Whole-GPU tenants (no request) are never above it.
  std::vector<Tenant> tie = {tenant("ns/old", 3000, 1000, kT0), tenant("ns/new", 3000, 1000, kT0 + 1s),
                             Tenant{kT0 + 5s, "ns/whole", 0, 9000}};
  auto v = reclaim_victims(tie, 12000);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].index, 1u);
  EXPECT_TRUE(v[0].excess);
  // With only tenants under their requests it is the overflow rule.
  std::vector<Tenant> under = {tenant("ns/a", 3000, 5000, kT0), tenant("ns/b", 3000, 5000, kT0 + 1s)};
  v = reclaim_victims(under, 5000);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].index, 1u);
  EXPECT_FALSE(v[0].excess);
}

TEST(KaiMemory, ContendedGpuOomKillsThePodAboveItsRequest) {
  // The e2e scenario: requests 0.3 + 0.5 fit, bursts 9000 + 8000 MiB exceed the 16384 MiB device.
  auto burst_spec = fraction_spec("burst", 0.3, "g1", {{kMem, "9000"}, {"gpu-fraction.limit", "0.63"}});
  auto steady_spec = fraction_spec("steady", 0.5, "g1", {{kMem, "8000"}});
  steady_spec.started = kT0 + 10s;  // the newest: the overflow rule would pick it
  auto burst = make_pod(burst_spec), steady = make_pod(steady_spec);
  auto nv = run({reservation("g1", "0"), burst, steady}, MemoryIsolation::kNvFractions);
  ASSERT_EQ(nv.crashes.size(), 1u);
  const std::string& reason = nv.crashes.at(burst.uid + "/app");
  EXPECT_NE(reason.find("working sets total 17000 MiB of 16384 MiB"), std::string::npos) << reason;
  EXPECT_NE(reason.find("pod burst uses 4084.8 MiB above its request of 4915.2 MiB (gpu-fraction 0.3), reclaimed "
                        "first under NvFractions"),
            std::string::npos)
      << reason;
  // The exporter's allocation stays the request (KAI-4).
  ASSERT_EQ(nv.samples.size(), 2u);
  EXPECT_EQ(nv.samples[0].pod, "burst");
  EXPECT_EQ(nv.samples[0].memory_total_bytes, std::llround(0.3 * 16384 * kMiB));
  // TEL-3: the footprint is the exported bytes over the exported allocation (rounded down to a byte).
  EXPECT_DOUBLE_EQ(nv.samples[0].memory_footprint_percent, 9000 * kMiB * 100 / 5153960755.0);
  EXPECT_NEAR(nv.samples[0].memory_footprint_percent, 9000 * 100 / (0.3 * 16384), 1e-7);

  // NonMemoryEnforced keeps today's rule: the newest crashes.
  auto none = run({reservation("g1", "0"), burst, steady}, MemoryIsolation::kNone);
  ASSERT_EQ(none.crashes.size(), 1u);
  EXPECT_TRUE(none.crashes.count(steady.uid + "/app"));
  // Fitting bursts crash nobody.
  auto small = make_pod(fraction_spec("steady", 0.5, "g1", {{kMem, "7000"}}));
  EXPECT_TRUE(run({reservation("g1", "0"), burst, small}, MemoryIsolation::kNvFractions).crashes.empty());
}
