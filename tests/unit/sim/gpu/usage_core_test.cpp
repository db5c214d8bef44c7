// The pure core of the GPU model: GPU containers, placement, contention, footprints and crash decisions.
#include "sim/gpu/usage_core.h"

#include <gtest/gtest.h>

#include "test_pods.h"

using namespace kubex;
using namespace kubex::sim;
using namespace kubex::sim::gpu;
using namespace kubex::sim::gpu::testing;
using namespace std::chrono_literals;

namespace {

constexpr const char* kSm = "sim.kubex.ai/gpu-sm-percent";
constexpr const char* kMem = "sim.kubex.ai/gpu-memory-mib";
constexpr double kMiB = 1024.0 * 1024.0;

Evaluation run(const std::vector<cluster::SimPod>& pods, MemoryIsolation iso = MemoryIsolation::kNone,
               common::TimePoint now = kT0 + 1min,
               std::vector<std::shared_ptr<const cluster::SimNode>> nodes = {}) {
  static PatternCache cache;
  if (nodes.empty()) nodes = {gpu_node("n1"), gpu_node("n2")};
  std::vector<std::shared_ptr<const cluster::SimPod>> ptrs;
  for (const auto& p : pods) ptrs.push_back(shared(p));
  return evaluate(ptrs, nodes, iso, now, cache);
}

}  // namespace

TEST(GpuContainers, WholeGpusAndTheFractionContainer) {
  PodSpec whole;
  whole.name = "w";
  whole.containers = {{"sidecar", 0}, {"a", 1}, {"b", 2}};
  auto w = gpu_containers(make_pod(whole));
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].index, 1u);
  EXPECT_EQ(w[0].type, AllocationType::kWhole);
  EXPECT_EQ(w[0].gpus, 1);
  EXPECT_EQ(w[1].gpus, 2);

  auto frac = fraction_spec("f", 0.5, "g", {});
  frac.containers = {{"init", 0}, {"app", 0}, {"sidecar", 0}};
  auto pod = make_pod(frac);
  pod.containers[0].init = true;  // a restartable init container (sidecar) comes first
  auto f = gpu_containers(pod);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].index, 1u) << "the first regular container by default";
  EXPECT_EQ(f[0].type, AllocationType::kFraction);
  EXPECT_DOUBLE_EQ(f[0].fraction, 0.5);

  pod.annotations[kubex::api::keys::kGpuFractionContainerName] = "sidecar";
  ASSERT_EQ(gpu_containers(pod).size(), 1u);
  EXPECT_EQ(gpu_containers(pod)[0].index, 2u);
  pod.annotations[kubex::api::keys::kGpuFractionContainerName] = "missing";
  EXPECT_TRUE(gpu_containers(pod).empty());

  pod.annotations.erase(kubex::api::keys::kGpuFractionContainerName);
  pod.gpu_fraction_invalid = true;
  EXPECT_TRUE(gpu_containers(pod).empty()) << "an invalid gpu-fraction allocates nothing";

  PodSpec job;
  job.name = "j";
  job.containers = {{"setup", 1}, {"main", 1}};
  auto j = make_pod(job);
  j.containers[0].init = true;
  j.containers[0].restart_always = false;  // a run-to-completion init container
  ASSERT_EQ(gpu_containers(j).size(), 1u);
  EXPECT_EQ(gpu_containers(j)[0].index, 1u);
  EXPECT_STREQ(allocation_type_label(AllocationType::kFraction), "fraction");
  EXPECT_STREQ(allocation_type_label(AllocationType::kWhole), "whole");
}

TEST(DemandAnnotation, PerContainerKeysWin) {
  PodSpec s;
  s.name = "p";
  s.containers = {{"a", 1}, {"b", 1}};
  s.annotations = {{kSm, "30"}, {std::string(kSm) + ".b", "70"}, {std::string(kSm) + ".ghost", "1"}};
  auto pod = make_pod(s);
  EXPECT_EQ(demand_annotation(pod, kSm, "a")->second, "30");
  EXPECT_EQ(demand_annotation(pod, kSm, "b")->second, "70");
  EXPECT_EQ(demand_annotation(pod, kMem, "a"), nullptr);
  auto stray = stray_container_keys(pod, kSm, gpu_containers(pod));
  ASSERT_EQ(stray.size(), 1u);
  EXPECT_EQ(stray[0], std::string(kSm) + ".ghost");
}

