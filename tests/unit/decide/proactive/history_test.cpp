// PRO-2 … PRO-4 and PRO-7: what a container's GPU history is worth, and which source the owner's value comes from.
#include "decide/proactive/history.h"

#include <gtest/gtest.h>

#include <random>

#include "../fixtures.h"

using namespace kubex;
using namespace kubex::decide;
using namespace kubex::decide::test;
using namespace std::chrono_literals;

namespace {

ContainerHistory history(double sm, double mem, std::chrono::seconds span) {
  return {sm, mem, span, span};
}

}  // namespace

// PRO-9: 4 days as nvidia.com/gpu: 1, SM p95 22 %, memory max 30 % of the device -> 0.36, peak 0.3, span 96h.
TEST(ProactiveHistory, Pro9WholeGpuExample) {
  const api::StrategySpec spec = kai_strategy().spec;
  HistoryValue v = history_value(history(22, 30, 96h), {kOneGpu, true}, 20, spec, "app");
  ASSERT_EQ(v.outcome, HistoryOutcome::kValue) << v.reason;
  EXPECT_EQ(format_gpu(v.gpu), "0.36");
  EXPECT_EQ(format_gpu(v.peak), "0.3");
  EXPECT_EQ(v.span, std::chrono::seconds(96h));
  // With 40 minutes of history instead, nothing (NO_DATA in the summary).
  v = history_value(history(22, 30, 40min), {kOneGpu, true}, 20, spec, "app");
  EXPECT_EQ(v.outcome, HistoryOutcome::kTooLittleHistory);
  EXPECT_EQ(v.reason, "SM history covers 40m, under the 1h PRO-2 needs");
}

// PRO-2/PRO-3: a KAI pod's memory is relative to its allocation (80 % of 0.25 = 0.20 GPU); compute is of a full GPU.
TEST(ProactiveHistory, KaiMemoryIsRelativeToTheAllocation) {
  const api::StrategySpec spec = kai_strategy().spec;
  HistoryValue v = history_value(history(30, 80, 2h), {25, false}, 20, spec, "app");
  ASSERT_EQ(v.outcome, HistoryOutcome::kValue);
  EXPECT_EQ(format_gpu(v.gpu), "0.36");  // max(0.30, 0.20) x 1.2
  EXPECT_EQ(format_gpu(v.peak), "0.2");
  // Memory that dominates: 90 % of 0.5 = 0.45 -> 0.54.
  EXPECT_EQ(format_gpu(history_value(history(10, 90, 2h), {50, false}, 20, spec, "app").gpu), "0.54");
  // Whole GPUs: memory relative to one device, not multiplied by the count.
  EXPECT_EQ(format_gpu(history_value(history(10, 50, 2h), {2 * kOneGpu, true}, 20, spec, "app").gpu), "0.6");
}

// PRO-2's span rule applies to each signal; PRO-4: no allocation, no history value; missing samples are NO_DATA.
TEST(ProactiveHistory, EachSignalNeedsAnHourAndAnAllocation) {
  const api::StrategySpec spec = kai_strategy().spec;
  struct Row {
    const char* name;
    ContainerHistory h;
    Allocation a;
    HistoryOutcome want;
  } rows[] = {
      {"both spans 1h exactly", {20.0, 20.0, 1h, 1h}, {kOneGpu, true}, HistoryOutcome::kValue},
      {"memory span 59m", {20.0, 20.0, 2h, 59min}, {kOneGpu, true}, HistoryOutcome::kTooLittleHistory},
      {"compute span 30m", {20.0, 20.0, 30min, 2h}, {kOneGpu, true}, HistoryOutcome::kTooLittleHistory},
      {"no SM series", {std::nullopt, 20.0, std::nullopt, 2h}, {kOneGpu, true}, HistoryOutcome::kNoData},
      {"no memory series", {20.0, std::nullopt, 2h, std::nullopt}, {kOneGpu, true}, HistoryOutcome::kNoData},
      {"no GPU allocated", {20.0, 20.0, 2h, 2h}, {0, false}, HistoryOutcome::kNoAllocation},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(history_value(r.h, r.a, 20, spec, "app").outcome, r.want) << r.name;
  }
}

// PRO-3's clamp applies to history values too: 0.9 x 1.2 is clamped to the ceiling 1.
TEST(ProactiveHistory, ValueIsClampedToTheStrategy) {
  const api::StrategySpec spec = kai_strategy().spec;
  HistoryValue v = history_value(history(90, 10, 3h), {kOneGpu, true}, 20, spec, "app");
  EXPECT_EQ(format_gpu(v.gpu), "1");
  EXPECT_EQ(v.clamp, Clamp::kCeiling);
}

