// The three reference sizers of the replay (replay.h): an hourly oracle, a static peak and a p95-of-history
// recommender, all on demand = max(memory, compute) and all through the same strategy as kubex.
#include <algorithm>
#include <chrono>
#include <cmath>

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

namespace kubex::decide::sizing {

std::vector<Hundredths> oracle_budget(const ContainerSeries& series, const api::StrategySpec& strategy,
                                      Hundredths as_written, double resizes_per_day) {
  const auto& s = series.samples;
  const std::size_t n = s.size();
  if (n == 0) return {};
  const auto secs = [&](std::size_t i) {  // the span sample i covers, as tally() counts it
    if (i + 1 < n) return std::chrono::duration<double>(s[i + 1].at - s[i].at).count();
    return n > 1 ? std::chrono::duration<double>(s[n - 1].at - s[n - 2].at).count() : 60.0;
  };
  const double days = std::chrono::duration<double>(s.back().at - s.front().at).count() / 86400.0;
  const std::size_t runs = std::max<std::size_t>(1, static_cast<std::size_t>(std::floor(resizes_per_day * days)));
  std::vector<double> start(n + 1, 0.0);  // start[i]: seconds before sample i
  for (std::size_t i = 0; i < n; ++i) start[i + 1] = start[i] + secs(i);
  const auto value = [&](double peak) { return sized(peak, strategy, as_written, series.container); };

  // best[r][j]: the fewest GPU-seconds holding samples [0, j) in r runs; from[r][j]: where the last run starts.
  constexpr double kInf = 1e300;
  std::vector<std::vector<double>> best(runs + 1, std::vector<double>(n + 1, kInf));
  std::vector<std::vector<std::size_t>> from(runs + 1, std::vector<std::size_t>(n + 1, 0));
  best[0][0] = 0;
  for (std::size_t r = 1; r <= runs; ++r) {
    for (std::size_t j = 1; j <= n; ++j) {
      double peak = -1;
      Hundredths held_value = 0;
      for (std::size_t i = j; i-- > 0;) {  // the last run is [i, j)
        if (const double d = demand(s[i]).value_or(0.0); d > peak) {
          peak = d;
          held_value = value(peak);
        }
        if (best[r - 1][i] >= kInf) continue;
        const double cost = best[r - 1][i] + static_cast<double>(held_value) * (start[j] - start[i]);
        if (cost < best[r][j]) {
          best[r][j] = cost;
          from[r][j] = i;
        }
      }
    }
  }
  std::size_t r = 1;
  for (std::size_t k = 1; k <= runs; ++k) {
    if (best[k][n] < best[r][n]) r = k;
  }
  std::vector<Hundredths> held(n, as_written);
  for (std::size_t j = n; j > 0 && r > 0; --r) {
    const std::size_t i = from[r][j];
    double peak = 0;
    for (std::size_t k = i; k < j; ++k) peak = std::max(peak, demand(s[k]).value_or(0.0));
    std::fill(held.begin() + static_cast<std::ptrdiff_t>(i), held.begin() + static_cast<std::ptrdiff_t>(j), value(peak));
    j = i;
  }
  return held;
}

}  // namespace kubex::decide::sizing
