// RBK-2 (leaving management), RBK-3 (re-entry), RBK-4 (hold) and RBK-1's first write, as one state machine.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "actuation_fixtures.h"
#include "api/keys.h"
#include "decide/actuation/rollback.h"

namespace kubex::decide::actuation::test {
namespace {

RollbackState initial() {
  return initial_state(
      "AutomationStrategy/s",
      nlohmann::json::parse(
          R"({"spec":{"containers":[{"name":"app","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})"));
}

std::string text(Phase phase, std::string strategy = "AutomationStrategy/s") {
  RollbackState s = initial();
  s.phase = phase;
  s.strategy = std::move(strategy);
  s.last_applied["app"] = "0.5";
  s.history.push_back({"2027-01-15T08:00:00Z", "app", "1", "0.5", "kai", "StaticPolicy/s"});
  return format_rollback_state(s);
}

RollbackInput input(bool managed, std::optional<std::string> state) {
  RollbackInput in;
  in.managed = managed;
  in.state_text = std::move(state);
  in.initial = initial();
  in.strategy = managed ? "AutomationStrategy/s" : "";
  in.owner_annotation_keys = {"static.rightsizing.kubex.ai/desired-resource-requests",
                              "cwstatic.rightsizing.kubex.ai/desired-resource-limits",
                              "gpureactive.rightsizing.kubex.ai/reactive-state",
                              "rightsizing.kubex.ai/rollback-state",
                              "rightsizing.kubex.ai/pause-until",
                              "app"};
  in.pods_with_rightsizing_info = {"a", "b"};
  return in;
}

Phase phase_of(const std::string& written) {
  return parse_rollback_state(written)->phase;
}

// RBK-1: a workload that first becomes managed gets its rollback-state (not in dry-run).
TEST(RollbackStep, FirstManagedWritesInitialState) {
  RollbackPlan plan = rollback_step(input(true, std::nullopt));
  ASSERT_TRUE(plan.write_state);
  EXPECT_EQ(*plan.write_state, format_rollback_state(initial()));
  EXPECT_FALSE(plan.remove_state);
  EXPECT_TRUE(plan.roll_pods.empty());
  EXPECT_FALSE(plan.event_started || plan.event_completed);

  RollbackInput dry = input(true, std::nullopt);
  dry.dry_run = true;
  EXPECT_FALSE(rollback_step(dry).write_state);

  RollbackInput no_source = input(true, std::nullopt);
  no_source.initial.reset();  // no template and no unmutated pod seen yet
  EXPECT_FALSE(rollback_step(no_source).write_state);
}

// RBK-1 steady state: nothing to write; a new governing strategy is recorded.
TEST(RollbackStep, ManagedSteadyState) {
  EXPECT_FALSE(rollback_step(input(true, text(Phase::kManaged))).write_state);
  RollbackInput changed = input(true, text(Phase::kManaged));
  changed.strategy = "AutomationStrategy/other";
  const RollbackPlan plan = rollback_step(changed);
  ASSERT_TRUE(plan.write_state);
  const RollbackState s = *parse_rollback_state(*plan.write_state);
  EXPECT_EQ(s.strategy, "AutomationStrategy/other");
  EXPECT_EQ(s.history.size(), 1u);  // history kept
}

// VAL-7: an invalid rollback-state is rebuilt from the current template with an empty history.
TEST(RollbackStep, InvalidStateRebuilt) {
  const RollbackPlan plan = rollback_step(input(true, "{oops"));
  ASSERT_TRUE(plan.write_state);
  EXPECT_EQ(*plan.write_state, format_rollback_state(initial()));
}

// RBK-2: leaving management: phase RollingBack, desired-resource-* and reactive-state removed,
// RollbackStarted, the pods carrying pod-rightsizing-info rolled with the recorded strategy's settings.
TEST(RollbackStep, LeavingStartsTheRollback) {
  const RollbackPlan plan = rollback_step(input(false, text(Phase::kManaged, "AutomationStrategy/rec")));
  ASSERT_TRUE(plan.write_state);
  EXPECT_EQ(phase_of(*plan.write_state), Phase::kRollingBack);
  EXPECT_EQ(plan.remove_annotations,
            (std::vector<std::string>{"static.rightsizing.kubex.ai/desired-resource-requests",
                                      "cwstatic.rightsizing.kubex.ai/desired-resource-limits",
                                      "gpureactive.rightsizing.kubex.ai/reactive-state"}));
  EXPECT_EQ(plan.roll_pods, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(plan.recorded_strategy, "AutomationStrategy/rec");
  EXPECT_TRUE(plan.event_started);
  EXPECT_FALSE(plan.event_completed);
  EXPECT_FALSE(plan.remove_state);
  EXPECT_TRUE(plan.rolling_back);
  EXPECT_EQ(plan.result, std::nullopt);
}

// RBK-2: during the rollback: no second RollbackStarted, no rewrite of the phase, pods still rolled.
TEST(RollbackStep, RollingBackContinues) {
  RollbackInput in = input(false, text(Phase::kRollingBack));
  in.owner_annotation_keys = {"rightsizing.kubex.ai/rollback-state"};
  const RollbackPlan plan = rollback_step(in);
  EXPECT_FALSE(plan.write_state);
  EXPECT_FALSE(plan.event_started);
  EXPECT_TRUE(plan.remove_annotations.empty());
  EXPECT_EQ(plan.roll_pods, (std::vector<std::string>{"a", "b"}));
}

// RBK-2 (3): rollback-state is removed once no pod carries pod-rightsizing-info: RollbackCompleted,
// ROLLED_BACK.
TEST(RollbackStep, CompletesWhenNoPodIsLeft) {
  RollbackInput in = input(false, text(Phase::kRollingBack));
  in.pods_with_rightsizing_info.clear();
  RollbackPlan plan = rollback_step(in);
  EXPECT_TRUE(plan.remove_state);
  EXPECT_FALSE(plan.write_state);
  EXPECT_TRUE(plan.event_completed);
  EXPECT_FALSE(plan.event_started);
  EXPECT_EQ(plan.result, std::optional<Result>(Result::kRolledBack));
  // Leaving with no such pod at all: started and completed in one step.
  in.state_text = text(Phase::kManaged);
  plan = rollback_step(in);
  EXPECT_TRUE(plan.remove_state && plan.event_started && plan.event_completed);
  EXPECT_EQ(plan.remove_annotations.size(), 3u);
}

// RBK-2 (3): at once when the recorded strategy disables evictions.
TEST(RollbackStep, AtOnceWhenEvictionsDisabled) {
  RollbackInput in = input(false, text(Phase::kManaged));
  in.strategy_allows_eviction = false;
  const RollbackPlan plan = rollback_step(in);
  EXPECT_TRUE(plan.remove_state);
  EXPECT_FALSE(plan.write_state);
  EXPECT_TRUE(plan.roll_pods.empty());
  EXPECT_TRUE(plan.event_started && plan.event_completed);
  EXPECT_EQ(plan.remove_annotations.size(), 3u);
  EXPECT_EQ(plan.result, std::optional<Result>(Result::kRolledBack));
}

// RBK-3: managed again during the rollback: back to phase Managed, history kept, nothing rolled.
TEST(RollbackStep, ReentryReturnsToManaged) {
  const RollbackPlan plan = rollback_step(input(true, text(Phase::kRollingBack)));
  ASSERT_TRUE(plan.write_state);
  const RollbackState s = *parse_rollback_state(*plan.write_state);
  EXPECT_EQ(s.phase, Phase::kManaged);
  EXPECT_EQ(s.history.size(), 1u);
  EXPECT_TRUE(plan.roll_pods.empty());
  EXPECT_TRUE(plan.remove_annotations.empty());
  EXPECT_FALSE(plan.remove_state || plan.event_started || plan.event_completed);
}

// RBK-4: on hold: no recommendation, no eviction, no rollback, whatever the state.
TEST(RollbackStep, HoldDoesNothing) {
  for (const auto& state :
       {std::optional<std::string>(), std::optional<std::string>(text(Phase::kManaged)),
        std::optional<std::string>(text(Phase::kRollingBack)), std::optional<std::string>("{bad")}) {
    for (bool managed : {true, false}) {
      RollbackInput in = input(managed, state);
      in.on_hold = true;
      const RollbackPlan plan = rollback_step(in);
      EXPECT_FALSE(plan.write_state);
      EXPECT_FALSE(plan.remove_state);
      EXPECT_TRUE(plan.remove_annotations.empty());
      EXPECT_TRUE(plan.roll_pods.empty());
      EXPECT_FALSE(plan.event_started || plan.event_completed || plan.rolling_back);
    }
  }
}

// Never managed (no state): leaving does nothing.
TEST(RollbackStep, NoStateNothingToRollBack) {
  const RollbackPlan plan = rollback_step(input(false, std::nullopt));
  EXPECT_FALSE(plan.write_state || plan.remove_state || plan.rolling_back);
  EXPECT_TRUE(plan.remove_annotations.empty() && plan.roll_pods.empty());
}

// VAL-7 while leaving: an unreadable state is rolled back like a Managed one, with built-in defaults.
TEST(RollbackStep, InvalidStateWhileLeaving) {
  const RollbackPlan plan = rollback_step(input(false, "[]"));
  ASSERT_TRUE(plan.write_state);
  EXPECT_EQ(phase_of(*plan.write_state), Phase::kRollingBack);
  EXPECT_TRUE(plan.event_started);
  EXPECT_EQ(plan.recorded_strategy, "");
  EXPECT_EQ(plan.roll_pods.size(), 2u);
}

// Dry-run: nothing is written, the pods are still listed (decide() then says WOULD_EVICT).
TEST(RollbackStep, DryRunWritesNothing) {
  RollbackInput in = input(false, text(Phase::kManaged));
  in.dry_run = true;
  const RollbackPlan plan = rollback_step(in);
  EXPECT_FALSE(plan.write_state || plan.remove_state || plan.event_started || plan.event_completed);
  EXPECT_TRUE(plan.remove_annotations.empty());
  EXPECT_EQ(plan.roll_pods, (std::vector<std::string>{"a", "b"}));
}

TEST(RollbackStep, RemovedKeys) {
  EXPECT_TRUE(rollback_removes("proactive.rightsizing.kubex.ai/desired-resource-requests"));
  EXPECT_TRUE(rollback_removes("cwgpureactive.rightsizing.kubex.ai/reactive-state"));
  EXPECT_TRUE(rollback_removes("cwproactive.rightsizing.kubex.ai/proactive-state"));  // PRO-7 state goes too
  EXPECT_FALSE(rollback_removes(".rightsizing.kubex.ai/reactive-state"));
  EXPECT_FALSE(rollback_removes("rightsizing.kubex.ai/rollback-state"));
  EXPECT_FALSE(rollback_removes("rightsizing.kubex.ai/pause-until"));
  EXPECT_STREQ(phase_name(Phase::kRollingBack), "RollingBack");
}

// RBK-2, OBS-3 (issue 26): which pods carry a stale automation-constraints once the workload leaves management:
// unfinished, controller-owned pods with the annotation and without pod-rightsizing-info (kubex left them as they
// were, so no rollback replaces them).
TEST(RollbackStaleConstraints, Table) {
  const std::string no_rec = R"([{"reason":"no-gpu-recommendation","targets":[]}])";
  const std::string info = R"({"mode":"kai","containers":{}})";
  PodFacts finished = with_annotation(pod("done", one(whole("app", 1))), api::keys::kAutomationConstraints, no_rec);
  finished.phase = "Succeeded";
  PodFacts bare = with_annotation(pod("bare", one(whole("app", 1))), api::keys::kAutomationConstraints, no_rec);
  bare.controller_owned = false;
  const std::vector<PodFacts> pods = {
      with_annotation(pod("stale", one(whole("app", 1))), api::keys::kAutomationConstraints, no_rec),
      pod("clean", one(whole("app", 1))),
      with_annotation(with_annotation(pod("resized", one(frac("app", 50))), api::keys::kPodRightsizingInfo, info),
                      api::keys::kAutomationConstraints, no_rec),
      finished,
      bare,
      with_annotation(pod("paused", one(whole("app", 1))), api::keys::kAutomationConstraints,
                      R"([{"reason":"pause-active","targets":[]}])"),
  };
  EXPECT_EQ(stale_constraint_pods(pods), (std::vector<std::string>{"stale", "paused"}));
}

// RBK-2, OBS-3: when the rollback completes, the stale annotations go; not while pods are still rolled (decide()
// clears them then), not in dry-run, not while pods may not be annotated, not while managed or on hold.
TEST(RollbackStep, ClearsStaleConstraintsWhenTheRollbackCompletes) {
  struct Row {
    const char* what;
    bool managed, on_hold, dry_run, annotate, evictions, resized_left;
    std::vector<std::string> cleared;
  };
  const std::vector<std::string> stale = {"w"};
  const Row rows[] = {
      {"completes at once (no resized pod)", false, false, false, true, true, false, stale},
      {"completes at once (evictions disabled)", false, false, false, true, false, true, stale},
      {"resized pods still rolled", false, false, false, true, true, true, {}},
      {"dry run", false, false, true, true, true, false, {}},
      {"automation off or namespace protected", false, false, false, false, true, false, {}},
      {"managed", true, false, false, true, true, false, {}},
      {"on hold", false, true, false, true, true, false, {}},
  };
  for (const Row& r : rows) {
    RollbackInput in = input(r.managed, text(Phase::kManaged));
    in.on_hold = r.on_hold;
    in.dry_run = r.dry_run;
    in.annotate_pods = r.annotate;
    in.strategy_allows_eviction = r.evictions;
    if (!r.resized_left) in.pods_with_rightsizing_info.clear();
    in.pods_with_stale_constraints = stale;
    EXPECT_EQ(rollback_step(in).clear_constraints, r.cleared) << r.what;
  }
}

}  // namespace
}  // namespace kubex::decide::actuation::test