TEST(Contention, ProportionalShareAbove100Percent) {
  struct Case {
    std::vector<double> demands, want;
  };
  const std::vector<Case> cases = {
      {{}, {}},
      {{40}, {40}},
      {{100}, {100}},
      {{30, 30, 40}, {30, 30, 40}},
      {{60, 60}, {50, 50}},
      {{90, 30}, {75, 25}},
      {{100, 100, 200}, {25, 25, 50}},
      {{0, 0}, {0, 0}},
      {{-5, 50}, {0, 50}},
  };
  for (const auto& c : cases) {
    auto got = share_sm(c.demands);
    ASSERT_EQ(got.size(), c.want.size());
    for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], c.want[i], 1e-9);
  }
}

TEST(OverflowVictims, NewestPodsCrashUntilTheRestFit) {
  auto t = [](int s) { return kT0 + std::chrono::seconds(s); };
  struct Case {
    std::string name;
    std::vector<Tenant> tenants;
    double capacity;
    std::vector<std::size_t> want;
  };
  const std::vector<Case> cases = {
      {"fits", {{t(0), "ns/a", 0, 8000}, {t(5), "ns/b", 0, 8000}}, 16384, {}},
      {"exactly full", {{t(0), "ns/a", 0, 8192}, {t(5), "ns/b", 0, 8192}}, 16384, {}},
      {"newest start", {{t(9), "ns/b", 0, 10000}, {t(0), "ns/a", 0, 10000}}, 16384, {0}},
      {"same start: greater name", {{t(0), "ns/a", 0, 10000}, {t(0), "ns/b", 0, 10000}}, 16384, {1}},
      {"two must go",
       {{t(0), "ns/a", 0, 9000}, {t(1), "ns/b", 0, 9000}, {t(2), "ns/c", 0, 9000}},
       16384,
       {2, 1}},
      {"newest without memory is skipped",
       {{t(0), "ns/a", 0, 10000}, {t(1), "ns/b", 0, 10000}, {t(2), "ns/c", 0, 0}},
       16384,
       {1}},
      {"alone and too big", {{t(0), "ns/a", 0, 20000}}, 16384, {0}},
  };
  for (const auto& c : cases) EXPECT_EQ(overflow_victims(c.tenants, c.capacity), c.want) << c.name;
}

TEST(AllocationCrash, HamiCoreFractionsAndWholeDevices) {
  GpuContainer half{0, AllocationType::kFraction, 0.5, 0};
  auto r = allocation_crash(half, 9000, 16384, MemoryIsolation::kHamiCore);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(
      *r,
      "CUDA out of memory: 9000 MiB working set exceeds the 8192 MiB allocation (gpu-fraction 0.5 of a 16384 "
      "MiB GPU, HAMi-core memory isolation)");
  EXPECT_FALSE(allocation_crash(half, 8192, 16384, MemoryIsolation::kHamiCore))
      << "exactly the allocation fits";
  EXPECT_FALSE(allocation_crash(half, 9000, 16384, MemoryIsolation::kNone))
      << "no isolation: only the device limits";
  EXPECT_FALSE(allocation_crash(half, 9000, 0, MemoryIsolation::kHamiCore)) << "unknown device memory";

  GpuContainer one{0, AllocationType::kWhole, 0, 1};
  GpuContainer two{0, AllocationType::kWhole, 0, 2};
  for (auto iso : {MemoryIsolation::kNone, MemoryIsolation::kHamiCore}) {
    auto w = allocation_crash(one, 20000.5, 16384, iso);
    ASSERT_TRUE(w.has_value());
    EXPECT_EQ(*w, "CUDA out of memory: 20000.5 MiB working set exceeds the 16384 MiB of its 1 GPU");
    EXPECT_FALSE(allocation_crash(two, 20000, 16384, iso));
    EXPECT_EQ(*allocation_crash(two, 40000, 16384, iso),
              "CUDA out of memory: 40000 MiB working set exceeds the 32768 MiB of its 2 GPUs");
  }
}

