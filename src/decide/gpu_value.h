// GPU values (SPEC §0, GPU-1, GPU-2): amounts in integer hundredths of a GPU, the two rounding rules with
// their 1e-9 guards, the shortest decimal form, and parsing of the shapes GPU values arrive in (the
// `gpu-fraction` annotation, desired-annotation entries, ConfigMap entries, Kubernetes quantities).
// Vocabulary of every decide/ question (policy/, admission/, proactive/), so it sits at decide/'s top.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "common/quantity.h"
#include "common/result.h"

namespace kubex::decide {

// A GPU amount in integer hundredths of a GPU (GPU-1): 48 is 0.48 GPU, 100 is one whole GPU.
using Hundredths = std::int64_t;
inline constexpr Hundredths kOneGpu = 100;
// Values are capped here (10^12 GPUs) so that no conversion overflows.
inline constexpr Hundredths kMaxHundredths = 100'000'000'000'000;

// GPU-1: ceil(x*100 - 1e-9), so 0.4 * 1.2 gives 48, not 49. NaN and negative values give 0.
Hundredths round_up(double gpus);
// GPU-1: floor(x*100 + 1e-9). NaN and negative values give 0.
Hundredths round_down(double gpus);
// GPU-2: a desired value is rounded UP to 0.01, with a minimum of 0.01.
Hundredths desired_value(double gpus);
inline Hundredths desired_value(Hundredths h) {
  return h < 1 ? 1 : (h > kMaxHundredths ? kMaxHundredths : h);
}

// GPU-2: the shortest decimal string: 48 -> "0.48", 70 -> "0.7", 100 -> "1", 224 -> "2.24", 0 -> "0".
std::string format_gpu(Hundredths h);
// Whole GPUs needed for `h`: ceil(h / 100). 70 -> 1, 100 -> 1, 130 -> 2, 0 -> 0.
std::int64_t whole_gpus(Hundredths h);
// Hundredths of `n` whole GPUs.
inline Hundredths from_whole(std::int64_t n) {
  return n <= 0 ? 0 : (n >= kMaxHundredths / kOneGpu ? kMaxHundredths : n * kOneGpu);
}

// A Kubernetes quantity in hundredths, exactly, rounded up: "500m" -> 50, "0.255" -> 26, "2" -> 200,
// "1m" -> 1. Negative quantities give 0.
Hundredths hundredths_of(const common::Quantity& q);

// A plain decimal number: digits with an optional fraction ("0.25", "1", ".5", "2."). No sign, exponent,
// suffix or surrounding space.
common::Result<double> parse_decimal(std::string_view s);

// The `gpu-fraction` pod annotation (ADM-5): a plain decimal strictly between 0 and 1. The result is in
// hundredths, rounded up and kept within 1..99.
common::Result<Hundredths> parse_gpu_fraction(std::string_view s);

// A desired GPU value as JSON (SPEC §2 desired annotations, PRO-6): a number or a decimal string, > 0.
// The result is a desired value per GPU-2.
common::Result<Hundredths> parse_gpu_json(const nlohmann::json& v);

}  // namespace kubex::decide
