// The report's fields (replay.h: Tally) from one allocation per sample.
#include <algorithm>
#include <chrono>

#include "decide/sizing/replay.h"

namespace kubex::decide::sizing {

double Tally::saved_percent() const {
  return gpu_hours_as_written > 0 ? 100.0 * (1.0 - gpu_hours_held / gpu_hours_as_written) : 0.0;
}
double Tally::over_allocation_percent() const {
  return samples > 0 ? 100.0 * static_cast<double>(over_allocation_samples) / static_cast<double>(samples) : 0.0;
}
double Tally::resizes_per_container_day() const {
  return days > 0 ? static_cast<double>(resizes) / days : 0.0;
}

Tally& Tally::operator+=(const Tally& o) {
  gpu_hours_as_written += o.gpu_hours_as_written;
  gpu_hours_held += o.gpu_hours_held;
  samples += o.samples;
  over_allocation_samples += o.over_allocation_samples;
  over_allocation_episodes += o.over_allocation_episodes;
  resizes += o.resizes;
  days += o.days;
  return *this;
}

namespace {

double seconds_between(common::TimePoint a, common::TimePoint b) {
  return std::chrono::duration<double>(b - a).count();
}

// The spacing a last sample covers: the median of the series' spacings (60 s for a single sample).
double median_spacing(const std::vector<UsageSample>& s) {
  std::vector<double> gaps;
  for (std::size_t i = 1; i < s.size(); ++i) gaps.push_back(seconds_between(s[i - 1].at, s[i].at));
  if (gaps.empty()) return 60.0;
  std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2), gaps.end());
  return gaps[gaps.size() / 2];
}

}  // namespace

Tally tally(const ContainerSeries& series, const std::vector<Hundredths>& held, Hundredths as_written) {
  Tally t;
  const auto& s = series.samples;
  if (s.empty() || held.size() != s.size()) return t;
  const double last_span = median_spacing(s);
  bool in_episode = false;
  Hundredths previous = as_written;
  double seconds = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const double span = i + 1 < s.size() ? seconds_between(s[i].at, s[i + 1].at) : last_span;
    seconds += span;
    t.gpu_hours_as_written += static_cast<double>(as_written) / kOneGpu * span / 3600.0;
    t.gpu_hours_held += static_cast<double>(held[i]) / kOneGpu * span / 3600.0;
    if (held[i] != previous) ++t.resizes;
    previous = held[i];
    if (!s[i].memory) continue;  // a sample without memory is not judged and does not end an episode
    ++t.samples;
    // Memory above the held share, in hundredths of a GPU compared exactly (1e-9 guard as GPU-1).
    const bool over = *s[i].memory * kOneGpu > static_cast<double>(held[i]) + 1e-9;
    if (over) {
      ++t.over_allocation_samples;
      if (!in_episode) ++t.over_allocation_episodes;
    }
    in_episode = over;
  }
  t.days = seconds / 86400.0;
  return t;
}

}  // namespace kubex::decide::sizing
