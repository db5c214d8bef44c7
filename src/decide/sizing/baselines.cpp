// The three reference sizers of the replay (replay.h): an hourly oracle, a static peak and a p95-of-history
// recommender, all on demand = max(memory, compute) and all through the same strategy as kubex.
#include <algorithm>
#include <chrono>

#include "decide/sizing/replay.h"

namespace kubex::decide::sizing {

namespace {

constexpr double kHeadroom = 1.2;  // the "× 1.2" for every reference

std::optional<double> demand(const UsageSample& s) {
  if (!s.memory && !s.compute) return std::nullopt;
  return std::max(s.memory.value_or(0.0), s.compute.value_or(0.0));
}

Hundredths sized(double peak, const api::StrategySpec& strategy, Hundredths as_written, const std::string& c) {
  return admitted(desired_value(peak * kHeadroom), strategy, as_written, c);
}

// Hour k of the series: [first + k h, first + (k+1) h).
std::size_t hour_of(const ContainerSeries& series, std::size_t i) {
  return static_cast<std::size_t>(
      std::chrono::duration_cast<std::chrono::hours>(series.samples[i].at - series.samples.front().at).count());
}

}  // namespace

std::vector<Hundredths> oracle_hourly(const ContainerSeries& series, const api::StrategySpec& strategy,
                                      Hundredths as_written) {
  const auto& s = series.samples;
  std::vector<double> peak;  // per hour
  for (std::size_t i = 0; i < s.size(); ++i) {
    const std::size_t h = hour_of(series, i);
    if (peak.size() <= h) peak.resize(h + 1, 0.0);
    peak[h] = std::max(peak[h], demand(s[i]).value_or(0.0));
  }
  std::vector<Hundredths> held;
  held.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    held.push_back(sized(peak[hour_of(series, i)], strategy, as_written, series.container));
  }
  return held;
}

std::vector<Hundredths> static_peak(const ContainerSeries& series, const api::StrategySpec& strategy,
                                    Hundredths as_written) {
  double peak = 0;
  for (const UsageSample& s : series.samples) peak = std::max(peak, demand(s).value_or(0.0));
  return std::vector<Hundredths>(series.samples.size(), sized(peak, strategy, as_written, series.container));
}

std::vector<Hundredths> p95_history(const ContainerSeries& series, const api::StrategySpec& strategy,
                                    Hundredths as_written) {
  const auto& s = series.samples;
  std::vector<Hundredths> held;
  held.reserve(s.size());
  std::vector<double> history;  // demand of the samples before the current hour
  Hundredths value = as_written;
  std::size_t hour = 0, next = 0;  // `next`: the first sample not yet in `history`
  for (std::size_t i = 0; i < s.size(); ++i) {
    const std::size_t h = hour_of(series, i);
    if (h != hour) {  // a new hour: recompute from everything before it
      hour = h;
      for (; next < i; ++next) {
        if (auto d = demand(s[next])) history.push_back(*d);
      }
      if (auto q = prometheus_quantile(0.95, history)) value = sized(*q, strategy, as_written, series.container);
    }
    held.push_back(value);
  }
  return held;
}

}  // namespace kubex::decide::sizing
