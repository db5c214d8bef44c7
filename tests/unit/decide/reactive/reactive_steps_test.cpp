// One table test per step of decide/reactive/steps.h.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "decide/reactive/steps.h"
#include "reactive_fixtures.h"

namespace kubex::decide::reactive::test {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

PodUsage pu(std::string name, double used, Hundredths allocated,
            std::vector<std::string> containers = {"app"}, std::size_t samples = 1) {
  return PodUsage{std::move(name), std::move(containers), used, allocated, samples};
}

// VAL-8: NaN and Inf count as missing.
TEST(ReactiveUsage, SampleOf) {
  Samples s{40, kNaN, kInf, -3, std::nullopt};
  EXPECT_EQ(sample_of(s, Query::kComputeUpsize), 40.0);
  EXPECT_EQ(sample_of(s, Query::kComputeScaleBack), std::nullopt);
  EXPECT_EQ(sample_of(s, Query::kMemoryUpsize), std::nullopt);
  EXPECT_EQ(sample_of(s, Query::kMemoryScaleBack), 0.0);
  EXPECT_EQ(sample_of(Samples{}, Query::kComputeUpsize), std::nullopt);
}

// REA-4: v/100 GPUs under fullGPU, v/100 × a_c under currentAllocation; U_p and A_p over included containers.
TEST(ReactiveUsage, ContainerAndPodUsage) {
  EXPECT_DOUBLE_EQ(container_usage(40, 25, false), 0.40);
  EXPECT_DOUBLE_EQ(container_usage(60, 25, true), 0.15);
  EXPECT_DOUBLE_EQ(container_usage(190, 200, false), 1.9);
  EXPECT_TRUE(is_current_allocation({"m", "currentAllocation", "", "", ""}));
  EXPECT_FALSE(is_current_allocation({"m", "fullGPU", "", "", ""}));

  const std::vector<PodInput> pods = {
      pod("a", {ctr("x", 200, 190, 50), ctr("y", 100, std::nullopt, 50), ctr("sidecar", 0, 99, 99)}),
      pod("none", {ctr("sidecar", 0, 99, 99)}),  // no included container: left out
      pod("b", {ctr("x", 50, 10, 10)}),
  };
  const auto full = usage(pods, Query::kComputeUpsize, false);
  ASSERT_EQ(full.size(), 2u);
  EXPECT_EQ(full[0].pod, "a");
  EXPECT_EQ(full[0].containers, (std::vector<std::string>{"x", "y"}));  // the sidecar (a_c = 0) is out
  EXPECT_DOUBLE_EQ(full[0].used, 1.9);
  EXPECT_EQ(full[0].allocated, 300);
  EXPECT_EQ(full[0].samples, 1u);
  EXPECT_FALSE(full[0].complete());
  EXPECT_EQ(full[1].pod, "b");
  EXPECT_TRUE(full[1].complete());
  const auto mem = usage(pods, Query::kMemoryScaleBack, true);
  EXPECT_DOUBLE_EQ(mem[0].used, 1.5);  // 50 % of 2 + 50 % of 1
  EXPECT_TRUE(mem[0].complete());
}

// REA-6/REA-7 thresholds: U_p×100 ≥ A_p×threshold with a 1e-9 guard; sel = highest U_p, ties by pod name.
TEST(ReactiveUsage, ThresholdAndSelection) {
  EXPECT_TRUE(at_or_above(0.25, 25, 100));  // 0.25×100 ≥ 0.25×100
  EXPECT_TRUE(at_or_above(0.1 + 0.2, 30, 100));
  EXPECT_TRUE(at_or_above(0.7 * 0.3 / 0.3, 70, 100));
  EXPECT_FALSE(at_or_above(0.2499, 25, 100));
  EXPECT_TRUE(at_or_above(0.35, 25, 125));  // X5: 140 %
  EXPECT_FALSE(at_or_above(0.20, 25, 125));
  EXPECT_TRUE(at_or_above(2.8, 300, 80));  // X4

  std::vector<PodUsage> pods = {pu("b", 0.3, 25), pu("a", 0.3, 25), pu("c", 0.2, 25),
                                pu("z", 0.9, 25, {"app"}, 0)};
  ASSERT_NE(select(pods), nullptr);
  EXPECT_EQ(select(pods)->pod, "a");  // tie -> the smaller name; z has no sample
  pods.push_back(pu("d", 0.30000001, 25));
  EXPECT_EQ(select(pods)->pod, "d");
  EXPECT_EQ(select({pu("z", 0.9, 25, {"app"}, 0)}), nullptr);
  EXPECT_EQ(select({}), nullptr);
}

// REA-5: a_c whenever the owner has no reactive entry for c; else the stored baseline, else a_c.
TEST(ReactiveBaseline, Table) {
  const std::vector<PodInput> pods = {
      pod("p-1", {ctr("app", 50, 1, 1), ctr("side", 20, 1, 1), ctr("off", 0, 1, 1)}),
      pod("p-2", {ctr("app", 40, 1, 1), ctr("side", 30, 1, 1)})};
  const State stored = state({{"app", 25}, {"gone", 10}}, "compute");
  struct Case {
    const char* what;
    std::map<std::string, Hundredths> existing;
    std::optional<State> stored;
    std::map<std::string, Hundredths> want;
  } cases[] = {
      {"no entry: a_c (the largest among the pods)", {}, stored, {{"app", 50}, {"side", 30}}},
      {"entry and stored baseline", {{"app", 60}}, stored, {{"app", 25}, {"side", 30}}},
      {"entry, stored state lacks c", {{"app", 60}, {"side", 40}}, stored, {{"app", 25}, {"side", 30}}},
      {"entry, no stored state", {{"app", 60}}, std::nullopt, {{"app", 50}, {"side", 30}}},
  };
  for (const auto& c : cases) EXPECT_EQ(baselines(pods, c.existing, c.stored), c.want) << c.what;
  EXPECT_EQ(baseline_total(pu("p", 0, 70, {"app", "side"}), {{"app", 25}, {"side", 30}}), 55);  // B
}

// REA-6: min(H×(1+headroom/100), A_sel×maxPercent/100), only when greater than A_sel.
TEST(ReactiveUpsize, Table) {
  const api::UpsizeRule rule{100, 2min, 20, 200};
  struct Case {
    const char* what;
    std::vector<PodUsage> pods;
    api::UpsizeRule rule;
    std::optional<Hundredths> want;
    const char* sel;
  } cases[] = {
      {"X1 0.40 of 0.25", {pu("p", 0.40, 25)}, rule, 48, "p"},
      {"X2 capped at 200 %", {pu("p", 0.90, 25)}, rule, 50, "p"},
      {"exactly at the threshold", {pu("p", 0.25, 25)}, rule, 30, "p"},
      {"below the threshold", {pu("p", 0.24, 25)}, rule, std::nullopt, ""},
      {"no sample", {pu("p", 0, 25, {"app"}, 0)}, rule, std::nullopt, ""},
      {"X5 the highest pod", {pu("a", 0.20, 25), pu("b", 0.35, 25)}, {125, 2min, 20, 200}, 42, "b"},
      // the cap is relative to sel's allocation, and the cap itself rounds up (GPU-2)
      {"maxPercent 150 of 0.25", {pu("p", 0.9, 25)}, {100, 2min, 20, 150}, 38, "p"},
      // a step that does not exceed A_sel does not count
      {"maxPercent 100", {pu("p", 0.9, 25)}, {100, 2min, 20, 100}, std::nullopt, ""},
      {"threshold 50, headroom 0", {pu("p", 0.2, 25)}, {50, 2min, 0, 200}, std::nullopt, ""},
      // sel is the highest U_p, even when another pod is the one that triggered
      {"sel is not the trigger", {pu("big", 0.9, 100), pu("small", 0.3, 25)}, rule, 108, "big"},
  };
  for (const auto& c : cases) {
    const auto got = upsize(c.pods, c.rule, kCompute);
    ASSERT_EQ(got.has_value(), c.want.has_value()) << c.what;
    if (!got) continue;
    EXPECT_EQ(got->total, *c.want) << c.what;
    EXPECT_EQ(got->pod, c.sel) << c.what;
    EXPECT_EQ(got->signal, "compute");
    EXPECT_EQ(got->direction, "upsize");
    EXPECT_FALSE(got->oom);
  }
}

// REA-7: only with complete data and every pod below the threshold; max(H×(1+headroom/100), B), only when
// < A_sel.
TEST(ReactiveScaleBack, Table) {
  const api::ScaleBackRule rule{75, 10min, 20};
  const std::map<std::string, Hundredths> b25 = {{"app", 25}}, b10 = {{"app", 10}};
  struct Case {
    const char* what;
    std::vector<PodUsage> pods;
    std::map<std::string, Hundredths> baseline;
    std::optional<Hundredths> want;
  } cases[] = {
      {"X1 not below a", {pu("p", 0.15, 25)}, b25, std::nullopt},
      {"X3 B=0.25", {pu("p", 0.15, 30)}, b25, 25},
      {"X3 B=0.10", {pu("p", 0.15, 30)}, b10, 18},
      {"exactly at the threshold is not below", {pu("p", 0.225, 30)}, b10, std::nullopt},
      {"one pod at the threshold blocks", {pu("a", 0.05, 30), pu("b", 0.30, 30)}, b10, std::nullopt},
      {"sel = the highest of the pods", {pu("a", 0.05, 30), pu("b", 0.10, 30)}, b10, 12},
      // REA-7 partial data: one container without a sample -> no downsize
      {"partial pod", {pu("p", 0.05, 60, {"x", "y"}, 1)}, {{"x", 10}, {"y", 10}}, std::nullopt},
      {"one pod without samples", {pu("a", 0.05, 30), pu("b", 0, 30, {"app"}, 0)}, b10, std::nullopt},
      {"no pods", {}, b10, std::nullopt},
      {"B over both containers", {pu("p", 0.05, 60, {"x", "y"}, 2)}, {{"x", 10}, {"y", 30}}, 40},
  };
  for (const auto& c : cases) {
    const auto got = scale_back(c.pods, rule, c.baseline, kMemory);
    ASSERT_EQ(got.has_value(), c.want.has_value()) << c.what;
    if (!got) continue;
    EXPECT_EQ(got->total, *c.want) << c.what;
    EXPECT_EQ(got->direction, "scaleBack");
    EXPECT_EQ(got->signal, "memory");
  }
}

// REA-8 inputs: one offer per signal; OOM (REA-11) replaces a smaller upsize; an upsize hides the scale-back.
TEST(ReactiveCombine, Offer) {
  const Candidate up{"memory", "upsize", 40, "p"}, bump{"memory", "upsize", 50, "p", 0.5, 25, true},
      small_bump{"memory", "upsize", 30, "p", 0.3, 25, true}, back{"memory", "scaleBack", 20, "p"};
  EXPECT_EQ(offer(up, std::nullopt, back), up);
  EXPECT_EQ(offer(up, bump, back), bump);
  EXPECT_EQ(offer(up, small_bump, back), up);
  EXPECT_EQ(offer(std::nullopt, small_bump, back), small_bump);
  EXPECT_EQ(offer(std::nullopt, std::nullopt, back), back);
  EXPECT_EQ(offer(std::nullopt, std::nullopt, std::nullopt), std::nullopt);
}

// REA-8: the higher T wins; equal T keeps the stored driver; a lower T than the existing recommendation is
// accepted only from the stored driver, or when the stored driver also offered a candidate ≤ T.
TEST(ReactiveCombine, WinnerAndAcceptance) {
  const std::optional<Candidate> c36{{"compute", "scaleBack", 36, "p"}},
      m40{{"memory", "scaleBack", 40, "p"}}, c40{{"compute", "scaleBack", 40, "p"}};
  EXPECT_EQ(winner(c36, m40, "compute"), &*m40);
  EXPECT_EQ(winner(c40, m40, "compute"), &*c40);
  EXPECT_EQ(winner(c40, m40, "memory"), &*m40);
  EXPECT_EQ(winner(c40, m40, ""), &*c40);
  EXPECT_EQ(winner(std::nullopt, m40, "compute"), &*m40);
  EXPECT_EQ(winner(c36, std::nullopt, "memory"), &*c36);
  EXPECT_EQ(winner(std::nullopt, std::nullopt, "memory"), nullptr);

  struct Case {
    const char* what;
    Candidate win;
    std::optional<Candidate> other;
    const char* driver;
    std::optional<Hundredths> existing;
    bool want;
  } cases[] = {
      {"no existing recommendation", *m40, std::nullopt, "", std::nullopt, true},
      {"not lower", *m40, std::nullopt, "", 40, true},
      {"higher", *m40, std::nullopt, "", 30, true},
      {"lower, from the stored driver", *m40, std::nullopt, "memory", 54, true},
      {"X6 lower, the stored driver offered less", *m40, *c36, "compute", 54, true},
      {"X6 lower, the stored driver offered none", *m40, std::nullopt, "compute", 54, false},
      {"lower, no stored driver", *m40, *c36, "", 54, false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(accepted(c.win, c.other ? &*c.other : nullptr, c.driver, c.existing), c.want) << c.what;
  }

  EXPECT_EQ(existing_total(pu("p", 0, 300, {"x", "y"}), {{"x", 224}, {"y", 112}, {"z", 5}}), 336);
  EXPECT_EQ(existing_total(pu("p", 0, 300, {"x", "y"}), {{"x", 224}}), std::nullopt);
  EXPECT_EQ(existing_total(pu("p", 0, 300, {"x", "y"}), {}), std::nullopt);
}

// REA-9: rec_c = T × a_c / A_sel per GPU-2, for the included containers of sel only.
TEST(ReactiveOutput, Split) {
  Candidate t{"compute", "upsize", 336, "p", 2.8 * 1.2, 300};
  const PodInput p = pod("p", {ctr("x", 200, 1, 1), ctr("y", 100, 1, 1), ctr("side", 0, 1, 1)});
  EXPECT_EQ(strings(split(t, p)), (Strings{{"x", "2.24"}, {"y", "1.12"}}));  // X4
  t.exact = 0.4 * 1.2;
  EXPECT_EQ(strings(split(t, pod("p", {ctr("app", 25, 1, 1)}))), (Strings{{"app", "0.48"}}));  // GPU-1
  t.exact = 0.015;
  EXPECT_EQ(strings(split(t, pod("p", {ctr("a", 1, 1, 1), ctr("b", 2, 1, 1)}))),
            (Strings{{"a", "0.01"}, {"b", "0.01"}}));  // GPU-2 minimum 0.01
  EXPECT_TRUE(split(t, pod("p", {ctr("side", 0, 1, 1)})).empty());
}

}  // namespace
}  // namespace kubex::decide::reactive::test
