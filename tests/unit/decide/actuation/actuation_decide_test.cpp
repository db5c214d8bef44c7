// decide() composed: ACT-1 through ACT-8 for one workload, the constraint annotation (OBS-3) and the summary
// result (OBS-4).
#include <gtest/gtest.h>

#include <functional>

#include "actuation_fixtures.h"
#include "decide/actuation/steps.h"

namespace kubex::decide::actuation::test {
namespace {

// ACT-1: all pods in sync: nothing to do, IN_SYNC, and the periodic resync is at most 1m.
TEST(ActuationDecide, InSync) {
  Input in = starter({pod("a", one(frac("app", 50))), pod("b", one(frac("app", 50)))});
  const Plan plan = decide(in);
  EXPECT_EQ(plan.result, Result::kInSync);
  EXPECT_EQ(plan.pod, "");
  EXPECT_TRUE(plan.evict.empty());
  EXPECT_EQ(plan.requeue_after, 1min);
  ASSERT_EQ(plan.pods.size(), 2u);
  for (const PodPlan& p : plan.pods) {
    EXPECT_FALSE(p.candidate);
    EXPECT_EQ(p.result, Result::kInSync);
    EXPECT_FALSE(p.write_constraints);
  }
}

// ACT-1: pods that are not controller-owned, or finished, are left out of the plan.
TEST(ActuationDecide, OnlyControllerOwnedUnfinishedPods) {
  Input in = starter(
      {pod("a", one(frac("app", 25))), pod("b", one(frac("app", 25))), pod("c", one(frac("app", 25)))});
  in.workload.pods[0].controller_owned = false;
  in.workload.pods[1].phase = "Succeeded";
  in.workload.replicas = 1;  // the one controller-owned pod left
  const Plan plan = decide(in);
  ASSERT_EQ(plan.pods.size(), 1u);
  EXPECT_EQ(plan.evict, (std::vector<std::string>{"c"}));
}

// ACT-1: no desired value (admission could not be run on the template): nothing is a candidate.
TEST(ActuationDecide, NoDesiredValue) {
  Input in = starter({pod("a", one(frac("app", 25)))});
  in.desired.reset();
  EXPECT_EQ(decide(in).result, Result::kInSync);
}

// ACT-1: Model and StrimziPodSet compare each live pod with the admission decision on that pod.
TEST(ActuationDecide, PerPodDesiredForModels) {
  Input in =
      starter({pod("model-m-1", one(frac("app", 25)), 2h), pod("model-m-2", one(frac("app", 50)), 1h)});
  in.workload.kind = "Model";
  in.desired.reset();
  in.workload.pods[0].desired = one(frac("app", 50));
  in.workload.pods[1].desired = one(frac("app", 50));
  const Plan plan = decide(in);
  EXPECT_EQ(plan.evict, (std::vector<std::string>{"model-m-1"}));
  EXPECT_EQ(find(plan, "model-m-2")->result, Result::kInSync);
}

// ACT-2: a Job's pods are never evicted: job-pod-not-evicted is recorded and the result is BLOCKED.
TEST(ActuationDecide, JobPodsNeverEvicted) {
  for (const char* kind : {"Job", "CronJob", "AnalysisRun"}) {
    Input in = starter({pod("a", one(frac("app", 25)))});
    in.workload.kind = kind;
    const Plan plan = decide(in);
    EXPECT_TRUE(plan.evict.empty()) << kind;
    EXPECT_EQ(plan.result, Result::kBlocked) << kind;
    EXPECT_EQ(plan.failed, (std::vector<Check>{{"job-pod-not-evicted", "job-pod-not-evicted"}})) << kind;
    EXPECT_EQ(find(plan, "a")->write_constraints,
              std::optional<std::string>(R"([{"reason":"job-pod-not-evicted","targets":[]}])"))
        << kind;
  }
}

struct ResultCase {
  const char* name;
  std::function<void(Input&)> setup;
  Result result;
  std::vector<std::string> constraints;  // on pod "a"
};

// OBS-4/OBS-3: the summary result and the written constraints for each blocking situation.
TEST(ActuationDecide, ResultsAndConstraintsTable) {
  const ResultCase cases[] = {
      {"evicted", [](Input&) {}, Result::kEvicted, {}},
      {"pause-active",
       [](Input& in) { in.workload.annotations[api::keys::kPauseUntil] = "infinite"; },
       Result::kBlocked,
       {"pause-active"}},
      {"pod-eviction-disabled",
       [](Input& in) { in.settings.eviction_enabled = false; },
       Result::kBlocked,
       {"pod-eviction-disabled"}},
      {"webhook-unhealthy",
       [](Input& in) { in.settings.webhook_healthy = false; },
       Result::kBlockedRetrying,
       {"webhook-unhealthy"}},
      {"min-ready wait is logged only",
       [](Input& in) { in.workload.pods[0].ready_since = kNow - 1s; },
       Result::kBlockedRetrying,
       {}},
      {"terminating is logged only",
       [](Input& in) { in.workload.pods[0].terminating = true; },
       Result::kBlockedRetrying,
       {}},
      {"owner-pods-not-ready is logged only",
       [](Input& in) {
         in.settings.require_owner_pods_ready = true;
         in.workload.pods.push_back(not_ready(pod("z", one(frac("app", 50)))));
       },
       Result::kBlockedRetrying,
       {}},
      {"both kinds of check: BLOCKED wins for the pod",
       [](Input& in) {
         in.settings.webhook_healthy = false;
         in.settings.eviction_enabled = false;
       },
       Result::kBlocked,
       {"pod-eviction-disabled", "webhook-unhealthy"}},
      {"ACT-6: in-place enabled and only the fraction changes",
       [](Input& in) { in.settings.in_place_resize = true; },
       Result::kEvicted,
       {"kai-fraction-requires-restart"}},
  };
  for (const ResultCase& c : cases) {
    Input in = starter({pod("a", one(frac("app", 25)))});
    c.setup(in);
    const Plan plan = decide(in);
    EXPECT_EQ(plan.result, c.result) << c.name;
    EXPECT_EQ(plan.pod, "a") << c.name;
    EXPECT_EQ(find(plan, "a")->constraints, c.constraints) << c.name;
    EXPECT_EQ(find(plan, "a")->write_constraints.has_value(), !c.constraints.empty()) << c.name;
  }
}

// ACT-6: the note is recorded in the summary (applied_filters) and the pod is still evicted.
TEST(ActuationDecide, InPlaceNoteAndEviction) {
  Input in = starter({pod("a", one(frac("app", 25)))});
  in.settings.in_place_resize = true;
  const Plan plan = decide(in);
  EXPECT_EQ(plan.evict, (std::vector<std::string>{"a"}));
  EXPECT_EQ(find(plan, "a")->applied_filters, (std::vector<std::string>{"kai-fraction-requires-restart"}));
  in.desired = one(whole("app", 1));  // whole GPU: no note
  EXPECT_TRUE(find(decide(in), "a")->applied_filters.empty());
}

// ACT-2: automationEnabled false or a protected namespace: the engine keeps its hands off (nothing written).
TEST(ActuationDecide, HandsOff) {
  for (int variant = 0; variant < 2; ++variant) {
    Input in = starter({with_annotation(pod("a", one(frac("app", 25))), api::keys::kAutomationConstraints,
                                        R"([{"reason":"pdb-blocked","targets":[]}])")});
    (variant == 0 ? in.settings.automation_enabled : in.settings.protected_namespace) = variant != 0;
    in.settings.eviction_enabled = false;
    const Plan plan = decide(in);
    EXPECT_TRUE(plan.evict.empty());
    EXPECT_EQ(plan.result, Result::kBlocked);
    EXPECT_EQ(plan.failed.front().name, variant == 0 ? "automation-disabled" : "protected-namespace");
    EXPECT_FALSE(find(plan, "a")->write_constraints);
  }
}

// ACT-8: dry-run evicts nothing: the pods a real run would evict get WOULD_EVICT, and no pod is annotated.
TEST(ActuationDecide, DryRun) {
  Input in = starter({pod("a", one(frac("app", 25)), 2h), pod("b", one(frac("app", 25)), 1h)});
  in.settings.dry_run = true;
  in.settings.eviction_enabled = true;
  in.settings.in_place_resize = true;  // would write kai-fraction-requires-restart outside dry-run
  Plan plan = decide(in);
  EXPECT_TRUE(plan.evict.empty());
  EXPECT_EQ(plan.would_evict, (std::vector<std::string>{"a"}));
  EXPECT_EQ(plan.result, Result::kWouldEvict);
  EXPECT_EQ(find(plan, "a")->result, Result::kWouldEvict);
  EXPECT_FALSE(find(plan, "a")->evict);
  EXPECT_EQ(find(plan, "b")->result, Result::kBlockedRetrying);  // max-unavailable-exceeded
  for (const PodPlan& p : plan.pods) EXPECT_FALSE(p.write_constraints) << p.name;
  in.settings.webhook_healthy = false;
  plan = decide(in);
  EXPECT_TRUE(plan.would_evict.empty());
  for (const PodPlan& p : plan.pods) EXPECT_FALSE(p.write_constraints) << p.name;
}

// OBS-3: the annotation is patched only when its set of reasons changes; admission's reasons are kept.
TEST(ActuationConstraints, UpdatedOnlyWhenReasonsChange) {
  const std::string floor =
      R"({"reason":"floor-clamped","targets":[{"container":"app","resource":"gpu","usage":"request"}]})";
  EXPECT_EQ(updated_constraints("", {}), std::nullopt);
  EXPECT_EQ(updated_constraints("", {"webhook-unhealthy"}),
            std::optional<std::string>(R"([{"reason":"webhook-unhealthy","targets":[]}])"));
  EXPECT_EQ(updated_constraints(R"([{"reason":"webhook-unhealthy","targets":[]}])", {"webhook-unhealthy"}),
            std::nullopt);
  EXPECT_EQ(updated_constraints(R"([{"reason":"webhook-unhealthy","targets":[]}])", {}),
            std::optional<std::string>(""));
  EXPECT_EQ(updated_constraints("[" + floor + "]", {}), std::nullopt);
  EXPECT_EQ(updated_constraints("[" + floor + "]", {"pdb-blocked"}),
            std::optional<std::string>("[" + floor + R"(,{"reason":"pdb-blocked","targets":[]}])"));
  EXPECT_EQ(updated_constraints("[" + floor + R"(,{"reason":"pdb-blocked","targets":[]}])", {}),
            std::optional<std::string>("[" + floor + "]"));
  EXPECT_EQ(updated_constraints("not json", {}), std::nullopt);
  EXPECT_EQ(updated_constraints("not json", {"pdb-blocked"}),
            std::optional<std::string>(R"([{"reason":"pdb-blocked","targets":[]}])"));
  EXPECT_EQ(constraint_reasons("[" + floor + R"(,{"reason":"pdb-blocked","targets":[]}])"),
            (std::vector<std::string>{"floor-clamped", "pdb-blocked"}));
  for (const char* r :
       {"pause-active", "pod-eviction-disabled", "pdb-blocked", "kai-fraction-requires-restart",
        "replacement-not-mutated", "webhook-unhealthy", "job-pod-not-evicted"}) {
    EXPECT_TRUE(actuation_reason(r)) << r;
  }
  for (const char* r : {"floor-clamped", "min-ready-duration-not-met", "max-unavailable-exceeded",
                        "owner-pods-not-ready", "pod-terminating", "automation-strategy-disabled"}) {
    EXPECT_FALSE(actuation_reason(r)) << r;
  }
}

// OBS-3: an in-sync pod loses stale actuation reasons; admission's pause-active stays while the pause lasts
// and goes when it ends.
TEST(ActuationConstraints, InSyncPods) {
  const std::string pause = R"([{"reason":"pause-active","targets":[]}])";
  Input in =
      starter({with_annotation(pod("a", one(frac("app", 50))), api::keys::kAutomationConstraints,
                               R"([{"reason":"pdb-blocked","targets":[]}])"),
               with_annotation(pod("b", one(frac("app", 50))), api::keys::kAutomationConstraints, pause)});
  in.workload.annotations[api::keys::kPauseUntil] = "infinite";
  Plan plan = decide(in);
  EXPECT_EQ(find(plan, "a")->write_constraints, std::optional<std::string>(""));
  EXPECT_FALSE(find(plan, "b")->write_constraints);
  in.workload.annotations.clear();
  plan = decide(in);
  EXPECT_EQ(find(plan, "b")->write_constraints, std::optional<std::string>(""));
}

// The requeue: at most 1m, and sooner when a wait ends sooner (min-ready, back-off); never below 1s.
TEST(ActuationDecide, Requeue) {
  Input in = starter({pod("a", one(frac("app", 25)), 3s)});  // Ready for 3s of 10s
  EXPECT_EQ(decide(in).requeue_after, 7s);
  in.workload.pods[0].ready_since = kNow - 9999ms;
  EXPECT_EQ(decide(in).requeue_after, 1s);
  in.settings.min_ready_duration = 5min;
  EXPECT_EQ(decide(in).requeue_after, 1min);
}

// OBS-4: the summary names the pod with the most telling result: EVICTED, then WOULD_EVICT, BLOCKED_RETRYING,
// BLOCKED, IN_SYNC; ties go to the first in eviction order.
TEST(ActuationDecide, SummaryPicksThePodThatMatters) {
  Input in = starter({pod("a", one(frac("app", 25)), 3h), pod("b", one(frac("app", 25)), 2h)});
  in.workload.pods[0].annotations[api::keys::kPauseUntil] = "infinite";  // a: BLOCKED
  Plan plan = decide(in);
  EXPECT_EQ(plan.result, Result::kEvicted);
  EXPECT_EQ(plan.pod, "b");
  EXPECT_TRUE(plan.failed.empty());
  in.settings.webhook_healthy = false;  // a: BLOCKED, b: BLOCKED_RETRYING
  plan = decide(in);
  EXPECT_EQ(plan.result, Result::kBlockedRetrying);
  EXPECT_EQ(plan.pod, "b");
  EXPECT_EQ(names(plan.failed), (std::vector<std::string>{"webhook-unhealthy"}));
  EXPECT_STREQ(result_name(Result::kBlockedRetrying), "BLOCKED_RETRYING");
  EXPECT_STREQ(result_name(Result::kWouldEvict), "WOULD_EVICT");
  EXPECT_STREQ(result_name(Result::kRolledBack), "ROLLED_BACK");
  EXPECT_STREQ(result_name(Result::kInSync), "IN_SYNC");
  EXPECT_STREQ(result_name(Result::kEvicted), "EVICTED");
  EXPECT_STREQ(result_name(Result::kBlocked), "BLOCKED");
}

// RBK-2 through decide(): in a rollback the candidates are the pods carrying pod-rightsizing-info, whatever
// their allocation, through the same ACT-2…5 checks; ACT-6 and ACT-7 do not apply.
TEST(ActuationDecide, RollbackPurpose) {
  const std::string info = R"({"mode":"kai","strategy":"AutomationStrategy/s","containers":{}})";
  Input in =
      starter({with_annotation(pod("a", one(frac("app", 50)), 2h), api::keys::kPodRightsizingInfo, info),
               pod("b", one(whole("app", 1)), 3h),
               with_annotation(pod("c", one(frac("app", 50)), 20s), api::keys::kPodRightsizingInfo, info)});
  in.purpose = Purpose::kRollback;
  in.desired.reset();
  in.settings.in_place_resize = true;
  in.last_eviction = kNow - 1min;  // c is newer and "lacks" nothing: the guard is not consulted
  Plan plan = decide(in);
  EXPECT_EQ(plan.evict, (std::vector<std::string>{"a"}));
  EXPECT_FALSE(find(plan, "b")->candidate);
  EXPECT_TRUE(find(plan, "c")->candidate);
  EXPECT_TRUE(find(plan, "a")->applied_filters.empty());
  EXPECT_FALSE(plan.emit_replacement_not_mutated);
  EXPECT_EQ(find(plan, "a")->pdb_key, "uid-a|rollback");
  in.workload.kind = "Job";
  plan = decide(in);
  EXPECT_TRUE(plan.evict.empty());
  EXPECT_EQ(plan.result, Result::kBlocked);
}

// RBK-2, OBS-3 (issue 26): in a rollback, a pod that is no candidate (no pod-rightsizing-info: kubex left it as it
// was) loses its automation-constraints, admission's reasons included; a rolled pod keeps admission's reasons.
TEST(ActuationDecide, RollbackClearsStaleConstraintsOfUntouchedPods) {
  const std::string info = R"({"mode":"kai","strategy":"AutomationStrategy/s","containers":{}})";
  const std::string no_rec =
      R"([{"reason":"no-gpu-recommendation","targets":[{"container":"app","resource":"gpu","usage":"request"}]}])";
  Input in = starter(
      {with_annotation(with_annotation(pod("a", one(frac("app", 50)), 2h), api::keys::kPodRightsizingInfo, info),
                       api::keys::kAutomationConstraints, R"([{"reason":"floor-clamped","targets":[]}])"),
       with_annotation(pod("b", one(whole("app", 1)), 3h), api::keys::kAutomationConstraints, no_rec),
       with_annotation(pod("c", one(whole("app", 1)), 3h), api::keys::kAutomationConstraints,
                       R"([{"reason":"pause-active","targets":[]}])"),
       pod("d", one(whole("app", 1)), 3h)});
  in.purpose = Purpose::kRollback;
  in.desired.reset();
  in.workload.annotations[api::keys::kPauseUntil] = "infinite";  // even a pause still in force: c is not managed
  Plan plan = decide(in);
  EXPECT_EQ(find(plan, "b")->write_constraints, std::optional<std::string>(""));
  EXPECT_TRUE(find(plan, "b")->constraints.empty());
  EXPECT_EQ(find(plan, "c")->write_constraints, std::optional<std::string>(""));
  EXPECT_EQ(find(plan, "d")->write_constraints, std::nullopt);  // nothing to remove
  // A candidate (rolled): its admission reasons stay beside actuation's (the pause blocks its eviction too).
  ASSERT_TRUE(find(plan, "a")->write_constraints);
  EXPECT_NE(find(plan, "a")->write_constraints->find("floor-clamped"), std::string::npos);
  EXPECT_NE(find(plan, "a")->write_constraints->find("pause-active"), std::string::npos);
  // Outside a rollback the same pods keep admission's reasons (only actuation's own are replaced).
  in.purpose = Purpose::kResize;
  in.desired = one(whole("app", 1));
  plan = decide(in);
  EXPECT_EQ(find(plan, "b")->write_constraints, std::nullopt);
  // Dry run, automation off: nothing is written (ACT-8, OBS-3).
  in.purpose = Purpose::kRollback;
  in.desired.reset();
  in.settings.dry_run = true;
  EXPECT_EQ(find(decide(in), "b")->write_constraints, std::nullopt);
}

}  // namespace
}  // namespace kubex::decide::actuation::test
