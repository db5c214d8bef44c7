// ACT-4 and ACT-5: what each Eviction answer means, and how it folds back into the plan (constraints, memory,
// requeue, summary).
#include <gtest/gtest.h>

#include "actuation_fixtures.h"
#include "decide/actuation/steps.h"

namespace kubex::decide::actuation::test {
namespace {

struct Case {
  EvictionAnswer status;
  bool retry_pdb;
  Result result;
  std::optional<common::Duration> retry_after;
  const char* constraint;
  bool remember;
  const char* metric;
  bool event_evicted, event_blocked;
};

TEST(ActuationEvictionResult, Table) {
  const Case cases[] = {
      // ACT-4: accepted (200/201); PolicyEvaluationEvictResize on the pod.
      {EvictionAnswer::kAccepted, true, Result::kEvicted, std::nullopt, "", false, "success", true, false},
      {EvictionAnswer::kAccepted, false, Result::kEvicted, std::nullopt, "", false, "success", true, false},
      // 404 (or a uid precondition naming another pod): the pod is gone, which is success (no event on a pod that is not there).
      {EvictionAnswer::kGone, true, Result::kEvicted, std::nullopt, "", false, "success", false, false},
      // ACT-5: 429 with retryPodDisruptionBudget: retry after resizeRetryInterval.
      {EvictionAnswer::kRefusedByBudget, true, Result::kBlockedRetrying, 30s, "", false, "pdb_blocked", false, true},
      // ACT-5: 429 without: pdb-blocked, no retry until the desired value or the pod changes.
      {EvictionAnswer::kRefusedByBudget, false, Result::kBlocked, std::nullopt, "pdb-blocked", true, "pdb_blocked", false, true},
      // Any other answer (5xx, 403, a conflict, none at all) is retried after resizeRetryInterval, whatever
      // retryPodDisruptionBudget says.
      {EvictionAnswer::kFailed, false, Result::kBlockedRetrying, 30s, "", false, "error", false, false},
      {EvictionAnswer::kFailed, true, Result::kBlockedRetrying, 30s, "", false, "error", false, false},
  };
  for (const Case& c : cases) {
    const EvictionOutcome o = on_eviction_result(c.status, c.retry_pdb, 30s);
    EXPECT_EQ(o.result, c.result) << static_cast<int>(c.status);
    EXPECT_EQ(o.retry_after, c.retry_after) << static_cast<int>(c.status);
    EXPECT_EQ(o.constraint, c.constraint) << static_cast<int>(c.status);
    EXPECT_EQ(o.remember, c.remember) << static_cast<int>(c.status);
    EXPECT_STREQ(o.metric, c.metric) << static_cast<int>(c.status);
    EXPECT_EQ(o.event_evicted, c.event_evicted) << static_cast<int>(c.status);
    EXPECT_EQ(o.event_blocked, c.event_blocked) << static_cast<int>(c.status);
  }
}

// ACT-5 with retryPodDisruptionBudget: the summary says BLOCKED_RETRYING, the requeue is the retry interval,
// and nothing is written on the pod.
TEST(ActuationEvictionResult, PdbRefusalRetried) {
  Input in = starter({pod("a", one(frac("app", 25)), 3h), pod("b", one(frac("app", 25)), 2h)});
  in.settings.resize_retry_interval = 20s;
  Plan plan = decide(in);
  ASSERT_EQ(plan.evict, (std::vector<std::string>{"a"}));
  EXPECT_EQ(plan.result, Result::kEvicted);
  apply_outcome(plan, in, "a", on_eviction_result(EvictionAnswer::kRefusedByBudget, true, in.settings.resize_retry_interval));
  EXPECT_EQ(plan.result, Result::kBlockedRetrying);
  EXPECT_EQ(plan.pod, "a");
  EXPECT_EQ(plan.failed, (std::vector<Check>{{"pdb-blocked", ""}}));
  EXPECT_EQ(plan.requeue_after, 20s);
  EXPECT_TRUE(plan.pdb_blocked.empty());
  EXPECT_FALSE(find(plan, "a")->write_constraints);
}

// ACT-5 without retryPodDisruptionBudget: pdb-blocked is recorded, remembered, and the pod is not tried again
// until the desired value or the pod changes.
TEST(ActuationEvictionResult, PdbRefusalRemembered) {
  Input in = starter({pod("a", one(frac("app", 25)), 3h), pod("b", one(frac("app", 25)), 2h)});
  in.settings.retry_pdb = false;
  Plan plan = decide(in);
  apply_outcome(plan, in, "a", on_eviction_result(EvictionAnswer::kRefusedByBudget, false, in.settings.resize_retry_interval));
  EXPECT_EQ(plan.result, Result::kBlocked);
  EXPECT_EQ(plan.failed, (std::vector<Check>{{"pdb-blocked", "pdb-blocked"}}));
  EXPECT_EQ(find(plan, "a")->constraints, (std::vector<std::string>{"pdb-blocked"}));
  EXPECT_EQ(find(plan, "a")->write_constraints,
            std::optional<std::string>(R"([{"reason":"pdb-blocked","targets":[]}])"));
  const std::string key = pdb_key("uid-a", "app=0.5f");
  EXPECT_EQ(plan.pdb_blocked, (std::set<std::string>{key}));

  // Next reconcile: a is not tried (the next pod, b, is), and the constraint is already there.
  in.pdb_blocked = plan.pdb_blocked;
  in.workload.pods[0] = with_annotation(in.workload.pods[0], api::keys::kAutomationConstraints,
                                        R"([{"reason":"pdb-blocked","targets":[]}])");
  plan = decide(in);
  EXPECT_EQ(find(plan, "a")->result, Result::kBlocked);
  EXPECT_EQ(find(plan, "a")->failed, (std::vector<Check>{{"pdb-blocked", "pdb-blocked"}}));
  EXPECT_FALSE(find(plan, "a")->write_constraints);
  EXPECT_EQ(plan.evict, (std::vector<std::string>{"b"}));
  EXPECT_EQ(plan.pdb_blocked, (std::set<std::string>{key}));

  // The desired value changes: a is tried again, its pdb-blocked goes, and the old key is dropped.
  in.desired = one(frac("app", 70));
  plan = decide(in);
  EXPECT_EQ(plan.evict, (std::vector<std::string>{"a"}));
  EXPECT_EQ(find(plan, "a")->write_constraints, std::optional<std::string>(""));
  EXPECT_TRUE(plan.pdb_blocked.empty());

  // Or the pod changes (a new uid under the same name): tried again.
  in.desired = one(frac("app", 50));
  in.workload.pods[0].uid = "uid-a2";
  EXPECT_EQ(decide(in).evict, (std::vector<std::string>{"a"}));
}

// ACT-5: any other error: retried after resizeRetryInterval, logged as eviction-failed (our name).
TEST(ActuationEvictionResult, OtherErrorRetried) {
  Input in = starter({pod("a", one(frac("app", 25)))});
  Plan plan = decide(in);
  apply_outcome(plan, in, "a", on_eviction_result(EvictionAnswer::kFailed, false, 30s));
  EXPECT_EQ(plan.result, Result::kBlockedRetrying);
  EXPECT_EQ(plan.failed, (std::vector<Check>{{"eviction-failed", ""}}));
  EXPECT_EQ(plan.requeue_after, 30s);
  EXPECT_TRUE(plan.pdb_blocked.empty());
}

// ACT-4: an accepted eviction keeps EVICTED; an unknown pod name changes nothing.
TEST(ActuationEvictionResult, AcceptedAndUnknown) {
  Input in = starter({pod("a", one(frac("app", 25)))});
  Plan plan = decide(in);
  apply_outcome(plan, in, "a", on_eviction_result(EvictionAnswer::kAccepted, true, 30s));
  EXPECT_EQ(plan.result, Result::kEvicted);
  EXPECT_TRUE(plan.failed.empty());
  const Plan before = plan;
  apply_outcome(plan, in, "nope", on_eviction_result(EvictionAnswer::kRefusedByBudget, false, 30s));
  EXPECT_EQ(plan.result, before.result);
  EXPECT_EQ(plan.pdb_blocked, before.pdb_blocked);
}

}  // namespace
}  // namespace kubex::decide::actuation::test
