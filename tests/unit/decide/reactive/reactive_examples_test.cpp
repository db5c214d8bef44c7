// SPEC §6 examples X1–X8 with the starter policy (reactive_fixtures.h). X7 is in
// reactive_eligibility_test.cpp.
#include <gtest/gtest.h>

#include "decide/gpu_value.h"
#include "decide/reactive/reactive.h"
#include "reactive_fixtures.h"

namespace kubex::decide::reactive::test {
namespace {

// X1: a=B=0.25; compute p95 40 (fullGPU: 0.40 GPU ≥ 0.25) -> min(0.48, 0.5) = 0.48; memory max 60 %
// (0.15 GPU) does not upsize, and its scale-back max(0.18, 0.25) = 0.25 is not < 0.25. Clamps are admission's
// (ADM).
TEST(ReactiveExamples, X1ComputeUpsize) {
  Cycle r;
  r.in.pods = {pod("p-1", {ctr("app", 25, 40, 60)})};
  const Outcome out = r.go();
  EXPECT_EQ(out.result, Result::kRecommended);  // REA-6, REA-9
  EXPECT_STREQ(result_name(out.result), "RECOMMENDED");
  EXPECT_EQ(strings(out.requests), (Strings{{"app", "0.48"}}));
  EXPECT_EQ(out.driver, "compute");
  EXPECT_EQ(out.selected_pod, "p-1");
  ASSERT_EQ(out.candidates.size(), 1u);  // REA-7: memory offers no scale-back (0.25 is not < 0.25)
  EXPECT_EQ(out.candidates[0],
            (Candidate{"compute", "upsize", 48, "p-1", out.candidates[0].exact, 25, false}));
  EXPECT_NEAR(out.candidates[0].exact, 0.48, 1e-9);
  EXPECT_TRUE(out.applied_filters.empty());
  // REA-5: first recommendation: baseline = a, driver and updatedAt set.
  EXPECT_EQ(out.state, (State{{{"app", 25}}, "compute", "2027-01-15T08:00:00Z"}));
  EXPECT_TRUE(out.state_changed);
  EXPECT_EQ(format_state(out.state),
            R"({"baseline":{"app":"0.25"},"driver":"compute","updatedAt":"2027-01-15T08:00:00Z"})");
}

// X2: a=B=0.25, compute 90: 1.08 is capped at 0.5 (maxPercent 200). Next cycle a=0.5: 180 % -> min(1.08, 1.0)
// = 1. Then a=1 and 90 % is neither ≥ 100 nor < 75: stable.
TEST(ReactiveExamples, X2CappedStepsThenStable) {
  Cycle r;
  r.in.pods = {pod("p-1", {ctr("app", 25, 90, std::nullopt)})};
  Outcome out = r.go();
  EXPECT_EQ(out.result, Result::kRecommended);  // REA-6: the cap is relative to the current allocation
  EXPECT_EQ(strings(out.requests), (Strings{{"app", "0.5"}}));
  EXPECT_EQ(out.driver, "compute");

  // The pod was replaced with the new allocation (ACT); the owner carries the recommendation and its state.
  r.in.existing = out.requests;
  r.in.state = out.state;
  r.in.pods = {pod("p-2", {ctr("app", 50, 90, std::nullopt)})};
  out = r.go();
  EXPECT_EQ(out.result, Result::kRecommended);
  EXPECT_EQ(strings(out.requests), (Strings{{"app", "1"}}));
  EXPECT_EQ(format_requests(out.requests), R"({"app":{"gpu":"1"}})");
  EXPECT_EQ(out.state.baseline, (std::map<std::string, Hundredths>{{"app", 25}}));  // REA-5: kept

  r.in.existing = out.requests;
  r.in.state = out.state;
  r.in.pods = {pod("p-3", {ctr("app", 100, 90, std::nullopt)})};
  out = r.go();
  EXPECT_EQ(out.result, Result::kUnchanged);  // REA-6 and REA-7 both quiet at 90 %
  EXPECT_STREQ(result_name(out.result), "UNCHANGED");
  EXPECT_TRUE(out.candidates.empty());
  EXPECT_EQ(out.requests, r.in.existing);
  EXPECT_EQ(out.state, *r.in.state);
  EXPECT_FALSE(out.state_changed);
}

// X3: a=0.30; memory 50 % over 10m (0.15 GPU < 75 %) -> max(0.18, B); compute low. B=0.25 -> 0.25; B=0.10 ->
// 0.18. A baseline below a means the owner already carries a reactive entry (REA-5).
TEST(ReactiveExamples, X3ScaleBackStopsAtBaseline) {
  struct Case {
    Hundredths baseline;
    const char* want;
    const char* driver;
  } cases[] = {
      // compute offers max(0.06, 0.25) = 0.25 too: equal candidates keep the stored driver (REA-8).
      {25, "0.25", "compute"},
      // memory 0.18 beats compute's max(0.06, 0.10) = 0.10; lower than 0.30 but the stored driver offered
      // 0.10 ≤ 0.18 (REA-8).
      {10, "0.18", "memory"},
  };
  for (const auto& c : cases) {
    Cycle r;
    r.in.pods = {pod("p-1", {ctr("app", 30, 5, 50)})};
    r.in.existing = {{"app", 30}};
    r.in.state = state({{"app", c.baseline}}, "compute");
    const Outcome out = r.go();
    EXPECT_EQ(out.result, Result::kRecommended) << c.baseline;  // REA-7
    EXPECT_EQ(strings(out.requests), (Strings{{"app", c.want}})) << c.baseline;
    EXPECT_EQ(out.driver, c.driver) << c.baseline;
    EXPECT_EQ(out.state.baseline.at("app"), c.baseline);  // the baseline stays
  }
}

// X4: a vanilla pod, x (2 GPUs) and y (1 GPU); A=B=3; upsize threshold 80; compute x 190, y 90:
// U=2.8 ≥ 2.4 -> T=min(3.36, 6)=3.36, split by allocation (REA-9).
TEST(ReactiveExamples, X4SplitAcrossContainers) {
  Cycle r;
  r.spec.compute.upsize.threshold_percent = 80;
  r.in.pods = {pod("p-1", {ctr("x", 200, 190, std::nullopt), ctr("y", 100, 90, std::nullopt)})};
  const Outcome out = r.go();
  EXPECT_EQ(out.result, Result::kRecommended);
  ASSERT_EQ(out.candidates.size(), 1u);
  EXPECT_EQ(out.candidates[0].total, 336);
  EXPECT_EQ(format_requests(out.requests), R"({"x":{"gpu":"2.24"},"y":{"gpu":"1.12"}})");  // REA-9, GPU-2
  EXPECT_EQ(whole_gpus(out.requests.at("x")), 3);  // the pods get 3 and 2 GPUs
  EXPECT_EQ(whole_gpus(out.requests.at("y")), 2);
  EXPECT_EQ(out.state.baseline, (std::map<std::string, Hundredths>{{"x", 200}, {"y", 100}}));
}

// X5: two pods, A=0.25 each, U=0.20 and 0.35; threshold 125: the second is at 140 % -> min(0.42, 0.5).
TEST(ReactiveExamples, X5HighestPodIsSelected) {
  Cycle r;
  r.spec.compute.upsize.threshold_percent = 125;
  r.in.pods = {pod("p-a", {ctr("app", 25, 20, std::nullopt)}),
               pod("p-b", {ctr("app", 25, 35, std::nullopt)})};
  const Outcome out = r.go();
  EXPECT_EQ(out.result, Result::kRecommended);  // REA-6: any pod triggers; sel = highest U_p
  EXPECT_EQ(strings(out.requests), (Strings{{"app", "0.42"}}));
  EXPECT_EQ(out.selected_pod, "p-b");
}

// X6: rec 0.54 (driver compute), a=0.54; scale-back candidates compute 0.36, memory 0.40 -> T=0.40 from
// memory; compute 0.36 ≤ 0.40, so accept: 0.4, driver memory. If compute gave none: 0.54 stays. If compute
// gave 0.40: 0.4, driver compute.
TEST(ReactiveExamples, X6LowerCandidateFromTheOtherSignal) {
  // compute fullGPU: 30 -> 0.30 GPU, ×1.2 = 0.36; 33.3 -> 0.333 ×1.2 = 0.3996 -> 0.40.
  // memory currentAllocation: 61.7 % of 0.54 = 0.33318 GPU, ×1.2 = 0.3998 -> 0.40.
  struct Case {
    const char* what;
    std::optional<double> compute_scale_back;
    Result want;
    const char* value;
    const char* driver;
  } cases[] = {
      {"compute 0.36", 30, Result::kRecommended, "0.4", "memory"},
      {"compute none", std::nullopt, Result::kUnchanged, "0.54", ""},
      {"compute 0.40", 33.3, Result::kRecommended, "0.4", "compute"},
  };
  for (const auto& c : cases) {
    Cycle r;
    ContainerInput app = ctr("app", 54, 30, 61.7);
    app.samples.compute_scale_back = c.compute_scale_back;  // none: partial data offers nothing (REA-7)
    r.in.pods = {pod("p-1", {app})};
    r.in.existing = {{"app", 54}};
    r.in.state = state({{"app", 25}}, "compute");
    const Outcome out = r.go();
    EXPECT_EQ(out.result, c.want) << c.what;  // REA-8
    EXPECT_EQ(strings(out.requests), (Strings{{"app", c.value}})) << c.what;
    EXPECT_EQ(out.driver, c.driver) << c.what;
    EXPECT_EQ(out.state.driver, *c.driver ? c.driver : "compute") << c.what;
    EXPECT_EQ(out.state_changed, c.want == Result::kRecommended) << c.what;
  }
}

// X8: a counter metric (`…_total`) only changes the query (REA-3: rate(…[1m]) through a subquery); the
// samples it returns go through the same arithmetic as a gauge's.
TEST(ReactiveExamples, X8CounterMetricSameArithmetic) {
  Cycle gauge, counter;
  counter.spec.compute.prometheus.metric = "kubex_gpu_container_sm_utilization_percent_seconds_total";
  for (Cycle* r : {&gauge, &counter}) r->in.pods = {pod("p-1", {ctr("app", 25, 40, 60)})};
  const Outcome a = gauge.go(), b = counter.go();
  EXPECT_EQ(a.result, b.result);
  EXPECT_EQ(a.requests, b.requests);
  EXPECT_EQ(a.state, b.state);
  EXPECT_EQ(a.candidates, b.candidates);
  EXPECT_EQ(strings(b.requests), (Strings{{"app", "0.48"}}));
}

}  // namespace
}  // namespace kubex::decide::reactive::test
