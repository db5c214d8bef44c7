// ACT-3: the budget, the pods in flight, the order, and the max-unavailable-exceeded check.
#include <gtest/gtest.h>

#include "actuation_fixtures.h"
#include "decide/actuation/steps.h"

namespace kubex::decide::actuation::test {
namespace {

struct BudgetCase {
  bool respect;
  const char* max_unavailable;
  std::optional<std::int64_t> replicas;
  int budget;
};

TEST(ActuationBudget, Table) {
  const BudgetCase cases[] = {
      {false, "5", 10, 1},  // without respectWorkloadMaxUnavailable the budget is 1
      {true, "", 10, 1},    // no rolling-update maxUnavailable
      {true, "0", 10, 1},   // max(1, 0)
      {true, "1", 10, 1},
      {true, "3", 10, 3},
      {true, "25%", 3, 1},  // 0.75 rounded down = 0, then max(1, 0)
      {true, "25%", 4, 1},
      {true, "25%", 8, 2},
      {true, "50%", 5, 2},  // 2.5 rounded down
      {true, "100%", 3, 3},
      {true, "0%", 10, 1},
      {true, "50%", std::nullopt, 1},  // spec.replicas absent: Kubernetes' default of 1
      {true, "50%", 0, 1},
      {true, "-1", 10, 1},  // invalid text gives 1
      {true, "abc", 10, 1},
      {true, "2.5", 10, 1},
      {true, "%", 10, 1},
      {true, "150%", 10, 1},  // above 100 % is invalid
      {true, " 2", 10, 1},
      {true, "99999999999999999999", 10, 1},
  };
  for (const BudgetCase& c : cases) {
    EXPECT_EQ(budget(c.respect, c.max_unavailable, c.replicas), c.budget)
        << c.respect << " " << c.max_unavailable << " " << c.replicas.value_or(-1);
  }
}

// Pods that are not Ready, or are terminating, count as in flight; finished pods are gone from the workload.
TEST(ActuationInFlight, Table) {
  PodFacts ready = pod("a", {});
  PodFacts failed = not_ready(pod("f", {}));
  failed.phase = "Failed";
  PodFacts succeeded = not_ready(pod("s", {}));
  succeeded.phase = "Succeeded";
  PodFacts pending = not_ready(pod("p", {}));
  pending.phase = "Pending";
  EXPECT_EQ(in_flight({}), 0);
  EXPECT_EQ(in_flight({ready}), 0);
  EXPECT_EQ(in_flight({ready, not_ready(pod("b", {}))}), 1);
  EXPECT_EQ(in_flight({ready, terminating(pod("b", {}))}), 1);               // Ready but terminating
  EXPECT_EQ(in_flight({terminating(not_ready(pod("b", {}))), pending}), 2);  // counted once each
  EXPECT_EQ(in_flight({ready, failed, succeeded}), 0);
}

// Oldest Ready first, then by name; pods that are not Ready last, by name.
TEST(ActuationInFlight, AReplicaWithNoPodYetIsInFlight) {  // ACT-3
  const PodFacts ready = pod("a", {});
  // The evicted pod is gone and the ReplicaSet has not created its replacement yet: 3 of 4 replicas exist.
  EXPECT_EQ(in_flight({ready, pod("b", {}), pod("c", {})}, 4, {}), 1);
  EXPECT_EQ(in_flight({ready, pod("b", {}), pod("c", {}), pod("d", {})}, 4, {}), 0);
  EXPECT_EQ(in_flight({ready, not_ready(pod("b", {}))}, 4, {}), 3);  // two missing, one not Ready
  EXPECT_EQ(in_flight({ready, not_ready(pod("b", {}))}, std::nullopt, {}), 1);  // no spec.replicas: the pods alone
  EXPECT_EQ(in_flight({ready, pod("b", {})}, 1, {}), 0);  // more pods than replicas (a scale-in under way)
}

// ACT-3b: a replacement (created after the last eviction) counts as in flight until it has been Ready for
// minReadyDuration with no container restart in that time; pods from before the eviction count as ACT-3 says.
TEST(ActuationInFlight, AReplacementCountsUntilItIsStable) {
  const common::TimePoint evicted = kNow - 5min;
  const Settling settling{evicted, 10s, kNow};
  PodFacts old = pod("a", {}, 2h);
  PodFacts settled = pod("r", {}, 4min);  // Ready since 4 min, no restart
  PodFacts fresh = pod("r", {}, 4min);
  fresh.ready_since = kNow - 5s;  // Ready for 5 s only
  PodFacts restarted = pod("r", {}, 4min);
  restarted.last_restart = kNow - 3s;  // Ready all along, by its condition, but a container restarted 3 s ago
  PodFacts looping = pod("r", {}, 4min);  // between two crash-loop restarts: Ready again for 2 s
  looping.ready_since = kNow - 2s;
  looping.last_restart = kNow - 2s;
  EXPECT_EQ(in_flight({old, settled}, 2, settling), 0);
  EXPECT_EQ(in_flight({old, fresh}, 2, settling), 1);
  EXPECT_EQ(in_flight({old, restarted}, 2, settling), 1);
  EXPECT_EQ(in_flight({old, looping}, 2, settling), 1);
  EXPECT_EQ(in_flight({old, looping}, 2, Settling{std::nullopt, 10s, kNow}), 0);  // no eviction: plain ACT-3
  PodFacts young_old = pod("a", {}, 6min);
  young_old.ready_since = kNow - 1s;  // created before the eviction: not a replacement
  EXPECT_EQ(in_flight({young_old, settled}, 2, settling), 0);
}

// ACT-3b in decide(): the crash-looping replacement of the first evicted pod, Ready for an instant between two
// restarts, never lets the next replica go; once it has been stable for minReadyDuration the next one goes, and the
// decision asks to look again when it settles.
TEST(ActuationBudget, ACrashLoopingReplacementHoldsTheNextEviction) {
  Input in = starter({pod("b", one(frac("app", 25)), 2h), pod("c", one(frac("app", 25)), 1h)});
  in.workload.replicas = 3;
  in.last_eviction = kNow - 60s;
  PodFacts r = pod("r", one(frac("app", 50)), 50s);
  r.ready_since = kNow - 1s;  // Ready again after its first restart
  r.last_restart = kNow - 1s;
  in.workload.pods.push_back(r);
  Plan plan = decide(in);
  EXPECT_TRUE(plan.evict.empty());
  EXPECT_EQ(names(find(plan, "b")->failed), (std::vector<std::string>{"max-unavailable-exceeded"}));
  EXPECT_LE(plan.requeue_after, in.settings.min_ready_duration);
  in.workload.pods.back().ready_since = kNow - 20s;
  in.workload.pods.back().last_restart = kNow - 20s;
  EXPECT_EQ(decide(in).evict, (std::vector<std::string>{"b"}));
}

TEST(ActuationOrder, OldestReadyFirstThenName) {
  std::vector<PodFacts> pods = {pod("c", {}, 1h), pod("b", {}, 2h), pod("a", {}, 1h),
                                not_ready(pod("0", {}, 5h)), pod("d", {}, 3h)};
  pods[3].ready_since = kNow - 9h;  // a stale transition time does not put a non-Ready pod first
  std::vector<std::string> got;
  for (std::size_t i : order(pods)) got.push_back(pods[i].name);
  EXPECT_EQ(got, (std::vector<std::string>{"d", "b", "a", "c", "0"}));
}

// A pod is evicted only while in flight < budget; otherwise max-unavailable-exceeded.
TEST(ActuationBudget, WithinBudget) {
  EXPECT_TRUE(within_budget(0, 1));
  EXPECT_FALSE(within_budget(1, 1));
  EXPECT_TRUE(within_budget(1, 2));
  EXPECT_FALSE(within_budget(3, 2));
}

// The starter example: budget max(1, 25% of 3) = 1, so one pod at a time; while the replacement is not Ready
// nothing else goes and the check is logged only (a transient wait, OBS-3).
TEST(ActuationBudget, OnePodAtATimeInDecide) {
  Input in = starter({pod("a", one(frac("app", 25)), 3h), pod("b", one(frac("app", 25)), 2h),
                      pod("c", one(frac("app", 25)), 1h)});
  Plan plan = decide(in);
  EXPECT_EQ(plan.budget, 1);
  EXPECT_EQ(plan.evict, (std::vector<std::string>{"a"}));
  EXPECT_EQ(find(plan, "b")->failed, (std::vector<Check>{{"max-unavailable-exceeded", ""}}));
  EXPECT_EQ(find(plan, "b")->result, Result::kBlockedRetrying);
  EXPECT_FALSE(find(plan, "b")->write_constraints);

  // a was evicted: it terminates, its replacement r (in sync) is Pending.
  in.workload.pods[0] = terminating(in.workload.pods[0]);
  in.workload.pods.push_back(not_ready(pod("r", one(frac("app", 50)), 1s)));
  plan = decide(in);
  EXPECT_EQ(plan.in_flight, 2);
  EXPECT_TRUE(plan.evict.empty());
  EXPECT_EQ(names(find(plan, "a")->failed), (std::vector<std::string>{"pod-terminating"}));
  EXPECT_EQ(names(find(plan, "b")->failed), (std::vector<std::string>{"max-unavailable-exceeded"}));
  EXPECT_EQ(find(plan, "r")->result, Result::kInSync);

  // a is gone and r is Ready: b, the oldest Ready, goes next.
  in.workload.pods.erase(in.workload.pods.begin());
  in.workload.pods.back().ready = true;
  plan = decide(in);
  EXPECT_EQ(plan.evict, (std::vector<std::string>{"b"}));
}

// With maxUnavailable 2 of 4, two pods go in one decision, oldest Ready first; one already in flight leaves
// one.
TEST(ActuationBudget, SeveralWithinOneDecision) {
  Input in = starter({pod("a", one(frac("app", 25)), 1h), pod("b", one(frac("app", 25)), 4h),
                      pod("c", one(frac("app", 25)), 2h), pod("d", one(frac("app", 25)), 3h)});
  in.workload.max_unavailable = "2";
  in.workload.replicas = 4;
  EXPECT_EQ(decide(in).evict, (std::vector<std::string>{"b", "d"}));
  in.workload.pods.push_back(not_ready(pod("n", one(frac("app", 50)), 1s)));
  EXPECT_EQ(decide(in).evict, (std::vector<std::string>{"b"}));
  in.settings.respect_max_unavailable = false;
  EXPECT_TRUE(decide(in).evict.empty());  // budget 1, one in flight
}

}  // namespace
}  // namespace kubex::decide::actuation::test


