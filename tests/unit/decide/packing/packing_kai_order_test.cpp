// CON-6 as KAI-Scheduler v0.13 places the replacement pods of a drain (default binpack): a fraction goes to a node
// with a shared GPU it fits on (however full), then to the node with the fewest free GPUs, then by node name; on
// that node to its fullest fitting shared GPU, else a free one. Whole GPUs: fewest free GPUs, then name. Pods are
// placed in the order the drain evicts them (CON-7 (3)), which is the order KAI sees their replacements.
#include <gtest/gtest.h>

#include "decide/packing/drain.h"
#include "decide/packing/strategy.h"
#include "packing_fixtures.h"

namespace kubex::decide::packing::test {
namespace {

// The candidate "src" (4 GPUs) holding the pods put on it, evaluated against the other nodes given.
Candidate evaluate_src(std::vector<PoolNode> destinations, std::vector<PoolPod> pods) {
  Pool pool{std::move(destinations), std::move(pods)};
  pool.nodes.push_back(node("src", 4));
  return *find_candidate(plan(pool, threshold(75)), "src");
}

TEST(PackingKaiOrder, GlobalBestFitWouldStrandAPodKaiCannotPlace) {  // CON-6
  // node-a holds a group at 0.40, node-b one at 0.50, no free GPU. The drain evicts 0.5, 0.4, 0.2 in that order.
  // Best fit across the pool would plan 0.5 -> b, 0.4 -> a, 0.2 -> a. KAI: 0.5 -> a (both nodes have a group it
  // fits, both have 0 free GPUs: name), 0.4 -> b, and 0.2 fits nowhere. So src is not drainable.
  Candidate c = evaluate_src({node("node-a"), node("node-b")},
                             {frac("x", "node-a", 40), frac("y", "node-b", 50), frac("p1", "src", 50, "g1"),
                              frac("p2", "src", 40, "g2"), frac("p3", "src", 20, "g2")});
  EXPECT_FALSE(c.feasible);
  EXPECT_EQ(c.reason, "pod ml/p3 (0.2) does not fit");
  EXPECT_EQ(c.result, "infeasible");
  EXPECT_EQ(c.blocker, "gpu");
  EXPECT_TRUE(c.placements.empty());
}

TEST(PackingKaiOrder, WhenItFitsThePlanHasKaisPlacements) {  // CON-6
  // The same pool with 0.5, 0.4 and 0.1: 0.5 -> node-a (0.9), 0.4 -> node-b (0.9), 0.1 -> node-a (name).
  Candidate c = evaluate_src({node("node-a"), node("node-b")},
                             {frac("x", "node-a", 40), frac("y", "node-b", 50), frac("p1", "src", 50, "g1"),
                              frac("p2", "src", 40, "g2"), frac("p3", "src", 10, "g2")});
  ASSERT_TRUE(c.feasible) << c.reason;
  ASSERT_EQ(c.placements.size(), 3u);
  EXPECT_EQ(c.placements[0], (Placement{"ml", "p1", 50, "node-a", {0}}));
  EXPECT_EQ(c.placements[1], (Placement{"ml", "p2", 40, "node-b", {0}}));
  EXPECT_EQ(c.placements[2], (Placement{"ml", "p3", 10, "node-a", {0}}));
}

TEST(PackingKaiOrder, AnyFittingSharedGpuWinsOverAFullerOneElsewhere) {  // CON-6: KAI's flat gpusharingorder
  // node-a's group is at 0.25, node-b's at 0.50: a 0.5 pod would fill node-b's GPU exactly, but KAI does not
  // weigh fullness across nodes: both fit it, both have 0 free GPUs, node-a comes first by name.
  Candidate c = evaluate_src({node("node-a"), node("node-b")},
                             {frac("x", "node-a", 25), frac("y", "node-b", 50), frac("p", "src", 50)});
  ASSERT_TRUE(c.feasible) << c.reason;
  EXPECT_EQ(c.placements[0], (Placement{"ml", "p", 50, "node-a", {0}}));
}

TEST(PackingKaiOrder, AFittingSharedGpuWinsOverFewerFreeGpus) {  // CON-6
  // node-x: a group at 0.9 (no room for 0.3) and 1 free GPU. node-y: a group at 0.1 and 3 free GPUs. A new GPU on
  // node-x would be the tighter fit, but node-y has a shared GPU the pod fits on.
  Candidate c = evaluate_src({node("node-x", 2), node("node-y", 4)},
                             {frac("x", "node-x", 90), frac("y", "node-y", 10), frac("p", "src", 30)});
  ASSERT_TRUE(c.feasible) << c.reason;
  EXPECT_EQ(c.placements[0], (Placement{"ml", "p", 30, "node-y", {0}}));
}

TEST(PackingKaiOrder, AmongNodesWithAFittingGroupFewerFreeGpusWin) {  // CON-6: binpack before the group's fill
  // node-a: a group at 0.5 and 1 free GPU; node-b: a group at 0.25 and a whole-GPU pod (0 free). A 0.5 pod goes
  // to node-b (its group becomes 0.75), not onto node-a's fuller group.
  Candidate c = evaluate_src({node("node-a", 2), node("node-b", 2)},
                             {frac("x", "node-a", 50), whole("w", "node-b", 1), frac("y", "node-b", 25),
                              frac("p", "src", 50)});
  ASSERT_TRUE(c.feasible) << c.reason;
  EXPECT_EQ(c.placements[0].to, "node-b");
}

TEST(PackingKaiOrder, OnTheChosenNodeTheFullestFittingGroupThenAFreeGpu) {  // CON-6: KAI's gpupack
  // node-a GPUs [0.95, 0.6, 0.3, free]; the drain evicts 0.7, 0.5, 0.3.
  Candidate c = evaluate_src({node("node-a", 4)},
                             {frac("a", "node-a", 95, "g0"), frac("b", "node-a", 60, "g1"),
                              frac("d", "node-a", 30, "g2"), frac("p1", "src", 70, "s1"),
                              frac("p2", "src", 50, "s2"), frac("p3", "src", 30, "s3")});
  ASSERT_TRUE(c.feasible) << c.reason;
  ASSERT_EQ(c.placements.size(), 3u);
  EXPECT_EQ(c.placements[0], (Placement{"ml", "p1", 70, "node-a", {2}}));  // only the 0.3 group fits: 1.0
  EXPECT_EQ(c.placements[1], (Placement{"ml", "p2", 50, "node-a", {3}}));  // no group fits: the free GPU
  EXPECT_EQ(c.placements[2], (Placement{"ml", "p3", 30, "node-a", {1}}));  // 0.6 and 0.5 fit: the fuller, 0.6
}

TEST(PackingKaiOrder, WithoutAFittingGroupFewestFreeGpusThenNodeName) {  // CON-6: binpack, then name
  // Neither node has a group a 0.5 pod fits on. node-b has 1 free GPU, node-a 3: node-b.
  Candidate fewer = evaluate_src({node("node-a", 4), node("node-b", 2)},
                                 {frac("x", "node-a", 90), frac("y", "node-b", 90), frac("p", "src", 50)});
  ASSERT_TRUE(fewer.feasible) << fewer.reason;
  EXPECT_EQ(fewer.placements[0], (Placement{"ml", "p", 50, "node-b", {1}}));
  // Both have 1 free GPU: node-a by name.
  Candidate tie = evaluate_src({node("node-b", 2), node("node-a", 2)},
                               {frac("x", "node-a", 90), frac("y", "node-b", 90), frac("p", "src", 50)});
  ASSERT_TRUE(tie.feasible) << tie.reason;
  EXPECT_EQ(tie.placements[0], (Placement{"ml", "p", 50, "node-a", {1}}));
}

TEST(PackingKaiOrder, TheCapDecidesWhetherAGroupFits) {  // CON-6 with CON-2a
  // node-a's GPUs have a 0.96 cap (15360 MiB, 3 % / 256 MiB reserve): its 0.7 group has no room for 0.3, so it is
  // not a node with a fitting group, and node-b's 0.1 group wins although node-a has fewer free GPUs.
  PoolNode a = node("node-a", 2);
  a.labels["nvidia.com/gpu.memory"] = "15360";
  Candidate c = evaluate_src({a, node("node-b", 4)},
                             {frac("x", "node-a", 70), frac("y", "node-b", 10), frac("p", "src", 30)});
  ASSERT_TRUE(c.feasible) << c.reason;
  EXPECT_EQ(c.placements[0], (Placement{"ml", "p", 30, "node-b", {0}}));
}

TEST(PackingKaiOrder, TheComputeModeDecidesWhetherAGroupFits) {  // CON-6 with CON-5b
  // node-a's group runs sm-sharing: a time-slicing 0.3 pod does not join it, so node-b's group wins.
  PoolPod sm = frac("x", "node-a", 50);
  sm.compute_mode = "sm-sharing";
  Candidate c = evaluate_src({node("node-a", 2), node("node-b", 4)},
                             {sm, frac("y", "node-b", 50), frac("p", "src", 30)});
  ASSERT_TRUE(c.feasible) << c.reason;
  EXPECT_EQ(c.placements[0], (Placement{"ml", "p", 30, "node-b", {0}}));
}

TEST(PackingKaiOrder, WholeGpusFewestFreeThenNodeName) {  // CON-6: unchanged for whole-GPU pods
  // node-a: 4 GPUs, 2 used; node-b: 8 GPUs, 6 used. Both have 2 free: node-a by name (KAI breaks the tie by name;
  // it does not prefer the more allocated node).
  Candidate tie = evaluate_src({node("node-b", 8), node("node-a", 4)},
                               {whole("a", "node-a", 2), whole("b", "node-b", 6), whole("p", "src", 1)});
  ASSERT_TRUE(tie.feasible) << tie.reason;
  EXPECT_EQ(tie.placements[0], (Placement{"ml", "p", 100, "node-a", {2}}));
  // A shared GPU does not attract a whole-GPU pod: node-a (a group, 3 free) loses to node-b (1 free).
  Candidate fewer = evaluate_src({node("node-a", 4), node("node-b", 2)},
                                 {frac("a", "node-a", 10), whole("b", "node-b", 1), whole("p", "src", 1)});
  ASSERT_TRUE(fewer.feasible) << fewer.reason;
  EXPECT_EQ(fewer.placements[0], (Placement{"ml", "p", 100, "node-b", {1}}));
}

TEST(PackingKaiOrder, RegistryKnowsKaiBinpackOnly) {  // DESIGN §7
  ASSERT_NE(find_strategy("kai-binpack"), nullptr);
  EXPECT_EQ(find_strategy("kai-binpack")->name(), "kai-binpack");
  EXPECT_EQ(find_strategy("best-fit"), nullptr);
  EXPECT_EQ(strategy_names(), std::vector<std::string>{"kai-binpack"});
  EXPECT_EQ(Options{}.strategy, "kai-binpack");
}

// ---------------------------------------------------------------- placement order = eviction order

Pool tainted_src(std::vector<PoolPod> src_pods) {
  PoolNode src = node("src", 4);
  src.consolidating_policy = "pool";
  src.taints.push_back({kConsolidatingTaint, "pool", "NoSchedule"});
  Pool pool{{node("node-a"), node("node-b"), src}, {frac("x", "node-a", 40), frac("y", "node-b", 50)}};
  for (PoolPod& p : src_pods) pool.pods.push_back(std::move(p));
  return pool;
}

TEST(PackingKaiOrder, TheDrainEvictsInThePlansOrder) {  // CON-6, CON-7 (3)
  DrainInput in;
  in.pool = tainted_src({frac("p1", "src", 50, "g1"), frac("p2", "src", 40, "g2"), frac("p3", "src", 10, "g2")});
  in.options.policy = "pool";
  in.drain = DrainUnderWay{"src", common::TimePoint{}};
  in.now = common::TimePoint{} + std::chrono::seconds(5);
  DrainDecision s = next_drain_step(in);
  ASSERT_EQ(s.action, DrainAction::kEvict) << s.message;
  const Candidate again = recheck_drain(in.pool, "src", in.options);
  ASSERT_EQ(s.evict.size(), again.placements.size());
  for (std::size_t i = 0; i < s.evict.size(); ++i) EXPECT_EQ(s.evict[i].name, again.placements[i].name) << i;
  EXPECT_EQ(s.evict[0].name, "p1");
  EXPECT_EQ(s.evict[2].name, "p3");
}

TEST(PackingKaiOrder, APodAPdbRefusesNowIsPlacedAfterTheOthers) {  // CON-6, CON-7 (3), CON-7a
  // The 0.5 pod's eviction is refused (429) and retried later: the 0.4 pod's replacement comes first and takes
  // node-a (0.8), the 0.5 one then node-b (1.0). Largest first would have sent 0.5 -> node-a, 0.4 -> node-b.
  PoolPod big = frac("big", "src", 50, "g1");
  big.unmovable = "PDB allows no disruption";
  Candidate c = recheck_drain(tainted_src({big, frac("small", "src", 40, "g2")}), "src", Options{});
  ASSERT_TRUE(c.feasible) << c.reason;
  ASSERT_EQ(c.placements.size(), 2u);
  EXPECT_EQ(c.placements[0], (Placement{"ml", "small", 40, "node-a", {0}}));
  EXPECT_EQ(c.placements[1], (Placement{"ml", "big", 50, "node-b", {0}}));
}

}  // namespace
}  // namespace kubex::decide::packing::test
