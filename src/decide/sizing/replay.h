// Sizing replay (`bench-sizing`, `kubex plan sizing`): one container's recorded GPU usage replayed scrape by
// scrape through the engine's own decisions, and three reference sizers run over the same samples.
//
// kubex: at every sample (one a minute, as gpuReactiveCheckInterval) the reactive policy's cycle runs with
// reactive::decide() (REA-2…REA-9) on the samples its four Prometheus queries would return at that instant:
// the current pod's own samples inside each window, quantile_over_time(0.95) for compute and max_over_time for
// memory, as percent per the signal's interpretation. A proactive history policy, when the policy file holds
// one, reloads every hour with history_value() and choose_proactive() (PRO-1…PRO-3, PRO-7) over the samples
// so far (memory since the last allocation transition). The desired value follows SEL-6's order (reactive,
// static, proactive); the strategy's floor and ceiling (ADM-7) and direction gates (ADM-9) apply against the
// value as written; a value of 1 or more is held as whole GPUs (ADM-8). A changed value is a resize: the pod
// is replaced at once (one eviction; ACT-3 does not slow a one-replica workload) and the new pod starts its
// own series, so minPodMetricsAge and the windows start again. Memory samples are the container's real use:
// over-allocation is counted, not clipped.
//
// Pure (DESIGN §3): samples in, allocations out; the caller reads files or Prometheus.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/objects.h"
#include "common/clock.h"
#include "decide/gpu_value.h"

namespace kubex::decide::sizing {

// One scrape of one container, in GPUs of one device: memory = bytes in use / the device's bytes; compute =
// duty cycle (SM busy) / 100. Either may be missing.
struct UsageSample {
  common::TimePoint at;
  std::optional<double> memory, compute;
};

struct ContainerSeries {
  std::string id;
  std::string container = "main";   // the GPU container's name (the strategy's per-container bounds)
  std::vector<UsageSample> samples;  // sorted by time
};

// The policies a replay runs: a reactive policy and what its file holds beside it.
struct ReplayPolicies {
  std::string reactive_name;
  api::ReactiveSpec reactive;
  std::string strategy_name;  // "" when the file holds no strategy: the guide's starter strategy is used
  api::StrategySpec strategy;
  // A StaticPolicy's requests.gpu by container name or "*" (SEL-6 priority 90; a named entry wins).
  std::map<std::string, Hundredths> static_gpu;
  std::optional<api::ProactiveSpec> proactive;   // a proactive policy that sizes from history (PRO-2, PRO-3)
  std::int32_t proactive_headroom_percent = 20;  // GlobalConfiguration spec.proactive.headroomPercent (PRO-3)
};

// The fields of the issue-36 report for one container or a total.
struct Tally {
  double gpu_hours_as_written = 0, gpu_hours_held = 0;
  std::size_t samples = 0;                   // samples with a memory value (the ones judged)
  std::size_t over_allocation_samples = 0;   // memory > held allocation (an OOM under HamiCore or NvFractions)
  std::size_t over_allocation_episodes = 0;  // maximal runs of such samples
  std::size_t resizes = 0;                   // changes of the held allocation (each one eviction)
  double days = 0;                           // container-days covered

  double saved_percent() const;
  double over_allocation_percent() const;
  double resizes_per_container_day() const;
  Tally& operator+=(const Tally& o);
};

// held[i] = the allocation in effect when sample i was taken. Sample i covers [at_i, at_{i+1}); the last one
// covers the median spacing. GPU-hours held = Σ held × span; as written = as_written × the same spans.
Tally tally(const ContainerSeries& series, const std::vector<Hundredths>& held, Hundredths as_written);

// What the kubex replay did at one sample, for `-o json` traces and tests.
struct Step {
  std::size_t index = 0;
  Hundredths held = 0;     // the allocation the sample was taken under
  Hundredths next = 0;     // the allocation after this cycle (≠ held: a resize)
  std::string source;      // what set `next`: "reactive", "static", "proactive", "as-written"
  std::string driver;      // the reactive driver when the reactive value changed this cycle
};

// kubex's allocations, one per sample. `steps`, when given, receives the samples where the value changed.
std::vector<Hundredths> replay_kubex(const ContainerSeries& series, const ReplayPolicies& policies,
                                     Hundredths as_written, std::vector<Step>* steps = nullptr);

// The three references, computed on the same samples. demand = max(memory, compute) in GPUs; every value is
// rounded up to 0.01 and passed through the same strategy clamp and ADM-8 as kubex (so no sizer may hold more
// than the strategy's ceiling).
//  - oracle_hourly: each hour from the first sample holds that hour's peak demand × 1.2, known in advance.
//  - static_peak: the whole series' peak × 1.2 from the first sample.
//  - p95_history: as written for the first hour, then every hour the p95 of all demand so far × 1.2.
std::vector<Hundredths> oracle_hourly(const ContainerSeries& series, const api::StrategySpec& strategy,
                                      Hundredths as_written);
std::vector<Hundredths> static_peak(const ContainerSeries& series, const api::StrategySpec& strategy,
                                    Hundredths as_written);
std::vector<Hundredths> p95_history(const ContainerSeries& series, const api::StrategySpec& strategy,
                                    Hundredths as_written);

// Prometheus' quantile_over_time (φ-quantile with linear interpolation between closest ranks); nullopt for
// no values.
std::optional<double> prometheus_quantile(double phi, std::vector<double> values);

// The value a strategy lets a pod written with `as_written` hold for a desired `desired` (ADM-7 clamp, ADM-9
// direction gate against the value as written, ADM-8 whole GPUs from 1 up).
Hundredths admitted(Hundredths desired, const api::StrategySpec& strategy, Hundredths as_written,
                    const std::string& container = "main");

}  // namespace kubex::decide::sizing