TEST(Evaluate, FractionPodSitsOnItsGroupsReservedGpu) {
  auto pod = make_pod(fraction_spec("f", 0.5, "g1", {{kSm, "40"}, {kMem, "4096"}}));
  auto ev = run({reservation("g1", "1"), pod});
  ASSERT_EQ(ev.samples.size(), 1u);
  const Sample& s = ev.samples[0];
  EXPECT_EQ(s.ns, "default");
  EXPECT_EQ(s.pod, "f");
  EXPECT_EQ(s.container, "app");
  EXPECT_EQ(s.node, "n1");
  EXPECT_EQ(s.gpu_uuid, cluster::gpu_uuid("n1", 1));
  EXPECT_EQ(s.gpu_model, "Tesla-T4");
  EXPECT_EQ(s.allocation_type, "fraction");
  EXPECT_DOUBLE_EQ(s.sm_percent, 40);
  EXPECT_DOUBLE_EQ(s.memory_footprint_percent, 50);  // 4096 MiB of 0.5 × 16384 MiB
  EXPECT_EQ(s.memory_bytes, 4096LL << 20);
  EXPECT_EQ(s.memory_total_bytes, 8192LL << 20);
  EXPECT_EQ(s.pod_uid, pod.uid);
  EXPECT_TRUE(ev.crashes.empty());
  EXPECT_TRUE(ev.findings.empty());
}

TEST(Evaluate, PodsWithoutKnownGpusAreNotSampled) {
  auto lost = make_pod(fraction_spec("f", 0.5, "g-unknown", {{kSm, "40"}}));
  auto other_node = make_pod(fraction_spec("f2", 0.5, "g1", {{kSm, "40"}}));
  other_node.node = "n2";  // the group's reservation pod is on n1
  auto no_indices = make_pod(whole_spec("w", 1, "", {{kSm, "40"}}));
  auto out_of_range = make_pod(whole_spec("w2", 1, "7", {{kSm, "40"}}));
  auto unknown_node = make_pod(whole_spec("w3", 1, "0", {{kSm, "40"}}));
  unknown_node.node = "gone";
  auto pending = make_pod(whole_spec("w4", 1, "0", {{kSm, "40"}}));
  pending.phase = "Pending";
  auto not_started = make_pod(whole_spec("w5", 1, "0", {{kSm, "40"}}));
  not_started.started = {};
  auto ev = run({reservation("g1", "0"), lost, other_node, no_indices, out_of_range, unknown_node, pending,
                 not_started});
  EXPECT_TRUE(ev.samples.empty());
}

TEST(Evaluate, FractionPodFallsBackToItsOwnIndices) {
  auto spec = fraction_spec("f", 0.25, "", {{kSm, "10"}});
  spec.annotations[cluster::kGpuIndicesAnnotation] = "0";
  auto ev = run({make_pod(spec)});
  ASSERT_EQ(ev.samples.size(), 1u);
  EXPECT_EQ(ev.samples[0].gpu_uuid, cluster::gpu_uuid("n1", 0));
}

TEST(Evaluate, SharedGpuContention) {
  auto a = make_pod(fraction_spec("a", 0.5, "g1", {{kSm, "90"}}));
  auto b = make_pod(fraction_spec("b", 0.5, "g1", {{kSm, "30"}}));
  auto c = make_pod(fraction_spec("c", 0.5, "g2", {{kSm, "90"}}));  // alone on GPU 1
  auto ev = run({reservation("g1", "0"), reservation("g2", "1"), a, b, c});
  ASSERT_EQ(ev.samples.size(), 3u);
  EXPECT_DOUBLE_EQ(ev.samples[0].sm_percent, 75);
  EXPECT_DOUBLE_EQ(ev.samples[1].sm_percent, 25);
  EXPECT_DOUBLE_EQ(ev.samples[2].sm_percent, 90);
}

