#include "sim/gpu/usage_pattern.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numbers>

#include "common/duration.h"

namespace kubex::sim::gpu {

namespace {

constexpr std::size_t kMaxLength = 1024;
constexpr std::size_t kMaxSteps = 100;
constexpr const char* kForms =
    "expected a number, step(a,b,t), steps(a,b@t,...), ramp(a,b,d), wave(a,b,period[,phase]) or "
    "square(a,b,period)";

std::string_view trim(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

std::string quoted(std::string_view s) {
  return "\"" + std::string(s) + "\"";
}

common::Result<double> parse_value(std::string_view s) {
  s = trim(s);
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, std::chars_format::general);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) {
    return common::fail("invalid number " + quoted(s));
  }
  if (v < 0) return common::fail("negative value " + quoted(s));
  return v;
}

// A Go duration in seconds; `positive` rejects zero.
common::Result<double> parse_seconds(std::string_view s, bool positive) {
  s = trim(s);
  auto d = common::parse_go_duration(s);
  if (!d) {
    // Go's wording without its "time: " prefix: `missing unit in duration "5"`, `invalid duration "x"`.
    std::string m = d.error().message;
    if (m.rfind("time: ", 0) == 0) m.erase(0, 6);
    return common::fail(m + " (durations look like 90s, 5m, 1h30m)");
  }
  double secs = std::chrono::duration<double>(*d).count();
  if (secs < 0 || (positive && secs == 0)) {
    return common::fail("duration " + quoted(s) + (positive ? " must be positive" : " must not be negative"));
  }
  return secs;
}

std::vector<std::string_view> split_args(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    auto comma = s.find(',', start);
    out.push_back(
        trim(s.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

UsagePattern UsagePattern::constant(double v) {
  UsagePattern p;
  p.kind_ = Kind::kConstant;
  p.values_ = {v};
  return p;
}

common::Result<UsagePattern> UsagePattern::parse(std::string_view text) {
  if (text.size() > kMaxLength)
    return common::fail("longer than " + std::to_string(kMaxLength) + " characters");
  std::string_view s = trim(text);
  if (s.empty()) return common::fail(std::string("empty value: ") + kForms);
  auto open = s.find('(');
  if (open == std::string_view::npos) {
    auto v = parse_value(s);
    if (!v) return common::fail(v.error().message + ": " + kForms);
    return constant(*v);
  }
  std::string_view name = trim(s.substr(0, open));
  if (s.back() != ')') return common::fail("missing \")\" at the end of " + quoted(s));
  std::string_view body = s.substr(open + 1, s.size() - open - 2);
  if (body.find_first_of("()") != std::string_view::npos)
    return common::fail("nested parentheses in " + quoted(s));
  auto args = split_args(body);
  auto arity = [&](std::size_t lo, std::size_t hi, const char* form) -> common::Result<void> {
    if (args.size() < lo || args.size() > hi) {
      return common::fail(std::string(name) + " takes " + form + ", got " + std::to_string(args.size()) +
                          " argument(s) in " + quoted(s));
    }
    return {};
  };
  auto in = [&](const common::Error& e) { return common::fail(e.message + " in " + quoted(s)); };
  UsagePattern p;
  if (name == "step" || name == "steps") {
    if (name == "step") {
      if (auto r = arity(3, 3, "(a, b, t)"); !r) return std::unexpected(r.error());
    } else if (auto r = arity(2, kMaxSteps, "(a, b@t, c@u, ...)"); !r) {
      return std::unexpected(r.error());
    }
    p.kind_ = Kind::kSteps;
    auto first = parse_value(args[0]);
    if (!first) return in(first.error());
    p.values_.push_back(*first);
    p.seconds_.push_back(0);
    std::vector<std::pair<std::string_view, std::string_view>> changes;  // value, time
    if (name == "step") {
      changes.emplace_back(args[1], args[2]);
    } else {
      for (std::size_t i = 1; i < args.size(); ++i) {
        auto at = args[i].find('@');
        if (at == std::string_view::npos) return in({"", "expected VALUE@TIME, got " + quoted(args[i])});
        changes.emplace_back(args[i].substr(0, at), args[i].substr(at + 1));
      }
    }
    for (const auto& [value, time] : changes) {
      auto v = parse_value(value);
      if (!v) return in(v.error());
      auto t = parse_seconds(time, true);
      if (!t) return in(t.error());
      if (*t <= p.seconds_.back()) return in({"", "step times must increase, got " + quoted(time)});
      p.values_.push_back(*v);
      p.seconds_.push_back(*t);
    }
    return p;
  }
  if (name == "ramp" || name == "wave" || name == "square") {
    if (name == "wave") {
      if (auto r = arity(3, 4, "(a, b, period[, phase])"); !r) return std::unexpected(r.error());
    } else if (auto r = arity(3, 3, name == "ramp" ? "(a, b, duration)" : "(a, b, period)"); !r) {
      return std::unexpected(r.error());
    }
    p.kind_ = name == "ramp" ? Kind::kRamp : name == "wave" ? Kind::kWave : Kind::kSquare;
    for (std::size_t i = 0; i < 2; ++i) {
      auto v = parse_value(args[i]);
      if (!v) return in(v.error());
      p.values_.push_back(*v);
    }
    auto d = parse_seconds(args[2], true);
    if (!d) return in(d.error());
    p.seconds_.push_back(*d);
    if (p.kind_ == Kind::kWave) {
      double phase = 0;
      if (args.size() == 4) {
        auto ph = parse_seconds(args[3], false);
        if (!ph) return in(ph.error());
        phase = *ph;
      }
      p.seconds_.push_back(phase);
    }
    return p;
  }
  return common::fail("unknown function " + quoted(name) + ": " + kForms);
}

double UsagePattern::at(std::chrono::nanoseconds since_start) const {
  double t = std::max(0.0, std::chrono::duration<double>(since_start).count());
  switch (kind_) {
    case Kind::kConstant:
      return values_[0];
    case Kind::kSteps: {
      auto it = std::upper_bound(seconds_.begin(), seconds_.end(), t);
      return values_[static_cast<std::size_t>(it - seconds_.begin()) - 1];
    }
    case Kind::kRamp:
      return t >= seconds_[0] ? values_[1] : values_[0] + (values_[1] - values_[0]) * t / seconds_[0];
    case Kind::kWave: {
      double x = std::fmod(t + seconds_[1], seconds_[0]) / seconds_[0];
      return values_[0] + (values_[1] - values_[0]) * (1 - std::cos(2 * std::numbers::pi * x)) / 2;
    }
    case Kind::kSquare:
      return std::fmod(t, seconds_[0]) < seconds_[0] / 2 ? values_[0] : values_[1];
  }
  return 0;
}

}  // namespace kubex::sim::gpu
