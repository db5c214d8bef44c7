#include "decide/gpu_value.h"

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

namespace kubex::decide {

namespace {

constexpr double kGuard = 1e-9;

Hundredths saturate(double v) {
  if (!(v > 0)) return 0;  // also NaN
  if (v >= static_cast<double>(kMaxHundredths)) return kMaxHundredths;
  return static_cast<Hundredths>(v);
}

}  // namespace

Hundredths round_up(double gpus) {
  return saturate(std::ceil(gpus * 100.0 - kGuard));
}

Hundredths round_down(double gpus) {
  return saturate(std::floor(gpus * 100.0 + kGuard));
}

Hundredths desired_value(double gpus) {
  return desired_value(round_up(gpus));
}

std::string format_gpu(Hundredths h) {
  if (h < 0) h = 0;
  std::string out = std::to_string(h / 100);
  const auto cents = static_cast<int>(h % 100);
  if (cents == 0) return out;
  out += '.';
  out += static_cast<char>('0' + cents / 10);
  if (cents % 10 != 0) out += static_cast<char>('0' + cents % 10);
  return out;
}

std::int64_t whole_gpus(Hundredths h) {
  return h <= 0 ? 0 : (h + kOneGpu - 1) / kOneGpu;
}

Hundredths hundredths_of(const common::Quantity& q) {
  const __int128 nanos = q.nano_value();
  if (nanos <= 0) return 0;
  constexpr __int128 kNanosPerHundredth = 10'000'000;
  const __int128 h = (nanos + kNanosPerHundredth - 1) / kNanosPerHundredth;
  return h >= kMaxHundredths ? kMaxHundredths : static_cast<Hundredths>(h);
}

common::Result<double> parse_decimal(std::string_view s) {
  std::size_t digits = 0, dots = 0;
  for (char c : s) {
    if (c >= '0' && c <= '9') {
      ++digits;
    } else if (c == '.') {
      ++dots;
    } else {
      return common::fail("invalid decimal \"" + std::string(s) + "\"");
    }
  }
  if (digits == 0 || dots > 1) return common::fail("invalid decimal \"" + std::string(s) + "\"");
  double v = 0;
  auto res = std::from_chars(s.data(), s.data() + s.size(), v, std::chars_format::fixed);
  if (res.ec != std::errc() || res.ptr != s.data() + s.size() || !std::isfinite(v)) {
    return common::fail("invalid decimal \"" + std::string(s) + "\"");
  }
  return v;
}

common::Result<Hundredths> parse_gpu_fraction(std::string_view s) {
  auto v = parse_decimal(s);
  if (!v) return std::unexpected(v.error());
  if (!(*v > 0 && *v < 1)) return common::fail("gpu-fraction \"" + std::string(s) + "\" is outside (0, 1)");
  Hundredths h = round_up(*v);
  if (h < 1) h = 1;
  if (h > 99) h = 99;
  return h;
}

common::Result<Hundredths> parse_gpu_json(const nlohmann::json& v) {
  double d = 0;
  if (v.is_number()) {
    d = v.get<double>();
    if (!std::isfinite(d)) return common::fail("must be a finite number");
  } else if (v.is_string()) {
    const std::string& text = v.get_ref<const std::string&>();
    auto parsed = parse_decimal(text);
    if (!parsed) {
      // "-1" is a decimal string that is not > 0, not a malformed one.
      if (text.starts_with('-') && parse_decimal(std::string_view(text).substr(1))) {
        return common::fail("must be > 0");
      }
      return common::fail("must be a number or a decimal string");
    }
    d = *parsed;
  } else {
    return common::fail("must be a number or a decimal string");
  }
  if (!(d > 0)) return common::fail("must be > 0");
  return desired_value(d);
}

}  // namespace kubex::decide
