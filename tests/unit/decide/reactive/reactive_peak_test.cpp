// REA-12: the memory peak recorded as limits.gpu for the KAI-2 burst limit.
#include <gtest/gtest.h>

#include "decide/reactive/reactive.h"
#include "reactive_fixtures.h"

namespace kubex::decide::reactive::test {
namespace {

// A pod at request 0.3 whose memory peaked at 140 % of it (currentAllocation: 0.42 GPU) records 0.42, and only
// when the workload asks for it (record_peak, i.e. KAI-2 applies).
TEST(ReactivePeak, RecordsThePeakInGpus) {
  Cycle r;
  r.in.pods = {pod("p-1", {ctr("app", 30, 50, 140)})};
  r.in.existing = {{"app", 30}};
  Outcome off = r.go();
  EXPECT_FALSE(off.limits_changed);
  EXPECT_TRUE(off.limits.empty());
  r.in.record_peak = true;
  Outcome out = r.go();
  EXPECT_TRUE(out.limits_changed);
  // The memory upsize (140 % >= 100 %) also raises the request: the peak is never below the new request.
  EXPECT_EQ(strings(out.limits), (Strings{{"app", format_gpu(std::max<Hundredths>(42, out.requests.at("app")))}}));
}

// fullGPU: the sample is a share of the whole device; the largest pod wins; never below the request.
TEST(ReactivePeak, FullGpuInterpretationAndRequestFloor) {
  Cycle r;
  r.spec.memory.prometheus.interpretation = "fullGPU";
  r.spec.memory.upsize.threshold_percent = 1000;  // no memory upsize: the request stays 0.5
  r.spec.compute.upsize.threshold_percent = 1000;
  r.in.record_peak = true;
  r.in.existing = {{"app", 50}};
  r.in.pods = {pod("p-1", {ctr("app", 50, 10, 42)}), pod("p-2", {ctr("app", 50, 10, 61)})};
  EXPECT_EQ(strings(r.go().limits), (Strings{{"app", "0.61"}}));
  r.in.pods = {pod("p-1", {ctr("app", 50, 10, 20)})};  // peak 0.2 < request 0.5
  EXPECT_EQ(strings(r.go().limits), (Strings{{"app", "0.5"}}));
}

// Written only on a change of >= 0.01; never lowered while the request is unchanged; a container without a
// sample keeps its value (missing metrics never shrink it).
TEST(ReactivePeak, NeverLoweredWhileTheRequestIsUnchangedAndKeptWithoutData) {
  Cycle r;
  r.spec.memory.prometheus.interpretation = "fullGPU";
  r.spec.memory.upsize.threshold_percent = 1000;
  r.spec.compute.upsize.threshold_percent = 1000;
  r.spec.memory.scale_back.threshold_percent = 0;
  r.spec.compute.scale_back.threshold_percent = 0;
  r.in.record_peak = true;
  r.in.existing = {{"app", 30}};
  r.in.existing_limits = {{"app", 60}};
  r.in.pods = {pod("p-1", {ctr("app", 30, 10, 45)})};
  Outcome lower = r.go();
  EXPECT_EQ(lower.requests, r.in.existing);
  EXPECT_FALSE(lower.limits_changed);  // 0.45 < 0.6, request unchanged
  r.in.pods = {pod("p-1", {ctr("app", 30, 10, 70)})};
  EXPECT_EQ(strings(r.go().limits), (Strings{{"app", "0.7"}}));  // higher: written
  r.in.pods = {pod("p-1", {ctr("app", 30, 10, std::nullopt)})};
  Outcome none = r.go();
  EXPECT_FALSE(none.limits_changed);
  EXPECT_EQ(none.limits, r.in.existing_limits);
}

}  // namespace
}  // namespace kubex::decide::reactive::test
