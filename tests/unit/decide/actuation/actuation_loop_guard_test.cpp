// ACT-7: the loop guard: back-off resizeRetryInterval × 2^k capped at 1h, replacement-not-mutated,
// ReplacementNotMutated once per step, reset when the desired value changes.
#include <gtest/gtest.h>

#include "actuation_fixtures.h"
#include "decide/actuation/steps.h"

namespace kubex::decide::actuation::test {
namespace {

TEST(ActuationBackoff, DoublesAndCapsAtOneHour) {
  EXPECT_EQ(backoff(30s, 0), 30s);
  EXPECT_EQ(backoff(30s, 1), 60s);
  EXPECT_EQ(backoff(30s, 3), 240s);
  EXPECT_EQ(backoff(30s, 6), 1920s);
  EXPECT_EQ(backoff(30s, 7), 1h);  // 3840s capped
  EXPECT_EQ(backoff(30s, 62), 1h);
  EXPECT_EQ(backoff(30s, 1000), 1h);  // no overflow
  EXPECT_EQ(backoff(1s, -3), 1s);
  EXPECT_EQ(backoff(2h, 0), 1h);
}

const common::TimePoint kEviction = kNow - 2min;

struct Step {
  const char* name;
  GuardState state;
  std::string desired;
  std::optional<common::TimePoint> last_eviction;
  std::vector<GuardPod> pods;
  // expected
  bool backing_off, emit;
  int step;
  std::optional<common::TimePoint> until;
  std::vector<std::string> unmutated;
};

TEST(ActuationLoopGuard, Table) {
  const GuardPod old_pod{"old", kNow - 1h, true};            // created before the eviction, lacks the value
  const GuardPod replacement_bad{"r", kNow - 1min, true};    // created after it, lacks the value
  const GuardPod replacement_good{"r", kNow - 1min, false};  // created after it, mutated
  const GuardState fresh{"app=0.5f", 0, std::nullopt, std::nullopt};
  const GuardState stepped{"app=0.5f", 1, kNow + 10s, kEviction};
  const Step steps[] = {
      {"no eviction yet", fresh, "app=0.5f", std::nullopt, {old_pod}, false, false, 0, std::nullopt, {}},
      {"replacement mutated",
       fresh,
       "app=0.5f",
       kEviction,
       {old_pod, replacement_good},
       false,
       false,
       0,
       std::nullopt,
       {}},
      {"replacement not mutated: step 0 starts",
       fresh,
       "app=0.5f",
       kEviction,
       {old_pod, replacement_bad},
       true,
       true,
       1,
       kNow + 30s,
       {"r"}},
      {"same eviction again: no new step, no second event",
       stepped,
       "app=0.5f",
       kEviction,
       {old_pod, replacement_bad},
       true,
       false,
       1,
       kNow + 10s,
       {"r"}},
      {"back-off over: evictions resume, r keeps its constraint",
       GuardState{"app=0.5f", 1, kNow - 1s, kEviction},
       "app=0.5f",
       kEviction,
       {old_pod, replacement_bad},
       false,
       false,
       1,
       kNow - 1s,
       {"r"}},
      {"a later eviction's replacement unmutated: step 1 = 60s",
       GuardState{"app=0.5f", 1, kNow - 1s, kEviction - 10min},
       "app=0.5f",
       kEviction,
       {old_pod, replacement_bad},
       true,
       true,
       2,
       kNow + 60s,
       {"r"}},
      {"desired value changes: reset, earlier evictions are no evidence",
       stepped,
       "app=0.7f",
       kEviction,
       {old_pod, replacement_bad},
       false,
       false,
       0,
       std::nullopt,
       {}},
      {"a guard never used (first reconcile) judges the last eviction",
       GuardState{},
       "app=0.5f",
       kEviction,
       {old_pod, replacement_bad},
       true,
       true,
       1,
       kNow + 30s,
       {"r"}},
      {"a replacement created within the eviction's second counts (creationTimestamp has whole seconds)",
       fresh,
       "app=0.5f",
       kEviction + 700ms,
       {old_pod, GuardPod{"r", kEviction, true}},
       true,
       true,
       1,
       kNow + 30s,
       {"r"}},
      {"a pod created before the eviction never counts",
       fresh,
       "app=0.5f",
       kEviction,
       {old_pod},
       false,
       false,
       0,
       std::nullopt,
       {}},
  };
  for (const Step& s : steps) {
    const GuardOutcome o = loop_guard(s.state, s.desired, s.last_eviction, s.pods, 30s, kNow);
    EXPECT_EQ(o.backing_off, s.backing_off) << s.name;
    EXPECT_EQ(o.emit, s.emit) << s.name;
    EXPECT_EQ(o.state.step, s.step) << s.name;
    EXPECT_EQ(o.state.until, s.until) << s.name;
    EXPECT_EQ(o.state.desired, s.desired) << s.name;
    EXPECT_EQ(o.unmutated, s.unmutated) << s.name;
  }
}

// ACT-7 through decide(): the webhook failed open for the replacement of an eviction. Evictions back off, the
// replacement carries replacement-not-mutated, ReplacementNotMutated is emitted once, and the back-off
// doubles with each further unmutated replacement until the desired value changes.
TEST(ActuationLoopGuard, InDecide) {
  Input in = starter({pod("a", one(frac("app", 25)), 3h), pod("b", one(frac("app", 25)), 2h),
                      pod("r", one(frac("app", 25)), 30s)});  // r: created after the eviction, still 0.25
  in.last_eviction = kNow - 1min;
  Plan plan = decide(in);
  EXPECT_TRUE(plan.emit_replacement_not_mutated);
  EXPECT_TRUE(plan.evict.empty());
  EXPECT_EQ(plan.result, Result::kBlockedRetrying);
  EXPECT_EQ(find(plan, "a")->failed, (std::vector<Check>{{"replacement-not-mutated", ""}}));
  EXPECT_EQ(find(plan, "r")->constraints, (std::vector<std::string>{"replacement-not-mutated"}));
  EXPECT_EQ(find(plan, "r")->write_constraints,
            std::optional<std::string>(R"([{"reason":"replacement-not-mutated","targets":[]}])"));
  EXPECT_FALSE(find(plan, "a")->write_constraints);
  EXPECT_EQ(plan.requeue_after, 30s);
  EXPECT_EQ(plan.guard.step, 1);

  // 10s later: still backing off, no second event.
  in.guard = plan.guard;
  in.now = kNow + 10s;
  plan = decide(in);
  EXPECT_FALSE(plan.emit_replacement_not_mutated);
  EXPECT_TRUE(plan.evict.empty());
  EXPECT_EQ(plan.requeue_after, 20s);

  // After the back-off: a (oldest Ready) goes.
  in.guard = plan.guard;
  in.now = kNow + 31s;
  plan = decide(in);
  EXPECT_EQ(plan.evict, (std::vector<std::string>{"a"}));

  // Its replacement is unmutated too: the next back-off is 60s.
  in.guard = plan.guard;
  in.last_eviction = kNow + 31s;
  in.workload.pods[0] = pod("r2", one(frac("app", 25)), 0s);
  in.workload.pods[0].created = kNow + 40s;
  in.workload.pods[0].ready_since = kNow + 40s;
  in.now = kNow + 60s;
  plan = decide(in);
  EXPECT_TRUE(plan.emit_replacement_not_mutated);
  EXPECT_EQ(plan.guard.until, kNow + 120s);

  // The desired value changes: reset, evictions resume at once.
  in.guard = plan.guard;
  in.desired = one(frac("app", 70));
  plan = decide(in);
  EXPECT_FALSE(plan.emit_replacement_not_mutated);
  EXPECT_EQ(plan.guard.step, 0);
  EXPECT_EQ(plan.evict, (std::vector<std::string>{"b"}));
}

}  // namespace
}  // namespace kubex::decide::actuation::test
