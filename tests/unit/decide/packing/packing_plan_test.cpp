// CON-4 candidates, CON-5 destinations, CON-6 placement (KAI's order: packing_kai_order_test.cpp), CON-10
// message, CON-11 numbers, the SPEC §9 example, and the CLI-2 drain sequence.
#include <gtest/gtest.h>

#include "decide/packing/strategy.h"
#include "packing_fixtures.h"

namespace kubex::decide::packing::test {
namespace {

Pool spec_example() {  // SPEC §9: three T4 nodes, one GPU each
  return Pool{{node("n1"), node("n2"), node("n3")},
              {frac("p1a", "n1", 50), frac("p1b", "n1", 25), frac("p2", "n2", 25), frac("p3", "n3", 50)}};
}

TEST(PackingPlan, SpecExampleStep1DrainsN2OntoN1) {  // SPEC §9 example, CON-4, CON-6
  Plan p = plan(spec_example(), threshold(75));
  ASSERT_GE(p.candidates.size(), 3u);
  EXPECT_EQ(p.candidates[0].node, "n2");
  EXPECT_EQ(p.candidates[1].node, "n3");
  EXPECT_TRUE(p.candidates[0].candidate && p.candidates[1].candidate);
  EXPECT_FALSE(p.candidates[2].candidate);  // n1 at 75 % is not below 75
  EXPECT_EQ(p.candidates[2].reason, "utilization 75% is not below 75%");
  const Candidate* first = p.first_feasible();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->node, "n2");
  ASSERT_EQ(first->placements.size(), 1u);
  // n1 and n3 both have a GPU group it fits on and no free GPU: n1 by name (KAI), which is also the best fit.
  EXPECT_EQ(first->placements[0], (Placement{"ml", "p2", 25, "n1", {0}}));
  EXPECT_EQ(p.message, "");
}

TEST(PackingPlan, SpecExampleStep2Status) {  // SPEC §9 example, CON-11
  Plan p = plan(spec_example(), {});
  EXPECT_EQ(p.pool_nodes, 3);
  EXPECT_EQ(p.gpu_capacity, 3);
  EXPECT_EQ(format_allocated(p.gpu_allocated), "1.50");
  EXPECT_EQ(p.estimated_reclaimable_gpus, 1);
}

TEST(PackingPlan, SpecExampleStep3NoCandidateMessage) {  // SPEC §9 example, CON-5, CON-10
  Pool after{{node("n1"), node("n2"), node("n3")},
             {frac("p1a", "n1", 50), frac("p1b", "n1", 25), frac("p2", "n1", 25), frac("p3", "n3", 50)}};
  Plan p = plan(after, {});
  EXPECT_EQ(p.first_feasible(), nullptr);
  EXPECT_EQ(p.message, "pool: 3 nodes, 3 GPUs, 1.50 allocated; best candidate n3 (50%): pod ml/p3 (0.5) does not fit");
  EXPECT_EQ(find_node(p, "n2")->not_destination, "empty");
}

TEST(PackingPlan, DrainSequenceOfTheSpecExample) {  // CLI-2 over the SPEC §9 example
  DrainSequence d = drain_sequence(spec_example(), {});
  ASSERT_EQ(d.steps.size(), 1u);
  EXPECT_EQ(d.steps[0].node, "n2");
  EXPECT_EQ(d.final_plan.message,
            "pool: 3 nodes, 3 GPUs, 1.50 allocated; best candidate n3 (50%): pod ml/p3 (0.5) does not fit");
  EXPECT_EQ(d.gpus_freed, 1);
  EXPECT_EQ(d.lower_bound_gpus, 2);
  EXPECT_EQ(d.gpus_in_use_after, 2);
}

TEST(PackingPlan, DrainSequenceChainsDrainsAndNeverReusesADrainedNode) {  // CLI-2, CON-5
  Pool pool{{node("a"), node("b"), node("c"), node("d")},
            {frac("pa", "a", 10), frac("pb", "b", 20), frac("pc", "c", 30), frac("pd", "d", 40)}};
  DrainSequence d = drain_sequence(pool, {});
  // Every node has a group that fits and no free GPU, so KAI's order is the node name (CON-6). a (10%) -> b (0.3);
  // then b (30%, before c by name): 0.2 and 0.1 -> c (0.6), not back to the drained a; then d (40%) -> c (1.00).
  ASSERT_EQ(d.steps.size(), 3u);
  EXPECT_EQ(d.steps[0].node, "a");
  EXPECT_EQ(d.steps[0].placements[0].to, "b");
  EXPECT_EQ(d.steps[1].node, "b");
  ASSERT_EQ(d.steps[1].placements.size(), 2u);
  EXPECT_EQ(d.steps[1].placements[0], (Placement{"ml", "pb", 20, "c", {0}}));
  EXPECT_EQ(d.steps[1].placements[1], (Placement{"ml", "pa", 10, "c", {0}}));
  EXPECT_EQ(d.steps[2].node, "d");
  EXPECT_EQ(d.steps[2].placements[0].to, "c");
  EXPECT_EQ(d.gpus_freed, 3);
  EXPECT_EQ(d.gpus_in_use_after, 1);
  EXPECT_EQ(d.final_plan.message, "pool: 4 nodes, 4 GPUs, 1.00 allocated; no node below 75% with movable GPU pods");
}

TEST(PackingPlan, CandidatesLowestUtilizationFirstThenName) {  // CON-4
  // b: 0.5/2 GPUs = 25 %, a: 0.25/1 = 25 % -> tie by name (a, b); c: 0.1/1 = 10 % first.
  Pool pool{{node("b", 2), node("a"), node("c"), node("full")},
            {frac("pb", "b", 50), frac("pa", "a", 25), frac("pc", "c", 10), frac("pf", "full", 90)}};
  Plan p = plan(pool, {});
  ASSERT_GE(p.candidates.size(), 3u);
  EXPECT_EQ(p.candidates[0].node, "c");
  EXPECT_EQ(p.candidates[1].node, "a");
  EXPECT_EQ(p.candidates[2].node, "b");
}

TEST(PackingPlan, UtilizationComparedExactlyAgainstThreshold) {  // CON-4: utilization < threshold
  Pool pool{{node("x", 3), node("y")}, {frac("p1", "x", 99), whole("p2", "x", 1), frac("py", "y", 10)}};
  // x: 1.99/3 = 66.33 %; threshold 67 -> candidate; threshold 66 -> not.
  EXPECT_TRUE(find_candidate(plan(pool, threshold(67)), "x")->candidate);
  auto c = find_candidate(plan(pool, threshold(66)), "x");
  EXPECT_FALSE(c->candidate);
  EXPECT_EQ(c->reason, "utilization 66.33% is not below 66%");
}

struct NotCandidateCase {
  const char* name;
  PoolNode node;
  std::vector<PoolPod> pods;
  std::string reason;
};

TEST(PackingPlan, WhyANodeIsNotACandidate) {  // CON-2, CON-4, CON-7
  auto unmovable = frac("u", "x", 10);
  unmovable.unmovable = "do-not-disrupt";
  auto tainted = node("x");
  tainted.consolidating_policy = "other";
  std::vector<NotCandidateCase> cases = {
      {"capacity 0", node("x", 0), {frac("f", "x", 10)}, "no GPU capacity"},
      {"no GPU pods", node("x"), {cpu_only("c", "x", 100)}, "no GPU pods"},
      {"at threshold", node("x"), {frac("f", "x", 75)}, "utilization 75% is not below 75%"},
      {"unmovable", node("x"), {frac("f", "x", 10), unmovable}, "unmovable pod ml/u: do-not-disrupt"},
      {"already draining", tainted, {frac("f", "x", 10)}, "already draining for policy other"},
  };
  for (const auto& tc : cases) {
    Pool pool{{tc.node, node("y")}, tc.pods};
    pool.pods.push_back(frac("py", "y", 10));
    auto c = find_candidate(plan(pool, {}), "x");
    ASSERT_TRUE(c.has_value()) << tc.name;
    EXPECT_FALSE(c->candidate) << tc.name;
    EXPECT_EQ(c->reason, tc.reason) << tc.name;
  }
}

TEST(PackingPlan, UnmovableNonGpuPodDoesNotBlock) {  // CON-4: only unmovable GPU pods block
  auto daemon = cpu_only("ds", "x", 100);
  daemon.unmovable = "owned by a DaemonSet";
  Pool pool{{node("x"), node("y")}, {frac("f", "x", 10), daemon, frac("py", "y", 10)}};
  EXPECT_TRUE(find_candidate(plan(pool, {}), "x")->candidate);
}

struct DestinationCase {
  const char* name;
  PoolNode node;
  bool with_pod;
  std::string not_destination;
};

TEST(PackingPlan, Destinations) {  // CON-5, CON-3
  auto not_ready = node("d");
  not_ready.ready = false;
  auto cordoned = node("d");
  cordoned.unschedulable = true;
  auto tainted = node("d");
  tainted.consolidating_policy = "p";
  tainted.taints.push_back({kConsolidatingTaint, "p", "NoSchedule"});
  std::vector<DestinationCase> cases = {
      {"ready with a pod", node("d"), true, ""},
      {"empty", node("d"), false, "empty"},
      {"not ready", not_ready, true, "not ready"},
      {"unschedulable", cordoned, true, "unschedulable"},
      {"consolidating", tainted, true, "consolidating for policy p"},
      {"no capacity", node("d", 0), true, "no GPU capacity"},
  };
  for (const auto& tc : cases) {
    Pool pool{{node("c"), tc.node}, {frac("pc", "c", 10)}};
    if (tc.with_pod) pool.pods.push_back(frac("pd", "d", 10));
    Plan p = plan(pool, {});
    EXPECT_EQ(find_node(p, "d")->not_destination, tc.not_destination) << tc.name;
    EXPECT_EQ(find_node(p, "d")->destination, tc.not_destination.empty()) << tc.name;
    auto c = find_candidate(p, "c");
    EXPECT_EQ(c->feasible, tc.not_destination.empty()) << tc.name;
    if (!tc.not_destination.empty()) {
      EXPECT_EQ(c->reason, "pod ml/pc (0.1) does not fit") << tc.name;
    }
  }
}

TEST(PackingPlan, OverCapacityNodeIsNoDestination) {  // CON-3
  Pool pool{{node("c"), node("d")}, {frac("pc", "c", 10), frac("a", "d", 60, "g1"), frac("b", "d", 60, "g1")}};
  Plan p = plan(pool, {});
  EXPECT_TRUE(find_node(p, "d")->over_capacity);
  EXPECT_EQ(find_node(p, "d")->not_destination, "over capacity");
  EXPECT_FALSE(find_candidate(p, "c")->feasible);
}

TEST(PackingPlan, FractionGoesToTheFullestFittingGroupOfTheFirstNode) {  // CON-6
  // d1 GPUs [0.8, 0.5] (larger group first), d2 [0.7]: both nodes have a group 0.2 fits on and no free GPU, so d1
  // by name, and there its fullest group that fits, GPU0 (0.8 -> 1.0).
  Pool pool{{node("c"), node("d1", 2), node("d2")},
            {frac("p", "c", 20), frac("a", "d1", 50, "g1"), frac("b", "d1", 80, "g2"), frac("e", "d2", 70)}};
  auto c = find_candidate(plan(pool, {}), "c");
  ASSERT_TRUE(c->feasible);
  EXPECT_EQ(c->placements[0], (Placement{"ml", "p", 20, "d1", {0}}));
}

TEST(PackingPlan, FractionTiesByNodeNameThenGpuIndex) {  // CON-6
  Pool pool{{node("c"), node("zz", 2), node("aa", 2)},
            {frac("p", "c", 20), frac("z0", "zz", 50, "g1"), frac("z1", "zz", 50, "g2"), frac("a0", "aa", 50, "g1"),
             frac("a1", "aa", 50, "g2")}};
  EXPECT_EQ(find_candidate(plan(pool, {}), "c")->placements[0], (Placement{"ml", "p", 20, "aa", {0}}));
}

TEST(PackingPlan, PlacementOrderWholeFirstThenFractionsLargestFirstThenName) {  // CON-6
  // d has one free GPU and a GPU at 0.5. Whole pod first takes the free GPU; then 0.5 "a" fits the 0.5 GPU and
  // 0.5 "b" does not fit: the reason names b (name order among equals).
  Pool pool{{node("c", 4), node("d", 2)},
            {frac("b", "c", 50), frac("a", "c", 50), whole("w", "c", 1), frac("x", "d", 50)}};
  auto c = find_candidate(plan(pool, {}), "c");
  EXPECT_FALSE(c->feasible);
  EXPECT_EQ(c->reason, "pod ml/b (0.5) does not fit");
}

TEST(PackingPlan, WholeGpuPodGoesToNodeWithFewestFreeGpusThatStillHasK) {  // CON-6
  Pool pool{{node("c", 4), node("d3", 4), node("d2", 4), node("d1", 4)},
            {whole("w", "c", 2), frac("x3", "d3", 10), frac("x2", "d2", 10, "g1"), frac("y2", "d2", 10, "g2"),
             frac("x1", "d1", 10, "g1"), frac("y1", "d1", 10, "g2"), frac("z1", "d1", 10, "g3")}};
  // free GPUs: d1 1, d2 2, d3 3 -> d2 (fewest that still has 2), GPUs 2 and 3.
  auto c = find_candidate(plan(pool, {}), "c");
  ASSERT_TRUE(c->feasible) << c->reason;
  EXPECT_EQ(c->placements[0], (Placement{"ml", "w", 200, "d2", {2, 3}}));
}

TEST(PackingPlan, WholeGpuPodReasonShowsItsSize) {  // CON-6
  Pool pool{{node("c", 4), node("d", 2)}, {whole("w", "c", 2), frac("x", "d", 10)}};
  EXPECT_EQ(find_candidate(plan(pool, {}), "c")->reason, "pod ml/w (2) does not fit");
}

TEST(PackingPlan, PlacementsOfOnePlanAddUp) {  // CON-6: per-GPU sum ≤ 1.00 across the plan's own placements
  Pool pool{{node("c"), node("d")}, {frac("a", "c", 30), frac("b", "c", 30), frac("x", "d", 50)}};
  auto c = find_candidate(plan(pool, threshold(100)), "c");
  EXPECT_FALSE(c->feasible);
  EXPECT_EQ(c->reason, "pod ml/b (0.3) does not fit");
}

TEST(PackingPlan, NoCandidateMessageWithoutCandidates) {  // CON-10
  Pool pool{{node("a"), node("b")}, {frac("x", "a", 80), frac("y", "b", 90)}};
  EXPECT_EQ(plan(pool, threshold(50)).message,
            "pool: 2 nodes, 2 GPUs, 1.70 allocated; no node below 50% with movable GPU pods");
}

TEST(PackingPlan, EstimatedReclaimableNeverNegative) {  // CON-11
  Pool pool{{node("a")}, {frac("x", "a", 90), frac("y", "a", 90)}};
  Plan p = plan(pool, {});
  EXPECT_EQ(p.estimated_reclaimable_gpus, 0);
  Pool roomy{{node("a", 8)}, {whole("x", "a", 1), frac("y", "a", 1)}};
  EXPECT_EQ(plan(roomy, {}).estimated_reclaimable_gpus, 6);  // 8 - ceil(1.01)
}

TEST(PackingPlan, StopAtFirstFeasibleLeavesLaterCandidatesUnevaluated) {  // CON-7 only drains the first
  Options o;
  o.stop_at_first_feasible = true;
  Plan p = plan(spec_example(), o);
  EXPECT_TRUE(p.candidates[0].feasible);
  EXPECT_FALSE(p.candidates[1].feasible);
  EXPECT_EQ(p.candidates[1].reason, "not evaluated");
}

TEST(PackingStrategy, UnknownStrategyIsAnError) {  // DESIGN §7 (the registry: packing_kai_order_test.cpp)
  EXPECT_EQ(find_strategy("spread"), nullptr);
  Options o;
  o.strategy = "spread";
  Plan p = plan(spec_example(), o);
  EXPECT_EQ(p.error, "unknown placement strategy \"spread\"");
  EXPECT_TRUE(p.candidates.empty());
}

}  // namespace
}  // namespace kubex::decide::packing::test
