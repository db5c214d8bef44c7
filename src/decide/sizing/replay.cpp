// kubex's side of the sizing replay (replay.h): the reactive cycle every sample, the proactive reload every hour,
// SEL-6's order, and the admission rules that turn a desired value into what a new pod holds.
#include "decide/sizing/replay.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "decide/gates.h"
#include "decide/proactive/history.h"
#include "decide/proactive/history_schedule.h"
#include "decide/reactive/reactive.h"

namespace kubex::decide::sizing {

std::optional<double> prometheus_quantile(double phi, std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  if (phi < 0) return -INFINITY;
  if (phi > 1) return INFINITY;
  std::sort(values.begin(), values.end());
  const double rank = phi * static_cast<double>(values.size() - 1);
  const auto lower = static_cast<std::size_t>(std::floor(rank));
  const std::size_t upper = std::min(lower + 1, values.size() - 1);
  const double weight = rank - std::floor(rank);
  return values[lower] * (1 - weight) + values[upper] * weight;
}

Hundredths admitted(Hundredths desired, const api::StrategySpec& strategy, Hundredths as_written,
                    const std::string& container) {
  Hundredths v = desired_value(desired);
  clamp_gpu(v, strategy.gpu_requests, container);                                    // ADM-7
  if (!gate_allows(strategy.gpu_requests, direction_of(as_written, v))) return as_written;  // ADM-9
  return v >= kOneGpu ? from_whole(whole_gpus(v)) : v;                               // ADM-8
}

namespace {

using Clock = std::chrono::system_clock;

struct Pod {
  std::size_t first = 0;  // index of its first sample
  common::TimePoint start;
  Hundredths allocation = 0;
  int generation = 0;
};

// Percent of the allocation (the footprint metric of a fraction pod).
double percent_of_allocation(double gpus, Hundredths allocation) {
  return allocation > 0 ? gpus / (static_cast<double>(allocation) / kOneGpu) * 100.0 : 0.0;
}

// A sample value as the signal's metric reports it: percent of one GPU (fullGPU) or of the allocation (REA-4).
double as_percent(double gpus, const api::PrometheusSignal& signal, Hundredths allocation) {
  return signal.interpretation == "currentAllocation" ? percent_of_allocation(gpus, allocation) : gpus * 100.0;
}

// One REA-3 query at `now` over the pod's own samples in [now − window, now] (Prometheus 2's range selector).
std::optional<double> window_value(const std::vector<UsageSample>& s, const Pod& pod, std::size_t now_index,
                                   common::Duration window, bool memory, const api::PrometheusSignal& signal) {
  const common::TimePoint now = s[now_index].at;
  std::vector<double> values;
  for (std::size_t j = pod.first; j <= now_index; ++j) {
    if (s[j].at < now - window) continue;
    const std::optional<double>& v = memory ? s[j].memory : s[j].compute;
    if (v) values.push_back(as_percent(*v, signal, pod.allocation));
  }
  if (values.empty()) return std::nullopt;
  if (memory) return *std::max_element(values.begin(), values.end());  // max_over_time
  return prometheus_quantile(0.95, std::move(values));                  // quantile_over_time(0.95, …)
}

// What PRO-2's queries would return at `now` for the workload: compute = the largest per-pod p95 over the
// lookback, memory = the largest footprint since the last allocation transition (the current pod), each with
// its span (now − the oldest sample inside its lookback).
ContainerHistory history_at(const std::vector<UsageSample>& s, const std::vector<Pod>& pods, std::size_t now_index,
                            std::chrono::seconds lookback) {
  ContainerHistory h;
  const common::TimePoint now = s[now_index].at;
  const auto span_of = [&](common::TimePoint oldest) {
    return std::chrono::duration_cast<std::chrono::seconds>(now - oldest);
  };
  for (std::size_t p = 0; p < pods.size(); ++p) {
    const std::size_t end = p + 1 < pods.size() ? pods[p + 1].first : now_index + 1;
    std::vector<double> compute;
    std::optional<common::TimePoint> oldest;
    for (std::size_t j = pods[p].first; j < end && j <= now_index; ++j) {
      if (s[j].at < now - lookback || !s[j].compute) continue;
      compute.push_back(*s[j].compute * 100.0);
      if (!oldest) oldest = s[j].at;
    }
    if (auto q = prometheus_quantile(0.95, std::move(compute))) {
      h.compute_percent = std::max(h.compute_percent.value_or(0.0), *q);
      const auto span = span_of(*oldest);
      h.compute_span = h.compute_span ? std::max(*h.compute_span, span) : span;
    }
  }
  const Pod& current = pods.back();
  const bool whole = current.allocation % kOneGpu == 0;
  for (std::size_t j = current.first; j <= now_index; ++j) {
    if (s[j].at < now - lookback || !s[j].memory) continue;
    // PRO-2: the footprint is relative to the allocation for a fraction and to one device for whole GPUs.
    const double percent = whole ? *s[j].memory * 100.0 : percent_of_allocation(*s[j].memory, current.allocation);
    h.memory_percent = std::max(h.memory_percent.value_or(0.0), percent);
    if (!h.memory_span) h.memory_span = span_of(s[j].at);
  }
  return h;
}

// The proactive policy's state between reloads (PRO-1, PRO-7).
struct Proactive {
  std::optional<Hundredths> value;
  common::TimePoint last_read{};
  std::optional<common::TimePoint> next_read;  // nullopt: read at the first sample
};

void reload_proactive(Proactive& pro, const ReplayPolicies& policies, const std::vector<UsageSample>& s,
                      const std::vector<Pod>& pods, std::size_t i, const std::string& container) {
  const common::TimePoint now = s[i].at;
  const auto lookback = std::chrono::seconds(std::int64_t{policies.proactive->max_analysis_age_days} * 86400);
  const ContainerHistory h = history_at(s, pods, i, lookback);
  const Allocation allocation{pods.back().allocation, pods.back().allocation % kOneGpu == 0};
  const HistoryValue hv =
      history_value(h, allocation, policies.proactive_headroom_percent, policies.strategy, container);
  std::optional<std::pair<Hundredths, ProactiveSource>> previous;
  if (pro.value) previous = std::pair{*pro.value, ProactiveSource::kHistory};
  const ProactiveChoice choice = choose_proactive(std::nullopt, hv, previous);
  pro.value = choice.source == ProactiveSource::kNone ? std::nullopt : std::optional<Hundredths>(choice.gpu);
  pro.last_read = now;
  // PRO-1: every hour; sooner when the history reaches PRO-2's span before that (the engine's catch-up read).
  common::TimePoint next = now + std::chrono::hours(1);
  if (hv.outcome == HistoryOutcome::kTooLittleHistory || hv.outcome == HistoryOutcome::kNoData) {
    const auto covered = history_covered_at({{container, h}}, {{container, allocation}}, now, pods.back().start);
    if (covered && *covered < next) next = std::max(*covered, now + kCatchUpMinGap);
  }
  pro.next_read = next;
}

std::optional<Hundredths> static_value(const ReplayPolicies& policies, const std::string& container) {
  for (const std::string& key : {container, std::string("*")}) {
    if (auto it = policies.static_gpu.find(key); it != policies.static_gpu.end()) return it->second;
  }
  return std::nullopt;
}

}  // namespace

std::vector<Hundredths> replay_kubex(const ContainerSeries& series, const ReplayPolicies& policies,
                                     Hundredths as_written, std::vector<Step>* steps) {
  const std::vector<UsageSample>& s = series.samples;
  const std::string& c = series.container;
  const api::ReactiveSpec& spec = policies.reactive;
  std::vector<Hundredths> held;
  held.reserve(s.size());
  if (s.empty()) return held;

  std::vector<Pod> pods{{0, s.front().at, as_written, 0}};
  std::map<std::string, Hundredths> existing;  // the reactive desired-resource-requests entry
  std::optional<reactive::State> state;
  Proactive pro;

  for (std::size_t i = 0; i < s.size(); ++i) {
    const common::TimePoint now = s[i].at;
    const Pod& pod = pods.back();
    held.push_back(pod.allocation);

    if (policies.proactive && (!pro.next_read || now >= *pro.next_read)) {
      reload_proactive(pro, policies, s, pods, i, c);
    }

    // REA-1…REA-9: one cycle of the reactive policy.
    reactive::Input in;
    in.spec = &spec;
    in.now = now;
    in.existing = existing;
    in.state = state;
    reactive::PodFacts facts{"Running", false, pod.start};
    if (reactive::eligible(facts, spec.min_pod_metrics_age, now)) {
      reactive::ContainerInput ci;
      ci.name = c;
      ci.allocation = pod.allocation;
      ci.samples.compute_upsize = window_value(s, pod, i, spec.compute.upsize.metrics_window, false, spec.compute.prometheus);
      ci.samples.compute_scale_back =
          window_value(s, pod, i, spec.compute.scale_back.metrics_window, false, spec.compute.prometheus);
      ci.samples.memory_upsize = window_value(s, pod, i, spec.memory.upsize.metrics_window, true, spec.memory.prometheus);
      ci.samples.memory_scale_back =
          window_value(s, pod, i, spec.memory.scale_back.metrics_window, true, spec.memory.prometheus);
      in.pods.push_back({"pod-" + std::to_string(pod.generation), {ci}, ""});
    }
    const reactive::Outcome out = reactive::decide(in);
    if (out.result == reactive::Result::kRecommended) existing = out.requests;
    if (out.state_changed) state = out.state;

    // SEL-6: reactive (120/110) before static (90) before proactive (70); nothing: the value as written.
    std::optional<Hundredths> desired;
    std::string source = "as-written";
    if (auto it = existing.find(c); it != existing.end()) {
      desired = it->second;
      source = "reactive";
    } else if (auto st = static_value(policies, c)) {
      desired = st;
      source = "static";
    } else if (pro.value) {
      desired = pro.value;
      source = "proactive";
    }
    const Hundredths next = desired ? admitted(*desired, policies.strategy, as_written, c) : as_written;
    if (next != pod.allocation) {
      if (steps) steps->push_back({i, pod.allocation, next, source, out.result == reactive::Result::kRecommended ? out.driver : ""});
      const int generation = pod.generation + 1;
      pods.push_back({i + 1, now, next, generation});  // the replacement's series starts with the next sample
    }
  }
  return held;
}

}  // namespace kubex::decide::sizing
