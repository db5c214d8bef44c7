// What one GPU may still take (CON-2a caps, CON-5a models, CON-5b compute modes) and why a node is not drained
// (CON-10 counts, CON-12 result and blocker), on small pools.
#include <gtest/gtest.h>

#include "decide/packing/gpu_device.h"
#include "packing_fixtures.h"

namespace kubex::decide::packing::test {
namespace {

PoolNode gpu_node(std::string name, std::string product, std::string memory_mib, std::int64_t gpus = 1) {
  PoolNode n = node(std::move(name), gpus);
  if (!product.empty()) n.labels["nvidia.com/gpu.product"] = std::move(product);
  if (!memory_mib.empty()) n.labels["nvidia.com/gpu.memory"] = std::move(memory_mib);
  return n;
}

TEST(PackingCap, FromTheGpuMemoryAndTheReserve) {  // CON-2a
  struct Case {
    const char* what;
    std::int64_t mib;
    MemoryReserve reserve;
    std::int64_t reserve_mib;
    Hundredths cap;
  };
  const Case cases[] = {
      {"T4: r = 460.8 rounded up to 461 MiB, cap 0.96 (the SPEC's example)", 15360, {}, 461, 96},
      {"L4", 23034, {}, 692, 96},
      {"A100-80GB", 81920, {}, 2458, 96},
      {"a small GPU: the 256 MiB minimum wins", 4096, {}, 256, 93},
      {"unknown memory (no label): 1.00", 0, {}, 0, 100},
      {"reserve disabled (both 0)", 15360, {0, 0}, 0, 100},
      {"only a minimum", 16384, {0, 1024}, 1024, 93},
      {"a reserve as large as the GPU: nothing fits", 200, {50, 512}, 512, 0},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(reserve_mib(c.mib, c.reserve), c.reserve_mib) << c.what;
    EXPECT_EQ(gpu_cap(c.mib, c.reserve), c.cap) << c.what;
  }
}

TEST(PackingCap, LabelsAreReadStrictly) {  // CON-2a, CON-5a
  EXPECT_EQ(gpu_memory_mib(gpu_node("a", "T4", "15360")), 15360);
  EXPECT_EQ(gpu_memory_mib(gpu_node("a", "T4", "15Gi")), 0);  // not MiB: unknown, so cap 1.00
  EXPECT_EQ(gpu_memory_mib(gpu_node("a", "T4", "-5")), 0);
  EXPECT_EQ(gpu_memory_mib(gpu_node("a", "T4", "")), 0);
  EXPECT_EQ(gpu_product(gpu_node("a", "NVIDIA-L4", "")), "NVIDIA-L4");
  EXPECT_EQ(gpu_product(gpu_node("a", "", "")), "");
}

TEST(PackingCap, AT4GpuAtItsCapTakesNoMoreAndPodsAboveItStay) {  // CON-2a
  // n1's GPU holds 0.92: 0.92 + 0.05 = 0.97 passes 1.00 but not the T4's cap 0.96.
  Pool pool{{gpu_node("n1", "T4", "15360"), gpu_node("n2", "T4", "15360"), gpu_node("n3", "T4", "15360")},
            {frac("a", "n1", 92), frac("b", "n2", 5), frac("c", "n3", 99)}};
  Plan p = plan(pool, threshold(75));
  auto n2 = find_candidate(p, "n2");
  ASSERT_TRUE(n2);
  EXPECT_FALSE(n2->feasible);
  EXPECT_EQ(n2->reason, "pod ml/b (0.05) does not fit: reserve");
  EXPECT_EQ(n2->blocker, "reserve");
  EXPECT_EQ(find_node(p, "n1")->cap, 96);
  EXPECT_EQ(find_node(p, "n3")->gpus, std::vector<Hundredths>{99});  // above the cap: stays, takes no more
  // Without the reserve the same GPU takes it.
  Options no_reserve = threshold(75);
  no_reserve.reserve = {0, 0};
  EXPECT_TRUE(find_candidate(plan(pool, no_reserve), "n2")->feasible);
}

TEST(PackingModels, ADrainNeverMovesAFractionToAnotherGpuModel) {  // CON-5a, CON-6
  // The L4 has more room, but is another model; KAI, which does not know CON-5a, prefers the T4 too (both nodes
  // have a shared GPU the fraction fits on and no free GPU: the name decides, t4-b before z-l4).
  Pool pool{{gpu_node("t4-a", "T4", "15360"), gpu_node("t4-b", "T4", "15360"), gpu_node("z-l4", "L4", "23034")},
            {frac("p1", "t4-a", 20), frac("p2", "t4-b", 75), frac("p3", "z-l4", 10)}};
  Plan p = plan(pool, threshold(75));
  auto t4a = find_candidate(p, "t4-a");
  ASSERT_TRUE(t4a && t4a->feasible);
  ASSERT_EQ(t4a->placements.size(), 1u);
  EXPECT_EQ(t4a->placements[0].to, "t4-b");
  auto l4 = find_candidate(p, "z-l4");
  ASSERT_TRUE(l4);
  EXPECT_FALSE(l4->feasible);
  EXPECT_EQ(l4->reason, "pod ml/p3 (0.1) does not fit: gpu model");  // no other L4
  EXPECT_EQ(l4->blocker, "gpu model");
  EXPECT_EQ(p.gpu_models, (std::vector<GpuModelCount>{{"L4", 1}, {"T4", 2}}));
}

TEST(PackingModels, ADrainKaiWouldTakeToAnotherGpuModelIsNotPlanned) {  // CON-5a, CON-6, SIM-9
  // The same pool with the L4 named first: KAI would put p1 on the L4 (a shared GPU it fits on, no free GPU on
  // either node, then the node name), so the plan cannot count on t4-b: t4-a is not drainable.
  Pool pool{{gpu_node("t4-a", "T4", "15360"), gpu_node("t4-b", "T4", "15360"), gpu_node("a-l4", "L4", "23034")},
            {frac("p1", "t4-a", 20), frac("p2", "t4-b", 75), frac("p3", "a-l4", 10)}};
  Plan p = plan(pool, threshold(75));
  auto t4a = find_candidate(p, "t4-a");
  ASSERT_TRUE(t4a);
  EXPECT_FALSE(t4a->feasible);
  EXPECT_EQ(t4a->reason, "pod ml/p1 (0.2) does not fit: gpu model (KAI would place it on a-l4, a L4)");
  EXPECT_EQ(t4a->blocker, "gpu model");
  EXPECT_TRUE(t4a->placements.empty());
}

TEST(PackingModels, AMixedPoolSaysSoWhenNothingIsDrained) {  // CON-5a, CON-10
  Pool pool{{gpu_node("t4-a", "T4", "15360"), gpu_node("l4-a", "L4", "23034")},
            {frac("p1", "t4-a", 20), frac("p2", "l4-a", 10)}};
  Plan p = plan(pool, threshold(75));
  ASSERT_EQ(p.first_feasible(), nullptr);
  EXPECT_EQ(p.message,
            "pool: 2 nodes, 2 GPUs, 0.30 allocated; best candidate l4-a (10%): pod ml/p2 (0.1) does not fit: gpu "
            "model; 2 below 75%: 2 gpu model; mixed GPU models: L4 (1 nodes), T4 (1 nodes); drains stay within "
            "one model");
}

TEST(PackingModes, FractionsOfAnotherComputeModeNeverShareAGpu) {  // CON-5b
  PoolPod sm = frac("sm", "n2", 20, "g");
  sm.compute_mode = "sm-sharing";
  // n1 has two GPUs: GPU 0 holds a time-slicing 0.5, GPU 1 an sm-sharing 0.3.
  PoolPod ts = frac("ts", "n1", 50, "g0");
  PoolPod other = frac("other", "n1", 30, "g1");
  other.compute_mode = "sm-sharing";
  Pool pool{{node("n1", 2), node("n2")}, {ts, other, sm}};
  auto c = find_candidate(plan(pool, threshold(75)), "n2");
  ASSERT_TRUE(c && c->feasible);
  ASSERT_EQ(c->placements.size(), 1u);
  // Best fit by room alone would pick GPU 0 (0.5 left → 0.3); its mode is time-slicing, so GPU 1 it is.
  EXPECT_EQ(c->placements[0].gpus, std::vector<int>{1});

  // Only a time-slicing GPU with room: the sm-sharing pod does not fit, and the blocker says why.
  Pool tight{{node("n1"), node("n2")}, {frac("ts", "n1", 50), sm}};
  auto t = find_candidate(plan(tight, threshold(75)), "n2");
  ASSERT_TRUE(t);
  EXPECT_FALSE(t->feasible);
  EXPECT_EQ(t->reason, "pod ml/sm (0.2) does not fit: compute mode");
  EXPECT_EQ(t->blocker, "compute mode");
}

TEST(PackingBlockers, EveryNodeBelowTheThresholdIsCountedByBlocker) {  // CON-10, CON-12
  PoolPod held = frac("held", "n2", 72);
  held.unmovable = "do-not-disrupt";
  Pool pool{{node("n1"), node("n2"), node("n3"), node("n4"), node("n5")},
            {frac("a", "n1", 90), held, frac("big", "n3", 74), whole("w", "n4", 1), frac("c", "n5", 30)}};
  Plan p = plan(pool, threshold(75));
  ASSERT_EQ(p.first_feasible(), nullptr);
  // n5 (30 %) is the emptiest movable one; n3's 0.74 has no room either; n2 is held; n1, n4 are above 75 %.
  EXPECT_EQ(p.message,
            "pool: 5 nodes, 5 GPUs, 3.66 allocated; best candidate n5 (30%): pod ml/c (0.3) does not fit; 3 below "
            "75%: 2 gpu, 1 do-not-disrupt");
  EXPECT_EQ(find_candidate(p, "n2")->result, "unmovable");
  EXPECT_EQ(find_candidate(p, "n2")->blocker, "do-not-disrupt");
  EXPECT_EQ(find_candidate(p, "n1")->result, "above_threshold");
  EXPECT_EQ(find_candidate(p, "n4")->result, "above_threshold");
  EXPECT_EQ(find_candidate(p, "n5")->result, "infeasible");
  EXPECT_EQ(find_candidate(p, "n5")->blocker, "gpu");
}

TEST(PackingBlockers, OnlyUnmovableNodesBelowTheThresholdAreNamed) {  // CON-10: the node a do-not-disrupt pod holds
  PoolPod held = frac("held", "n2", 10);
  held.unmovable = "do-not-disrupt";
  Pool pool{{node("n1"), node("n2")}, {frac("a", "n1", 90), held}};
  EXPECT_EQ(plan(pool, threshold(75)).message,
            "pool: 2 nodes, 2 GPUs, 1.00 allocated; no node below 75% with movable GPU pods; 1 below 75%: 1 "
            "do-not-disrupt");
}

TEST(PackingBlockers, TheSpecExampleMessageIsUnchanged) {  // CON-10 (SPEC §9 example, step 3)
  Pool pool{{node("n1"), node("n2"), node("n3")}, {frac("p1", "n1", 50), frac("p2", "n1", 25), frac("p4", "n1", 25),
                                                   frac("p3", "n3", 50)}};
  EXPECT_EQ(plan(pool, threshold(75)).message,
            "pool: 3 nodes, 3 GPUs, 1.50 allocated; best candidate n3 (50%): pod ml/p3 (0.5) does not fit");
}

}  // namespace
}  // namespace kubex::decide::packing::test
