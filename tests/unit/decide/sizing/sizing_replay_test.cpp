// The sizing replay (decide/sizing, issue 36) on hand-made series: each report field, the engine's own decisions
// driving it (a policy change shows in the replay with no replay change), SEL-6's order, PRO-1/PRO-2's first
// value, the references, and the policy file.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "common/file_io.h"
#include "common/yaml.h"
#include "decide/sizing/policy_file.h"
#include "decide/sizing/replay.h"
#include "kubex_paths.h"

namespace kubex::decide::sizing {
namespace {

using std::chrono::seconds;
const common::TimePoint kT0 = common::TimePoint(seconds(1'700'000'000));

// One sample a minute; memory and compute in GPUs (nullopt: missing).
const nlohmann::json kScope = {{"namespaceSelector", {{"operator", "In"}, {"values", {"*"}}}}};

ContainerSeries series(const std::vector<std::optional<double>>& memory, std::optional<double> compute = 0.0) {
  ContainerSeries s;
  s.id = "c";
  for (std::size_t i = 0; i < memory.size(); ++i) {
    s.samples.push_back({kT0 + seconds(60 * static_cast<long>(i)), memory[i], compute});
  }
  return s;
}

nlohmann::json strategy_doc(bool downsize = true) {
  return {{"apiVersion", "rightsizing.kubex.ai/v1alpha1"},
          {"kind", "ClusterAutomationStrategy"},
          {"metadata", {{"name", "s"}}},
          {"spec",
           {{"experimental", {{"gpuKaiContract", "v1alpha1-2026-07"}}},
            {"enablement",
             {{"overrideScheduler", "kai"},
              {"gpu", {{"requests", {{"downsize", downsize}, {"upsize", true}, {"ceiling", "1"}}}}}}}}}};
}

// A ClusterGpuReactivePolicy with the guide's thresholds; `memory_headroom` and `age` vary.
nlohmann::json reactive_doc(int memory_headroom = 20, const std::string& age = "0s") {
  const auto signal = [](const std::string& metric, const std::string& interpretation, int headroom) {
    return nlohmann::json{
        {"prometheus",
         {{"metric", metric}, {"interpretation", interpretation}, {"namespaceLabel", "namespace"},
          {"podLabel", "pod"}, {"containerLabel", "container"}}},
        {"upsize", {{"thresholdPercent", 100}, {"metricsWindow", "2m"}, {"headroomPercent", headroom}, {"maxPercent", 200}}},
        {"scaleBack", {{"thresholdPercent", 75}, {"metricsWindow", "10m"}, {"headroomPercent", 20}}}};
  };
  return {{"apiVersion", "rightsizing.kubex.ai/v1alpha1"},
          {"kind", "ClusterGpuReactivePolicy"},
          {"metadata", {{"name", "r"}}},
          {"spec",
           {{"experimental", {{"gpuKaiContract", "v1alpha1-2026-07"}}},
            {"automationStrategyRef", {{"name", "s"}}},
            {"scope", kScope},
            {"minPodMetricsAge", age},
            {"metrics",
             {{"compute", signal("sm", "fullGPU", 20)}, {"memory", signal("mem", "currentAllocation", memory_headroom)}}}}}};
}

nlohmann::json static_doc(const std::string& gpu) {
  return {{"apiVersion", "rightsizing.kubex.ai/v1alpha1"},
          {"kind", "ClusterStaticPolicy"},
          {"metadata", {{"name", "st"}}},
          {"spec", {{"automationStrategyRef", {{"name", "s"}}},
                    {"scope", kScope},
                    {"resources", {{"containers", {{"*", {{"requests", {{"gpu", gpu}}}}}}}}}}}};
}

nlohmann::json proactive_doc() {
  return {{"apiVersion", "rightsizing.kubex.ai/v1alpha1"},
          {"kind", "ClusterProactivePolicy"},
          {"metadata", {{"name", "p"}}},
          {"spec", {{"automationStrategyRef", {{"name", "s"}}}, {"scope", kScope}}}};
}

ReplayPolicies policies(const std::vector<nlohmann::json>& docs) {
  auto p = replay_policies(docs);
  EXPECT_TRUE(p.has_value()) << (p ? "" : p.error().str());
  return p ? *p : ReplayPolicies{};
}

// Every field of the report on four samples a minute apart.
TEST(SizingTally, EveryFieldOnAHandMadeSeries) {
  const ContainerSeries s = series({0.3, 0.6, 0.4, 0.3});
  const Tally t = tally(s, {100, 50, 50, 25}, 100);
  EXPECT_NEAR(t.gpu_hours_as_written, 4.0 / 60.0, 1e-12);               // 4 minutes of one GPU
  EXPECT_NEAR(t.gpu_hours_held, (1 + 0.5 + 0.5 + 0.25) / 60.0, 1e-12);  // the last sample covers the median spacing
  EXPECT_NEAR(t.saved_percent(), 43.75, 1e-9);
  EXPECT_EQ(t.samples, 4u);
  EXPECT_EQ(t.over_allocation_samples, 2u);  // 0.6 > 0.5 and 0.3 > 0.25
  EXPECT_EQ(t.over_allocation_episodes, 2u);
  EXPECT_NEAR(t.over_allocation_percent(), 50.0, 1e-9);
  EXPECT_EQ(t.resizes, 2u);  // 1 -> 0.5 -> 0.25
  EXPECT_NEAR(t.days, 240.0 / 86400.0, 1e-12);
  EXPECT_NEAR(t.resizes_per_container_day(), 2 / (240.0 / 86400.0), 1e-6);
}

// An episode is one run of samples above the allocation; a sample without memory is not judged and does not
// end it; memory exactly at the allocation is not above it.
TEST(SizingTally, EpisodesAreRunsAndMissingMemoryIsNotJudged) {
  const Tally t = tally(series({0.6, std::nullopt, 0.7, 0.5, 0.6}), {50, 50, 50, 50, 50}, 100);
  EXPECT_EQ(t.samples, 4u);
  EXPECT_EQ(t.over_allocation_samples, 3u);
  EXPECT_EQ(t.over_allocation_episodes, 2u);
  EXPECT_EQ(t.resizes, 1u);  // as written -> 0.5 at the first sample
}

TEST(SizingQuantile, MatchesPrometheusQuantileOverTime) {
  EXPECT_DOUBLE_EQ(*prometheus_quantile(0.95, {4, 1, 3, 2}), 3.85);  // rank 2.85 between 3 and 4
  EXPECT_DOUBLE_EQ(*prometheus_quantile(0.95, {7}), 7);
  EXPECT_FALSE(prometheus_quantile(0.95, {}).has_value());
}

// ADM-7 ceiling, ADM-8 whole GPUs from 1 up, ADM-9 direction gate against the value as written.
TEST(SizingAdmitted, StrategyClampsGatesAndWholeGpus) {
  const api::StrategySpec starter = starter_strategy();
  EXPECT_EQ(admitted(130, starter, 100), 100);  // ceiling "1"
  EXPECT_EQ(admitted(42, starter, 100), 42);
  api::StrategySpec open = starter;
  open.gpu_requests.bounds.ceiling.reset();
  EXPECT_EQ(admitted(130, open, 100), 200);  // 1.3 GPUs: two whole GPUs
  open.gpu_requests.downsize = false;
  EXPECT_EQ(admitted(42, open, 100), 100);  // a downsize the strategy forbids: as written
}

// SEL-6 + REA-6: the static value starts the pod at 0.5; memory at 110 % of it triggers the memory upsize to
// 0.55 × 1.2 = 0.66, and the replacement pod holds it from the next sample.
TEST(SizingReplay, StaticStartThenMemoryUpsizeFromTheEngineDecision) {
  const ContainerSeries s = series({0.3, 0.3, 0.3, 0.55, 0.5, 0.5});
  std::vector<Step> steps;
  const auto held = replay_kubex(s, policies({strategy_doc(), reactive_doc(), static_doc("0.5")}), 100, &steps);
  EXPECT_EQ(held, (std::vector<Hundredths>{100, 50, 50, 50, 66, 66}));
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].source, "static");
  EXPECT_EQ(steps[1].source, "reactive");
  EXPECT_EQ(steps[1].driver, "memory");
  EXPECT_EQ(steps[1].index, 3u);
}

// The replay has no sizing rule of its own: the policy's memory headroom (REA-6) alone moves the result,
// 0.55 × 1.5 = 0.825 -> 0.83; then 0.5 of 0.83 is 60 % < 75 %, so REA-7 scales back to max(0.5 × 1.2, the
// baseline 0.5) = 0.6 at once (with 20 % headroom, 0.5 of 0.66 is 75.8 %: no scale-back).
TEST(SizingReplay, APolicyChangeShowsUpWithNoReplayChange) {
  const ContainerSeries s = series({0.3, 0.3, 0.3, 0.55, 0.5, 0.5, 0.5});
  const auto held = replay_kubex(s, policies({strategy_doc(), reactive_doc(50), static_doc("0.5")}), 100);
  EXPECT_EQ(held, (std::vector<Hundredths>{100, 50, 50, 50, 83, 60, 60}));
}

// REA-2: with minPodMetricsAge 2m the replacement pod is not evaluated for two minutes, so the upsize waits.
TEST(SizingReplay, MinPodMetricsAgeDelaysTheReplacementsCycles) {
  const ContainerSeries s = series({0.3, 0.3, 0.3, 0.55, 0.5, 0.5});
  const auto held = replay_kubex(s, policies({strategy_doc(), reactive_doc(20, "2m"), static_doc("0.5")}), 100);
  // pod 1 starts at minute 0 (after sample 0); eligible from minute 2; memory 0.55 at minute 3 -> 0.66.
  EXPECT_EQ(held, (std::vector<Hundredths>{100, 50, 50, 50, 66, 66}));
  const auto later = replay_kubex(s, policies({strategy_doc(), reactive_doc(20, "4m"), static_doc("0.5")}), 100);
  // eligible from minute 4: the 2m window [2m, 4m] still holds 0.55 -> upsize decided at minute 4.
  EXPECT_EQ(later, (std::vector<Hundredths>{100, 50, 50, 50, 50, 66}));
}

// REA-5: a reactive policy alone never scales a workload below the allocation it started with: the pod written
// as one GPU stays there, however little it uses.
TEST(SizingReplay, ReactiveAloneKeepsTheWorkloadAtItsBaseline) {
  const auto held = replay_kubex(series(std::vector<std::optional<double>>(30, 0.1)),
                                 policies({strategy_doc(), reactive_doc()}), 100);
  EXPECT_EQ(held, std::vector<Hundredths>(30, 100));
}

// PRO-1/PRO-2/PRO-3: the first read (t0) has no hour of history; the next one, an hour later, has: max(p95
// compute 0.1, memory 0.4 of one device) × 1.2 = 0.48, held from the sample after that read.
TEST(SizingReplay, ProactiveHistoryValueAfterAnHour) {
  const ContainerSeries s = series(std::vector<std::optional<double>>(64, 0.4), 0.1);
  std::vector<Step> steps;
  const auto held = replay_kubex(s, policies({strategy_doc(), reactive_doc(), proactive_doc()}), 100, &steps);
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps[0].source, "proactive");
  EXPECT_EQ(steps[0].next, 48);
  EXPECT_EQ(steps[0].index, 60u);  // t0 + 1h
  EXPECT_EQ(held[60], 100);
  EXPECT_EQ(held[61], 48);
  EXPECT_EQ(held[63], 48);
}

// The references on two hours: hour 0 peaks at 0.5, hour 1 at 0.25 (compute 0).
TEST(SizingReferences, OracleStaticPeakAndP95History) {
  std::vector<std::optional<double>> memory(60, 0.2);
  memory[10] = 0.5;
  memory.resize(120, 0.25);
  const ContainerSeries s = series(memory);
  const api::StrategySpec starter = starter_strategy();
  const auto oracle = oracle_hourly(s, starter, 100);
  EXPECT_EQ(oracle[0], 60);
  EXPECT_EQ(oracle[119], 30);
  const auto peak = static_peak(s, starter, 100);
  EXPECT_EQ(peak, std::vector<Hundredths>(120, 60));
  const auto p95 = p95_history(s, starter, 100);
  EXPECT_EQ(p95[59], 100);  // the first hour: as written
  EXPECT_EQ(p95[60], 24);   // p95 of hour 0 = 0.2 → 0.24
  EXPECT_EQ(tally(s, p95, 100).over_allocation_samples, 60u);  // every hour-1 sample (0.25 > 0.24)
}

// The policy file: the guide's starter example as written; errors name the document and field path.
TEST(SizingPolicyFile, StarterExampleAndErrors) {
  auto text = common::read_file(std::string(kubex_paths::source_dir()) + "/examples/kai-gpu-sharing.yaml");
  ASSERT_TRUE(text.has_value());
  auto docs = common::yaml_to_json_documents(*text);
  ASSERT_TRUE(docs.has_value());
  const ReplayPolicies p = policies(*docs);
  EXPECT_EQ(p.reactive_name, "kai-gpu-sharing-reactive");
  EXPECT_EQ(p.strategy_name, "kai-gpu-sharing");
  EXPECT_TRUE(p.proactive.has_value());
  EXPECT_EQ(p.reactive.min_pod_metrics_age, std::chrono::minutes(10));

  nlohmann::json bad = reactive_doc();
  bad["spec"]["metrics"]["memory"]["upsize"]["thresholdPercent"] = 0;
  auto r = replay_policies({strategy_doc(), bad});
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().str().find("document 2 (ClusterGpuReactivePolicy r): spec.metrics.memory.upsize.thresholdPercent"),
            std::string::npos)
      << r.error().str();
  EXPECT_FALSE(replay_policies({strategy_doc()}).has_value());  // no reactive policy
}

}  // namespace
}  // namespace kubex::decide::sizing
