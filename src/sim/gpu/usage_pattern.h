// GPU demand over time, as written in the sim.kubex.ai/gpu-* pod annotations (docs/gpu-model.md):
//
//   40                          constant
//   step(20, 80, 5m)            20 until 5m after the pod started, then 80
//   steps(20, 80@5m, 40@15m)    20, then 80 from 5m, then 40 from 15m (times strictly increasing)
//   ramp(10, 90, 10m)           linear from 10 to 90 over the first 10m, then 90
//   wave(20, 80, 10m)           sinusoid: 20 at the start, 80 at 5m, 20 again at 10m, ...
//   wave(20, 80, 10m, 2m30s)    the same wave shifted by a phase (the value at t is the plain wave's at
//   t+phase) square(20, 80, 10m)         20 for the first half of every 10m period, 80 for the second half
//
// Values are non-negative decimal numbers; durations are Go durations ("90s", "1m30s"). Spaces are allowed
// between tokens. The time axis is the time since the pod's status.startTime.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace kubex::sim::gpu {

class UsagePattern {
 public:
  enum class Kind { kConstant, kSteps, kRamp, kWave, kSquare };

  // Never throws; the error message says what is wrong and shows the accepted forms.
  static common::Result<UsagePattern> parse(std::string_view text);
  static UsagePattern constant(double v);

  // The value `since_start` after the pod started (negative times count as 0).
  double at(std::chrono::nanoseconds since_start) const;
  Kind kind() const { return kind_; }

 private:
  Kind kind_ = Kind::kConstant;
  // kConstant: {v}; kSteps: values, one per segment; kRamp/kWave/kSquare: {a, b}.
  std::vector<double> values_;
  // kSteps: segment start times in seconds (first 0); kRamp: {duration}; kWave: {period, phase};
  // kSquare: {period}.
  std::vector<double> seconds_;
};

}  // namespace kubex::sim::gpu