TEST(Evaluate, ContainersThatDoNotRunDoNotCompeteAndAreNotExported) {
  auto a = make_pod(fraction_spec("a", 0.5, "g1", {{kSm, "90"}}));
  auto bspec = fraction_spec("b", 0.5, "g1", {{kSm, "90"}});
  bspec.running = false;  // crash-looping
  auto ev = run({reservation("g1", "0"), a, make_pod(bspec)});
  ASSERT_EQ(ev.samples.size(), 1u);
  EXPECT_EQ(ev.samples[0].pod, "a");
  EXPECT_DOUBLE_EQ(ev.samples[0].sm_percent, 90);
}

// REA-4 / PRO-2: `sum by (namespace,pod,container)` over a whole-GPU container's series gives its GPUs.
TEST(Evaluate, WholeGpusSplitDemandAcrossDevices) {
  auto w = make_pod(whole_spec("w", 2, "0,1", {{kSm, "150"}, {kMem, "20000"}}));
  auto hot = make_pod(whole_spec("hot", 2, "0,1", {{kSm, "250"}}));
  hot.node = "n2";
  auto ev = run({w, hot});
  ASSERT_EQ(ev.samples.size(), 4u);
  // hot (n2): 250 % over 2 GPUs is capped at 100 % of each.
  EXPECT_EQ(ev.samples[0].pod, "hot");
  EXPECT_DOUBLE_EQ(ev.samples[0].sm_percent, 100);
  EXPECT_DOUBLE_EQ(ev.samples[1].sm_percent, 100);
  double sm = 0, footprint = 0;
  for (int i : {2, 3}) {
    const Sample& s = ev.samples[i];
    EXPECT_EQ(s.pod, "w");
    EXPECT_EQ(s.allocation_type, "whole");
    EXPECT_EQ(s.memory_bytes, 10000LL << 20);
    EXPECT_EQ(s.memory_total_bytes, 16384LL << 20);
    sm += s.sm_percent;
    footprint += s.memory_footprint_percent;
  }
  EXPECT_DOUBLE_EQ(sm, 150) << "k series whose sum is the container's total";
  EXPECT_NEAR(footprint, 20000.0 * 100 / 16384, 1e-9) << "each series relative to one device";
  EXPECT_NE(ev.samples[2].gpu_uuid, ev.samples[3].gpu_uuid);
}

TEST(Evaluate, ContainersTakeConsecutiveSlicesAndPerContainerOverrides) {
  PodSpec s;
  s.name = "multi";
  s.containers = {{"a", 1}, {"b", 1}, {"cpu", 0}};
  s.annotations = {{kSm, "30"}, {std::string(kSm) + ".b", "70"}, {cluster::kGpuIndicesAnnotation, "1,0"}};
  auto ev = run({make_pod(s)});
  ASSERT_EQ(ev.samples.size(), 2u);
  EXPECT_EQ(ev.samples[0].container, "a");
  EXPECT_EQ(ev.samples[0].gpu_uuid, cluster::gpu_uuid("n1", 1));
  EXPECT_DOUBLE_EQ(ev.samples[0].sm_percent, 30);
  EXPECT_EQ(ev.samples[1].container, "b");
  EXPECT_EQ(ev.samples[1].gpu_uuid, cluster::gpu_uuid("n1", 0));
  EXPECT_DOUBLE_EQ(ev.samples[1].sm_percent, 70);
}

TEST(Evaluate, PatternsFollowTheTimeSincePodStart) {
  auto pod = make_pod(fraction_spec("f", 0.5, "g1", {{kSm, "step(20,80,5m)"}, {kMem, "ramp(0,8192,10m)"}}));
  auto early = run({reservation("g1", "0"), pod}, MemoryIsolation::kNone, kT0 + 4min);
  auto late = run({reservation("g1", "0"), pod}, MemoryIsolation::kNone, kT0 + 5min);
  EXPECT_DOUBLE_EQ(early.samples.at(0).sm_percent, 20);
  // 3276.8 MiB of 8192: TEL-3 takes the exported bytes (3435973836.8 rounded to 3435973837) over the allocation.
  EXPECT_DOUBLE_EQ(early.samples.at(0).memory_footprint_percent, 3435973837.0 * 100 / (8192LL << 20));
  EXPECT_NEAR(early.samples.at(0).memory_footprint_percent, 40, 1e-8);
  EXPECT_DOUBLE_EQ(late.samples.at(0).sm_percent, 80);
  EXPECT_DOUBLE_EQ(late.samples.at(0).memory_footprint_percent, 50);
}