// PRO-7: ConfigMap over history; a fresh history value next; a previous HISTORY value stays only while the history
// cannot be refreshed; a value whose source vanished is removed.
TEST(ProactiveHistory, SourceTable) {
  const HistoryValue fresh{HistoryOutcome::kValue, 36, Clamp::kNone, 30, 96h, ""};
  const HistoryValue short_history{HistoryOutcome::kTooLittleHistory, 0, Clamp::kNone, 0, 0s, "r"};
  const HistoryValue no_alloc{HistoryOutcome::kNoAllocation, 0, Clamp::kNone, 0, 0s, "r"};
  using P = std::optional<std::pair<Hundredths, ProactiveSource>>;
  const P from_history = std::pair{Hundredths{40}, ProactiveSource::kHistory};
  const P from_configmap = std::pair{Hundredths{50}, ProactiveSource::kConfigMap};
  struct Row {
    const char* name;
    std::optional<Hundredths> cm;
    std::optional<HistoryValue> hist;
    P prev;
    ProactiveSource source;
    Hundredths gpu;
    bool kept;
  } rows[] = {
      {"ConfigMap wins over fresh history", 25, fresh, from_history, ProactiveSource::kConfigMap, 25, false},
      {"fresh history", std::nullopt, fresh, std::nullopt, ProactiveSource::kHistory, 36, false},
      {"ConfigMap entry gone: history takes over at once", std::nullopt, fresh, from_configmap,
       ProactiveSource::kHistory, 36, false},
      {"ConfigMap entry gone, no history: removed", std::nullopt, short_history, from_configmap,
       ProactiveSource::kNone, 0, false},
      {"Prometheus down: the history value stays", std::nullopt, std::nullopt, from_history,
       ProactiveSource::kHistory, 40, true},
      {"too little history now: the history value stays", std::nullopt, short_history, from_history,
       ProactiveSource::kHistory, 40, true},
      {"the container lost its GPU: removed", std::nullopt, no_alloc, from_history, ProactiveSource::kNone, 0, false},
      {"never had a value, no history", std::nullopt, short_history, std::nullopt, ProactiveSource::kNone, 0, false},
  };
  for (const auto& r : rows) {
    ProactiveChoice c = choose_proactive(r.cm, r.hist, r.prev);
    EXPECT_EQ(c.source, r.source) << r.name;
    EXPECT_EQ(c.gpu, r.gpu) << r.name;
    EXPECT_EQ(c.kept, r.kept) << r.name;
  }
}

// Properties over random inputs: never a value from under an hour of history; a failed read never lowers or removes a
// history value; a ConfigMap entry always wins while present.
TEST(ProactiveHistory, Properties) {
  const api::StrategySpec spec = kai_strategy().spec;
  std::mt19937 rng(23);
  std::uniform_real_distribution<double> pct(0, 120);
  std::uniform_int_distribution<int> minutes(0, 6000), alloc(0, 200), cm(1, 150);
  for (int i = 0; i < 5000; ++i) {
    ContainerHistory h{pct(rng), pct(rng), std::chrono::minutes(minutes(rng)), std::chrono::minutes(minutes(rng))};
    Allocation a{alloc(rng), rng() % 2 == 0};
    HistoryValue v = history_value(h, a, 20, spec, "app");
    if (v.outcome == HistoryOutcome::kValue) {
      ASSERT_GE(*h.compute_span, kMinHistorySpan);
      ASSERT_GE(*h.memory_span, kMinHistorySpan);
      ASSERT_GT(a.gpu, 0);
      ASSERT_GE(v.gpu, 1);
      ASSERT_LE(v.gpu, kOneGpu);  // the strategy's ceiling
    }
    Hundredths before = 1 + static_cast<Hundredths>(rng() % 150);
    ProactiveChoice failed = choose_proactive(std::nullopt, std::nullopt, std::pair{before, ProactiveSource::kHistory});
    ASSERT_EQ(failed.gpu, before);
    ASSERT_EQ(failed.source, ProactiveSource::kHistory);
    Hundredths entry = cm(rng);
    ProactiveChoice withcm = choose_proactive(entry, v, std::pair{before, ProactiveSource::kHistory});
    ASSERT_EQ(withcm.source, ProactiveSource::kConfigMap);
    ASSERT_EQ(withcm.gpu, entry);
  }
}
