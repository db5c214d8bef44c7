// decide() as a whole: results (OBS-4), partial data (REA-7), the baseline and when the state is worth
// writing.
#include <gtest/gtest.h>

#include "decide/reactive/reactive.h"
#include "reactive_fixtures.h"

namespace kubex::decide::reactive::test {
namespace {

// REA-7: one container without a scale-back sample -> no downsize, although every sample is far below.
TEST(ReactiveDecide, PartialScaleBackDataNeverDownsizes) {
  Cycle r;
  ContainerInput x = ctr("x", 100, 5, 5), y = ctr("y", 100, 5, 5);
  y.samples.memory_scale_back.reset();
  r.in.pods = {pod("p-1", {x, y})};
  r.in.existing = {{"x", 100}, {"y", 100}};
  r.in.state = state({{"x", 10}, {"y", 10}}, "memory");
  Outcome out = r.go();
  // compute still has complete data: it scales back, but is lower than the existing 2 GPUs and the stored
  // driver (memory) offered nothing -> unchanged (REA-8).
  EXPECT_EQ(out.result, Result::kUnchanged);
  ASSERT_EQ(out.candidates.size(), 1u);
  EXPECT_EQ(out.candidates[0].signal, "compute");
  EXPECT_EQ(out.requests, r.in.existing);

  y.samples.compute_scale_back.reset();  // both signals partial
  r.in.pods = {pod("p-1", {x, y})};
  r.in.state = state({{"x", 10}, {"y", 10}}, "compute");
  out = r.go();
  EXPECT_EQ(out.result, Result::kUnchanged);
  EXPECT_TRUE(out.candidates.empty());
  EXPECT_EQ(out.requests, r.in.existing);

  // A second pod with no samples at all also blocks the scale-back of the first.
  r.in.pods = {pod("p-1", {ctr("x", 100, 5, 5)}), pod("p-2", {ctr("x", 100, std::nullopt, std::nullopt)})};
  r.in.existing = {{"x", 100}};
  out = r.go();
  EXPECT_EQ(out.result, Result::kUnchanged);
  EXPECT_TRUE(out.candidates.empty());
}

// OBS-4 NO_DATA: no eligible pod, or no included container with any sample.
TEST(ReactiveDecide, NoData) {
  Cycle r;
  EXPECT_EQ(r.go().result, Result::kNoData);  // no pods
  r.in.pods = {pod("p-1", {ctr("app", 25, std::nullopt, std::nullopt)})};
  EXPECT_EQ(r.go().result, Result::kNoData);
  r.in.pods = {pod("p-1", {ctr("app", 25, std::nullopt, std::nullopt), ctr("side", 0, 99, 99)})};
  EXPECT_EQ(r.go().result, Result::kNoData);  // samples of a container without allocation do not count
  ContainerInput one = ctr("app", 25, std::nullopt, std::nullopt);
  one.samples.memory_scale_back = 50;
  r.in.pods = {pod("p-1", {one})};
  EXPECT_EQ(r.go().result, Result::kUnchanged);  // one sample is data
  Input none;
  EXPECT_EQ(decide(none).result, Result::kNoData);  // no spec
}

// REA-9: containers without an allocation are left out of the maths and of the output.
TEST(ReactiveDecide, ContainersWithoutAllocationAreLeftOut) {
  Cycle r;
  r.in.pods = {pod("p-1", {ctr("side", 0, 100, 100), ctr("app", 25, 40, 60)})};
  const Outcome out = r.go();
  EXPECT_EQ(format_requests(out.requests), R"({"app":{"gpu":"0.48"}})");
  EXPECT_EQ(out.state.baseline, (std::map<std::string, Hundredths>{{"app", 25}}));
}

// A candidate equal to the existing recommendation leaves everything as it is.
TEST(ReactiveDecide, SameValueIsUnchanged) {
  Cycle r;
  r.in.pods = {pod("p-1", {ctr("app", 25, 40, 60)})};
  r.in.existing = {{"app", 48}};
  r.in.state = state({{"app", 25}}, "memory");
  const Outcome out = r.go();
  EXPECT_EQ(out.result, Result::kUnchanged);
  EXPECT_EQ(out.requests, r.in.existing);
  EXPECT_EQ(out.state, *r.in.state);  // the driver is not rewritten
  EXPECT_FALSE(out.state_changed);
  EXPECT_EQ(out.selected_pod, "p-1");
  EXPECT_EQ(out.winner_signal, "compute");  // REA-8's pick, even when nothing new is written (kubex explain)
}

// REA-8: an upsize from the stored driver lowers a larger (not yet applied) recommendation; from the other
// signal it does not.
TEST(ReactiveDecide, LowerUpsizeFromTheStoredDriver) {
  for (const auto& [driver, want] : {std::pair{"compute", "0.48"}, std::pair{"memory", "2"}}) {
    Cycle r;
    r.in.pods = {pod("p-1", {ctr("app", 25, 40, 60)})};
    r.in.existing = {{"app", 200}};
    r.in.state = state({{"app", 25}}, driver);
    EXPECT_EQ(strings(r.go().requests), (Strings{{"app", want}})) << driver;
  }
}

// REA-8: with an existing entry but no stored state (invalid or lost), a lower candidate is not accepted.
TEST(ReactiveDecide, NoStoredDriverKeepsHigherExisting) {
  Cycle r;
  r.in.pods = {pod("p-1", {ctr("app", 54, 5, 5)})};
  r.in.existing = {{"app", 54}};
  const Outcome out = r.go();
  EXPECT_EQ(out.result, Result::kUnchanged);
  EXPECT_EQ(out.requests, r.in.existing);
  // REA-5: the stored state is missing, so the baseline falls back to a_c and the state is worth writing.
  EXPECT_EQ(out.state.baseline, (std::map<std::string, Hundredths>{{"app", 54}}));
  EXPECT_TRUE(out.state_changed);
  EXPECT_EQ(format_state(out.state), R"({"baseline":{"app":"0.54"}})");
}

// state_changed: a recommendation, or a moved baseline on a workload that carries a reactive entry; never
// just because a workload without any reactive entry has a baseline.
TEST(ReactiveDecide, StateChanged) {
  struct Case {
    const char* what;
    std::map<std::string, Hundredths> existing;
    std::optional<State> stored;
    std::optional<double> compute;  // 20: 80 % of 0.25, quiet; 40: an upsize
    bool want;
  } cases[] = {
      {"no entry, no recommendation", {}, std::nullopt, 20, false},
      {"no entry, stale state, no recommendation", {}, state({{"app", 10}}, "compute"), 20, false},
      {"no entry, recommendation", {}, std::nullopt, 40, true},
      {"entry, same baseline", {{"app", 25}}, state({{"app", 25}}, "compute"), 20, false},
      {"entry, state lacks the container", {{"app", 25}}, state({{"other", 25}}, "compute"), 20, true},
      {"entry, no state", {{"app", 25}}, std::nullopt, 20, true},
  };
  for (const auto& c : cases) {
    Cycle r;
    r.in.pods = {pod("p-1", {ctr("app", 25, c.compute, 80)})};
    r.in.existing = c.existing;
    r.in.state = c.stored;
    EXPECT_EQ(r.go().state_changed, c.want) << c.what;
  }
}

// The result of one cycle does not depend on the order the pods come in (sel ties are broken by name).
TEST(ReactiveDecide, PodOrderDoesNotMatter) {
  Cycle a, b;
  a.in.pods = {pod("p-a", {ctr("app", 25, 40, 60)}), pod("p-b", {ctr("app", 25, 40, 60)})};
  b.in.pods = {a.in.pods[1], a.in.pods[0]};
  const Outcome x = a.go(), y = b.go();
  EXPECT_EQ(x.selected_pod, "p-a");
  EXPECT_EQ(y.selected_pod, "p-a");
  EXPECT_EQ(x.requests, y.requests);
  EXPECT_EQ(x.candidates, y.candidates);
}

}  // namespace
}  // namespace kubex::decide::reactive::test