TEST(Evaluate, InvalidAnnotationsCountAsAbsentAndAreReported) {
  auto pod = make_pod(
      fraction_spec("f", 0.5, "g1", {{kSm, "lots"}, {kMem, "2048"}, {std::string(kMem) + ".nope", "1"}}));
  auto ev = run({reservation("g1", "0"), pod});
  ASSERT_EQ(ev.samples.size(), 1u);
  EXPECT_DOUBLE_EQ(ev.samples[0].sm_percent, 0);
  EXPECT_DOUBLE_EQ(ev.samples[0].memory_footprint_percent, 25);
  ASSERT_EQ(ev.findings.size(), 2u);
  EXPECT_EQ(ev.findings[0].key, std::string(kMem) + ".nope");
  EXPECT_NE(ev.findings[0].message.find("names no GPU container"), std::string::npos);
  EXPECT_EQ(ev.findings[1].key, kSm);
  EXPECT_EQ(ev.findings[1].value, "lots");
  EXPECT_NE(ev.findings[1].message.find("invalid number \"lots\""), std::string::npos)
      << ev.findings[1].message;
}

TEST(Evaluate, GpuContainersWithoutAnnotationsExportZeros) {
  auto ev = run({make_pod(whole_spec("idle", 1, "0", {}))});
  ASSERT_EQ(ev.samples.size(), 1u);
  EXPECT_DOUBLE_EQ(ev.samples[0].sm_percent, 0);
  EXPECT_EQ(ev.samples[0].memory_bytes, 0);
}

TEST(Evaluate, OvercommitWithoutIsolationCrashesTheNewestPod) {
  auto old_spec = fraction_spec("old", 0.5, "g1", {{kMem, "10000"}});
  auto new_spec = fraction_spec("new", 0.5, "g1", {{kMem, "10000"}});
  new_spec.started = kT0 + 10s;
  new_spec.running = false;  // in its crash loop it still holds its place on the GPU
  auto old_pod = make_pod(old_spec), new_pod = make_pod(new_spec);
  auto none = run({reservation("g1", "0"), old_pod, new_pod}, MemoryIsolation::kNone);
  ASSERT_EQ(none.crashes.size(), 1u);
  const auto& reason = none.crashes.at(new_pod.uid + "/app");
  EXPECT_NE(reason.find("CUDA out of memory"), std::string::npos);
  EXPECT_NE(reason.find("20000 MiB of 16384 MiB"), std::string::npos) << reason;
  EXPECT_NE(reason.find("pod new is the newest"), std::string::npos) << reason;
  // HAMi-core isolation never over-commits a device: each container is held to its own allocation.
  EXPECT_TRUE(run({reservation("g1", "0"), old_pod, new_pod}, MemoryIsolation::kHamiCore).crashes.empty());
  // Fitting working sets do not crash.
  auto small = fraction_spec("new", 0.5, "g1", {{kMem, "6000"}});
  EXPECT_TRUE(run({reservation("g1", "0"), old_pod, make_pod(small)}).crashes.empty());
}

TEST(Evaluate, ParseIsolation) {
  EXPECT_EQ(parse_isolation("HAMiCore"), MemoryIsolation::kHamiCore);
  EXPECT_EQ(parse_isolation("None"), MemoryIsolation::kNone);
  EXPECT_EQ(parse_isolation(""), MemoryIsolation::kNone);
  EXPECT_EQ(format_mib(8192), "8192");
  EXPECT_EQ(format_mib(8191.5), "8191.5");
  EXPECT_EQ(format_mib(3276.8), "3276.8");
}
