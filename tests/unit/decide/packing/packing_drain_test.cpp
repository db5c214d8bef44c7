// The drain lifecycle (CON-7, CON-7a, CON-8, CON-9, CON-10, CON-11): next_drain_step() per transition.
#include <gtest/gtest.h>

#include "decide/packing/drain.h"
#include "packing_fixtures.h"

namespace kubex::decide::packing::test {
namespace {

using namespace std::chrono_literals;

const common::TimePoint kNow = common::TimePoint{std::chrono::seconds(1'800'000'000)};

// The SPEC §9 example: n2's 0.25 goes to n1 (n1 and n3 both have a group it fits, no free GPU: name).
Pool example() {
  return {{node("n1"), node("n2"), node("n3")}, {frac("p1", "n1", 50), frac("p4", "n1", 25), frac("p2", "n2", 25),
                                                  frac("p3", "n3", 50)}};
}

DrainInput input(Pool pool) {
  DrainInput in;
  in.pool = std::move(pool);
  in.options.threshold_percent = 75;
  in.options.policy = "pool";
  in.now = kNow;
  return in;
}

Pool tainted(Pool pool, const std::string& node) {
  for (PoolNode& n : pool.nodes) {
    if (n.name != node) continue;
    n.consolidating_policy = "pool";
    n.taints.push_back({kConsolidatingTaint, "pool", "NoSchedule"});
  }
  return pool;
}

TEST(DrainLifecycle, NoDrainAndAFeasibleCandidateTaintsIt) {  // CON-7
  DrainDecision s = next_drain_step(input(example()));
  EXPECT_EQ(s.action, DrainAction::kTaint);
  EXPECT_EQ(s.node, "n2");
  EXPECT_EQ(s.reason, "Draining");
  EXPECT_EQ(s.message, "draining node n2 (25%): ml/p2 (0.25) -> n1");
  ASSERT_EQ(s.placements.size(), 1u);
  EXPECT_EQ(s.plan.gpu_capacity, 3);
}

TEST(DrainLifecycle, DryRunWouldDrain) {  // CON-11
  DrainInput in = input(example());
  in.dry_run = true;
  DrainDecision s = next_drain_step(in);
  EXPECT_EQ(s.action, DrainAction::kWouldDrain);
  EXPECT_EQ(s.reason, "WouldDrain");
  EXPECT_EQ(s.message, "dry run: would drain node n2 (25%): ml/p2 (0.25) -> n1");
}

TEST(DrainLifecycle, AnotherPolicyDrainingAnOverlappingPoolMeansWait) {  // CON-9
  DrainInput in = input(example());
  in.other_draining = "other (node n9)";
  DrainDecision s = next_drain_step(in);
  EXPECT_EQ(s.action, DrainAction::kReport);
  EXPECT_EQ(s.reason, "");  // the condition stays as it is
}

TEST(DrainLifecycle, NoFeasibleCandidateReportsNoCandidate) {  // CON-10
  Pool p{{node("n1"), node("n3")}, {frac("p1", "n1", 75), frac("p2", "n1", 25), frac("p3", "n3", 50)}};
  DrainDecision s = next_drain_step(input(p));
  EXPECT_EQ(s.action, DrainAction::kReport);
  EXPECT_EQ(s.reason, "NoCandidate");
  EXPECT_EQ(s.message, "pool: 2 nodes, 2 GPUs, 1.50 allocated; best candidate n3 (50%): pod ml/p3 (0.5) does not fit");
}

TEST(DrainLifecycle, UnderWayItEvictsThePodsNotYetLeaving) {  // CON-7 (3), CON-7a
  DrainInput in = input(tainted(example(), "n2"));
  in.drain = DrainUnderWay{"n2", kNow - 10s};
  DrainDecision s = next_drain_step(in);
  EXPECT_EQ(s.action, DrainAction::kEvict);
  ASSERT_EQ(s.evict.size(), 1u);
  EXPECT_EQ(s.evict[0].name, "p2");
  EXPECT_EQ(s.reason, "Draining");
}

TEST(DrainLifecycle, UnderWayWithEveryPodLeavingItWaits) {  // CON-7
  Pool p = tainted(example(), "n2");
  for (PoolPod& pod : p.pods) {
    if (pod.name != "p2") continue;
    pod.leaving = true;
    pod.unmovable = "PDB allows no disruption";  // the eviction it got spent its budget: still only leaving
  }
  DrainInput in = input(p);
  in.drain = DrainUnderWay{"n2", kNow - 10s};
  EXPECT_EQ(next_drain_step(in).action, DrainAction::kWait);
}

TEST(DrainLifecycle, NoGpuPodLeftCompletesTheDrain) {  // CON-8
  Pool p = tainted(example(), "n2");
  for (PoolPod& pod : p.pods)
    if (pod.name == "p2") pod.node = "n1";  // rescheduled
  DrainInput in = input(p);
  in.drain = DrainUnderWay{"n2", kNow - 30s};
  DrainDecision s = next_drain_step(in);
  EXPECT_EQ(s.action, DrainAction::kComplete);
  EXPECT_EQ(s.reason, "Drained");
  EXPECT_EQ(s.message, "node n2 drained: its GPU pods moved to other pool nodes");
}

TEST(DrainLifecycle, PodsLeftAfterTheTimeoutBlockTheDrain) {  // CON-8
  DrainInput in = input(tainted(example(), "n2"));
  in.drain = DrainUnderWay{"n2", kNow - 10min};
  DrainDecision s = next_drain_step(in);
  EXPECT_EQ(s.action, DrainAction::kBlock);
  EXPECT_EQ(s.reason, "DrainBlocked");
  EXPECT_TRUE(s.warning);
  EXPECT_EQ(s.message, "node n2 still runs 1 GPU pod(s) 10m0s after the drain started (ml/p2); its taint was removed");
}

TEST(DrainLifecycle, ADestinationFilledMeanwhileAbortsTheDrain) {  // CON-7a
  Pool p = tainted(example(), "n2");
  p.pods.push_back(frac("newcomer", "n1", 25));  // n1 is full now; n3 has 0.5 left, so fill it too
  p.pods.push_back(frac("newcomer2", "n3", 50));
  DrainInput in = input(p);
  in.drain = DrainUnderWay{"n2", kNow - 5s};
  DrainDecision s = next_drain_step(in);
  EXPECT_EQ(s.action, DrainAction::kAbort);
  EXPECT_EQ(s.reason, "DrainAborted");
  EXPECT_TRUE(s.warning);
  EXPECT_EQ(s.message, "drain of node n2 aborted: pod ml/p2 (0.25) does not fit; its taint was removed");
}

TEST(DrainLifecycle, APodBecomingUnmovableAbortsTheDrain) {  // CON-7a
  Pool p = tainted(example(), "n2");
  for (PoolPod& pod : p.pods)
    if (pod.name == "p2") pod.unmovable = "do-not-disrupt";
  DrainInput in = input(p);
  in.drain = DrainUnderWay{"n2", kNow - 5s};
  DrainDecision s = next_drain_step(in);
  EXPECT_EQ(s.action, DrainAction::kAbort);
  EXPECT_EQ(s.message, "drain of node n2 aborted: unmovable pod ml/p2: do-not-disrupt; its taint was removed");
}

TEST(DrainLifecycle, ABudgetSpentByTheDrainItselfDoesNotAbortIt) {  // CON-7 (3), CON-7a
  // Two replicas under a PDB allowing one disruption: the first eviction spends it, the second pod's 429 is
  // retried rather than read as "unmovable".
  Pool p = tainted(example(), "n2");
  for (PoolPod& pod : p.pods)
    if (pod.name == "p2") pod.unmovable = "PDB allows no disruption";
  DrainInput in = input(p);
  in.drain = DrainUnderWay{"n2", kNow - 5s};
  DrainDecision s = next_drain_step(in);
  EXPECT_EQ(s.action, DrainAction::kEvict);
  ASSERT_EQ(s.evict.size(), 1u);
  EXPECT_EQ(s.evict[0].name, "p2");
}

TEST(DrainLifecycle, APodAlreadyLeavingIsNotPlacedTwice) {  // CON-7a: its replacement already took its room
  Pool p = tainted(example(), "n2");
  p.pods.push_back(frac("p5", "n2", 25));
  for (PoolPod& pod : p.pods) {
    if (pod.name != "p2") continue;
    pod.leaving = true;
    pod.unmovable = "PDB allows no disruption";  // what CON-4 names first once its eviction spent the budget
  }
  p.pods.push_back(frac("p2-replacement", "n1", 25));  // n1 is full now; p5 goes to n3
  Candidate c = recheck_drain(p, "n2", Options{});
  ASSERT_TRUE(c.feasible) << c.reason;
  ASSERT_EQ(c.placements.size(), 1u);
  EXPECT_EQ(c.placements[0].name, "p5");
  EXPECT_EQ(c.placements[0].to, "n3");
}

}  // namespace
}  // namespace kubex::decide::packing::test
