// REA-11: the out-of-memory signal, through decide().
#include <gtest/gtest.h>

#include "decide/reactive/steps.h"
#include "reactive_fixtures.h"

namespace kubex::decide::reactive::test {
namespace {

// memory (currentAllocation) at `memory` % of 0.25; compute low; restarted `ago` before now (nullopt: never).
ContainerInput restarted(std::optional<double> memory, std::optional<common::Duration> ago,
                         Hundredths a = 25) {
  ContainerInput c = ctr("app", a, 10, memory);
  if (ago) c.last_terminated_at = kNow - std::chrono::duration_cast<common::TimePoint::duration>(*ago);
  return c;
}

TEST(ReactiveOom, RestartWithSaturatedMemoryBumpsToMaxPercent) {
  struct Case {
    const char* what;
    ContainerInput app;
    bool bump;
  } cases[] = {
      {"inside the window, 95 %", restarted(95, 1min), true},
      {"at the window's start", restarted(95, 2min), true},
      {"just now", restarted(95, 0s), true},
      {"exactly 90 %", restarted(90, 30s), true},
      {"outside the window", restarted(95, 2min + 1s), false},
      {"in the future", restarted(95, -1s), false},
      {"usage below 90 %", restarted(89.9, 1min), false},
      {"no memory sample", restarted(std::nullopt, 1min), false},
      {"never restarted", restarted(99, std::nullopt), false},
      {"not included (a_c = 0)", restarted(95, 1min, 0), false},
  };
  for (const auto& c : cases) {
    Cycle r;
    r.in.pods = {pod("p-1", {c.app})};
    EXPECT_EQ(memory_saturated(r.in.pods[0], r.spec.memory, kNow), c.bump) << c.what;
    const Outcome out = r.go();
    if (!c.bump) {
      EXPECT_NE(out.result, Result::kRecommended) << c.what;  // restarts without the evidence are ignored
      EXPECT_TRUE(out.applied_filters.empty()) << c.what;
      continue;
    }
    EXPECT_EQ(out.result, Result::kRecommended) << c.what;
    EXPECT_EQ(strings(out.requests), (Strings{{"app", "0.5"}})) << c.what;  // A_sel × 200 %
    EXPECT_EQ(out.driver, "memory") << c.what;
    EXPECT_EQ(out.applied_filters, (std::vector<std::string>{"oom"})) << c.what;
    // compute at 10 % offers nothing: its scale-back max(0.12, B=0.25) is not < 0.25
    ASSERT_EQ(out.candidates.size(), 1u) << c.what;
    EXPECT_TRUE(out.candidates[0].oom) << c.what;
    EXPECT_EQ(out.candidates[0].total, 50) << c.what;
  }
}

// REA-11 with ACT-10: a container OOM-killed before any memory sample (it died before the first scrape) counts as an
// out-of-memory exit: the step applies to its allocation. A plain restart without samples still counts for nothing.
TEST(ReactiveOom, AnOutOfMemoryExitBeforeAnySampleBumps) {
  Cycle r;
  ContainerInput app = restarted(std::nullopt, 1min);
  app.oom_exit = true;
  r.in.pods = {pod("p-1", {app})};
  EXPECT_TRUE(out_of_memory_before_samples(r.in.pods[0], r.spec.memory, kNow));
  Outcome out = r.go();
  EXPECT_EQ(out.result, Result::kRecommended);
  EXPECT_EQ(strings(out.requests), (Strings{{"app", "0.5"}}));
  EXPECT_EQ(out.applied_filters, (std::vector<std::string>{"oom"}));
  app.oom_exit = false;
  r.in.pods = {pod("p-1", {app})};
  EXPECT_NE(r.go().result, Result::kRecommended);
  app.oom_exit = true;  // outside the window: no
  app.last_terminated_at = kNow - std::chrono::minutes(5);
  r.in.pods = {pod("p-1", {app})};
  EXPECT_NE(r.go().result, Result::kRecommended);
}

// REA-11 replaces a smaller ordinary memory upsize (here 110 % -> min(0.33, 0.5)).
TEST(ReactiveOom, ReplacesSmallerMemoryUpsize) {
  Cycle r;
  r.in.pods = {pod("p-1", {restarted(110, 1min)})};
  Outcome out = r.go();
  EXPECT_EQ(strings(out.requests), (Strings{{"app", "0.5"}}));
  EXPECT_EQ(out.applied_filters, (std::vector<std::string>{"oom"}));

  r.in.pods = {pod("p-1", {restarted(110, 10min)})};  // the same usage without the restart
  out = r.go();
  EXPECT_EQ(strings(out.requests), (Strings{{"app", "0.33"}}));
  EXPECT_TRUE(out.applied_filters.empty());
}

// A larger compute candidate beats the OOM bump; then "oom" is not an applied filter.
TEST(ReactiveOom, LargerComputeCandidateWins) {
  Cycle r;
  r.spec.compute.upsize.max_percent = 400;
  ContainerInput app = restarted(95, 1min);
  app.samples.compute_upsize = 90;  // 0.90 GPU on 0.25 -> min(1.08, 1.0)
  r.in.pods = {pod("p-1", {app})};
  const Outcome out = r.go();
  EXPECT_EQ(strings(out.requests), (Strings{{"app", "1"}}));
  EXPECT_EQ(out.driver, "compute");
  EXPECT_TRUE(out.applied_filters.empty());
}

// At most one bump per pod start: the replacement pod (a = 0.5, no restart) at the same usage does not
// repeat it.
TEST(ReactiveOom, ReplacementPodDoesNotRepeat) {
  Cycle r;
  r.in.pods = {pod("p-1", {restarted(95, 1min)})};
  Outcome out = r.go();
  ASSERT_EQ(out.result, Result::kRecommended);
  r.in.existing = out.requests;
  r.in.state = out.state;
  r.in.pods = {pod("p-2", {restarted(95, std::nullopt, 50)})};
  out = r.go();
  EXPECT_EQ(out.result, Result::kUnchanged);
  EXPECT_EQ(strings(out.requests), (Strings{{"app", "0.5"}}));
  EXPECT_TRUE(out.applied_filters.empty());
  // The same pod seen again before it is replaced gives the same bump (from a_c, not from the
  // recommendation).
  r.in.pods = {pod("p-1", {restarted(95, 90s)})};
  out = r.go();
  EXPECT_EQ(out.result, Result::kUnchanged);
  EXPECT_EQ(strings(out.requests), (Strings{{"app", "0.5"}}));
}

// Under fullGPU a memory sample is v/100 GPUs: 0.23 ≥ 90 % of 0.25, 0.22 is not.
TEST(ReactiveOom, FullGpuInterpretation) {
  for (const auto& [v, bump] : {std::pair{23.0, true}, std::pair{22.0, false}}) {
    Cycle r;
    r.spec.memory.prometheus.interpretation = "fullGPU";
    r.in.pods = {pod("p-1", {restarted(v, 1min)})};
    const Outcome out = r.go();
    EXPECT_EQ(out.result == Result::kRecommended, bump) << v;
    if (bump) {
      EXPECT_EQ(strings(out.requests), (Strings{{"app", "0.5"}}));
    }
  }
}

// Several saturated pods: sel is the one with the highest memory U_p (ties by name); others do not count.
TEST(ReactiveOom, SelectsAmongSaturatedPods) {
  Cycle r;
  r.in.pods = {pod("p-a", {restarted(92, 1min, 40)}), pod("p-b", {restarted(95, 1min, 30)}),
               pod("p-c", {restarted(99, std::nullopt, 100)})};  // p-c: highest usage, but no restart
  const Outcome out = r.go();
  EXPECT_EQ(out.selected_pod, "p-a");  // 0.368 > 0.285
  EXPECT_EQ(strings(out.requests), (Strings{{"app", "0.8"}}));
  EXPECT_EQ(out.applied_filters, (std::vector<std::string>{"oom"}));
}

}  // namespace
}  // namespace kubex::decide::reactive::test
