#include <gtest/gtest.h>

#include "decide/reactive/reactive.h"
#include "reactive_fixtures.h"

namespace kubex::decide::reactive::test {
namespace {

// REA-2: Running, not terminating, has status.startTime, and now − startTime ≥ minPodMetricsAge
// (0s disables the check).
TEST(ReactiveEligibility, Table) {
  struct Case {
    const char* what;
    PodFacts pod;
    common::Duration min_age;
    bool want;
  } cases[] = {
      {"running, old enough", {"Running", false, kNow - 20min}, 15min, true},
      {"exactly the minimum age", {"Running", false, kNow - 15min}, 15min, true},
      {"pending", {"Pending", false, kNow - 20min}, 15min, false},
      {"succeeded", {"Succeeded", false, kNow - 20min}, 15min, false},
      {"terminating", {"Running", true, kNow - 20min}, 15min, false},
      {"no startTime", {"Running", false, std::nullopt}, 15min, false},
      {"no startTime, 0s", {"Running", false, std::nullopt}, 0s, false},
      {"younger than the minimum", {"Running", false, kNow - 14min - 59s}, 15min, false},
      {"0s disables the age check", {"Running", false, kNow}, 0s, true},
      {"0s, start time in the future", {"Running", false, kNow + 1min}, 0s, true},
      {"start time in the future", {"Running", false, kNow + 1min}, 1min, false},
  };
  for (const auto& c : cases) EXPECT_EQ(eligible(c.pod, c.min_age, kNow), c.want) << c.what;  // REA-2
}

// X7: minPodMetricsAge 15m and the only pod started 9m ago: no eligible pod, nothing changes.
TEST(ReactiveExamples, X7YoungPodIsNotEligible) {
  const api::ReactiveSpec spec = starter();
  const PodFacts facts{"Running", false, kNow - 9min};
  ASSERT_FALSE(eligible(facts, spec.min_pod_metrics_age, kNow));  // REA-2
  Input in;
  in.spec = &spec;
  in.now = kNow;
  in.existing = {{"app", 48}};
  in.state = state({{"app", 25}}, "compute");
  const Outcome out = decide(in);  // the controller passes only eligible pods: none
  EXPECT_EQ(out.result, Result::kNoData);
  EXPECT_STREQ(result_name(out.result), "NO_DATA");
  EXPECT_EQ(out.requests, in.existing);
  EXPECT_EQ(out.state, *in.state);
  EXPECT_FALSE(out.state_changed);
}

}  // namespace
}  // namespace kubex::decide::reactive::test