namespace kubex::decide::actuation::test {
namespace {

// ACT-3 expectations: which sent evictions are still expected, per what the cache shows of the pod.
TEST(ActuationExpectations, PendingUntilTheCacheShowsThePodTerminatingOrGone) {
  struct Case {
    const char* what;
    std::vector<PodFacts> pods;
    common::Duration sent_ago;
    bool pending;
  };
  const Case cases[] = {
      {"cache still shows it running: in flight", {pod("a", one(frac("app", 25)))}, 10ms, true},
      {"cache shows it terminating: its own state counts", {terminating(pod("a", one(frac("app", 25))))}, 10ms,
       false},
      {"cache no longer has it: gone", {pod("b", one(frac("app", 25)))}, 10ms, false},
      {"finished", {[] {
         PodFacts p = pod("a", one(frac("app", 25)));
         p.phase = "Succeeded";
         return p;
       }()},
       10ms, false},
      {"just under the timeout", {pod("a", one(frac("app", 25)))}, kEvictionExpectationTimeout - 1s, true},
      {"past the timeout: the eviction did not take", {pod("a", one(frac("app", 25)))}, kEvictionExpectationTimeout,
       false},
  };
  for (const Case& c : cases) {
    const std::map<std::string, common::TimePoint> sent = {{"uid-a", kNow - c.sent_ago}};
    auto pending = pending_evictions(sent, c.pods, kNow);
    EXPECT_EQ(pending.count("uid-a") == 1, c.pending) << c.what;
  }
}

// ACT-3: a release of held-back work (two reconciles before the cache shows the first eviction) evicts one pod
// once: the second decision counts the sent eviction in flight and neither evicts another pod nor the same one.
TEST(ActuationExpectations, ASentEvictionCountsInFlightUntilTheCacheCatchesUp) {
  Input in = starter({pod("a", one(frac("app", 25)), 3h), pod("b", one(frac("app", 25)), 2h),
                      pod("c", one(frac("app", 25)), 1h), pod("d", one(frac("app", 25)), 1h)});
  in.workload.replicas = 4;  // maxUnavailable 25 % of 4 = budget 1
  Plan first = decide(in);
  ASSERT_EQ(first.evict, std::vector<std::string>{"a"});
  // The controller records the accepted eviction; the cache has not seen it yet.
  in.sent_evictions = {{"uid-a", kNow}};
  in.now = kNow + 12ms;
  Plan second = decide(in);
  EXPECT_TRUE(second.evict.empty());
  EXPECT_EQ(second.in_flight, 1);
  EXPECT_EQ(second.pending_evictions.count("uid-a"), 1u);
  for (const PodPlan& pp : second.pods) {
    if (pp.name == "a") {
      EXPECT_EQ(names(pp.failed), std::vector<std::string>{check::kPodTerminating});
    }
    if (pp.name == "b") {
      EXPECT_EQ(names(pp.failed), std::vector<std::string>{check::kMaxUnavailableExceeded});
    }
  }
  // Once the cache shows it gone and its replacement Ready at the new size, the next pod goes.
  in.workload.pods.erase(in.workload.pods.begin());
  in.workload.pods.push_back(pod("e", one(frac("app", 50)), 1min));
  Plan third = decide(in);
  EXPECT_TRUE(third.pending_evictions.empty());
  EXPECT_EQ(third.evict, std::vector<std::string>{"b"});
}

}  // namespace
}  // namespace kubex::decide::actuation::test
