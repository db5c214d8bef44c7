// CEL type conversions (int, uint, double, string, bool, bytes, dyn, type, duration, timestamp) with cel-go's
// range checks and Go parsing rules, and the timestamp/duration accessors (getFullYear ... getMilliseconds).
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/apiserver/cel/internal.h"
#include "sim/apiserver/go_format.h"

namespace kubex::sim::cel::internal {

Val make_timestamp(int64_t seconds, int64_t nanos, int32_t offset) {
  seconds += nanos / 1'000'000'000;
  nanos %= 1'000'000'000;
  if (nanos < 0) {
    nanos += 1'000'000'000;
    --seconds;
  }
  if (seconds < kMinUnixSeconds || seconds > kMaxUnixSeconds) return error("timestamp overflow");
  return Value{TimestampV{seconds, static_cast<int32_t>(nanos), offset}};
}

namespace {

std::unexpected<Err> overflow() {
  return error("integer overflow");
}
std::unexpected<Err> uint_overflow() {
  return error("unsigned integer overflow");
}
std::unexpected<Err> conversion_error(const Value& from, std::string_view to) {
  return error("type conversion error from '" + std::string(type_name(from)) + "' to '" + std::string(to) +
               "'");
}

// ---------------------------------------------------------------------------------------------------------
// Conversions

std::optional<int64_t> parse_int(std::string_view s) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (s.empty() || s[0] == '+') return std::nullopt;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> parse_double(std::string_view s) {
  std::string_view body = s;
  bool neg = false;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    neg = body[0] == '-';
    body.remove_prefix(1);
  }
  auto lower = [](std::string_view x) {
    std::string out(x);
    for (char& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    return out;
  };
  std::string l = lower(body);
  if (l == "inf" || l == "infinity") return neg ? -HUGE_VAL : HUGE_VAL;
  if (l == "nan") return std::nan("");
  if (body.empty() || body[0] == '+' || body[0] == '-') return std::nullopt;
  double d = 0;
  auto [p, ec] = std::from_chars(body.data(), body.data() + body.size(), d);
  if (ec != std::errc() || p != body.data() + body.size()) return std::nullopt;
  return neg ? -d : d;
}

Val to_int(const Value& v) {
  switch (v.kind()) {
    case Kind::kInt:
      return v;
    case Kind::kUint:
      if (v.as_uint() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return overflow();
      return make_int(static_cast<int64_t>(v.as_uint()));
    case Kind::kDouble: {
      double d = v.as_double();
      if (std::isnan(d) || d <= -9223372036854775808.0 || d >= 9223372036854775807.0) return overflow();
      return make_int(static_cast<int64_t>(d));
    }
    case Kind::kString:
      if (auto i = parse_int(v.as_string())) return make_int(*i);
      return conversion_error(v, "int");
    case Kind::kDuration:
      return make_int(v.as_duration());
    case Kind::kTimestamp:
      return make_int(v.as_timestamp().seconds);
    default:
      return no_overload();
  }
}

Val to_uint(const Value& v) {
  switch (v.kind()) {
    case Kind::kUint:
      return v;
    case Kind::kInt:
      if (v.as_int() < 0) return uint_overflow();
      return make_uint(static_cast<uint64_t>(v.as_int()));
    case Kind::kDouble: {
      double d = v.as_double();
      if (std::isnan(d) || d < 0 || d >= 18446744073709551615.0) return uint_overflow();
      return make_uint(static_cast<uint64_t>(d));
    }
    case Kind::kString: {
      const std::string& s = v.as_string();
      uint64_t u = 0;
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), u);
      if (s.empty() || ec != std::errc() || p != s.data() + s.size()) return conversion_error(v, "uint");
      return make_uint(u);
    }
    default:
      return no_overload();
  }
}

Val to_double(const Value& v) {
  switch (v.kind()) {
    case Kind::kDouble:
      return v;
    case Kind::kInt:
      return make_double(static_cast<double>(v.as_int()));
    case Kind::kUint:
      return make_double(static_cast<double>(v.as_uint()));
    case Kind::kString:
      if (auto d = parse_double(v.as_string())) return make_double(*d);
      return conversion_error(v, "double");
    default:
      return no_overload();
  }
}

Val to_string_value(const Value& v) {
  switch (v.kind()) {
    case Kind::kString:
      return v;
    case Kind::kBool:
      return make_string(v.as_bool() ? "true" : "false");
    case Kind::kInt:
      return make_string(std::to_string(v.as_int()));
    case Kind::kUint:
      return make_string(std::to_string(v.as_uint()));
    case Kind::kDouble:
      return make_string(go_float(v.as_double()));
    case Kind::kBytes:
      if (!common::utf8_valid(v.as_bytes())) return error("invalid UTF-8 in bytes, cannot convert to string");
      return make_string(v.as_bytes());
    case Kind::kDuration:
      return make_string(format_duration(v.as_duration()));
    case Kind::kTimestamp:
      return make_string(format_timestamp(v.as_timestamp()));
    case Kind::kType:
      return make_string(std::string(v.as_type()));
    default:
      return no_overload();
  }
}

Val to_bool(const Value& v) {
  if (v.kind() == Kind::kBool) return v;
  if (v.kind() != Kind::kString) return no_overload();
  static constexpr std::string_view kTrue[] = {"1", "t", "T", "TRUE", "true", "True"};
  static constexpr std::string_view kFalse[] = {"0", "f", "F", "FALSE", "false", "False"};
  for (auto t : kTrue) {
    if (v.as_string() == t) return make_bool(true);
  }
  for (auto f : kFalse) {
    if (v.as_string() == f) return make_bool(false);
  }
  return conversion_error(v, "bool");
}

// ---------------------------------------------------------------------------------------------------------
// Time accessors

// cel-go's timeZone(): an IANA name (only UTC here) or a fixed "+hh:mm" / "-hh:mm" offset.
std::expected<int32_t, Err> parse_time_zone(const std::string& tz) {
  std::size_t colon = tz.find(':');
  if (colon == std::string::npos) {
    if (tz.empty() || tz == "UTC" || tz == "Local") return 0;
    return std::unexpected(Err{"unknown time zone " + tz});
  }
  auto atoi = [](std::string_view s) -> std::optional<int64_t> {
    if (s.size() > 10) return std::nullopt;
    return parse_int(s);
  };
  auto hr = atoi(std::string_view(tz).substr(0, colon));
  if (!hr)
    return std::unexpected(Err{"strconv.Atoi: parsing \"" + tz.substr(0, colon) + "\": invalid syntax"});
  auto min = atoi(std::string_view(tz).substr(colon + 1));
  if (!min)
    return std::unexpected(Err{"strconv.Atoi: parsing \"" + tz.substr(colon + 1) + "\": invalid syntax"});
  if (*min < 0 || *min > 59)
    return std::unexpected(Err{"timezone offset minutes out of range [0, 59]: " + tz});
  int64_t offset = tz[0] == '-' ? *hr * 60 - *min : *hr * 60 + *min;
  if (offset < -100000 || offset > 100000) return std::unexpected(Err{"timezone offset out of range: " + tz});
  return static_cast<int32_t>(offset * 60);
}

Val time_accessor(Fn fn, const std::vector<Value>& args) {
  const Value& recv = args[0];
  if (recv.kind() == Kind::kDuration) {
    if (args.size() != 1) return no_overload();
    int64_t d = recv.as_duration();
    switch (fn) {
      case Fn::kGetHours:
        return make_int(d / 3'600'000'000'000);
      case Fn::kGetMinutes:
        return make_int(d / 60'000'000'000);
      case Fn::kGetSeconds:
        return make_int(d / 1'000'000'000);
      case Fn::kGetMilliseconds:
        return make_int(d / 1'000'000);
      default:
        return no_overload();
    }
  }
  if (recv.kind() != Kind::kTimestamp) return no_overload();
  int32_t offset = 0;
  if (args.size() == 2) {
    if (args[1].kind() != Kind::kString) return no_overload();
    auto tz = parse_time_zone(args[1].as_string());
    if (!tz) return std::unexpected(tz.error());
    offset = *tz;
  }
  const auto& t = recv.as_timestamp();
  CivilTime c = to_civil(t.seconds, t.nanos, offset);
  switch (fn) {
    case Fn::kGetFullYear:
      return make_int(c.year);
    case Fn::kGetMonth:
      return make_int(c.month - 1);
    case Fn::kGetDayOfYear:
      return make_int(c.yday);
    case Fn::kGetDayOfMonth:
      return make_int(c.day - 1);
    case Fn::kGetDate:
      return make_int(c.day);
    case Fn::kGetDayOfWeek:
      return make_int(c.weekday);
    case Fn::kGetHours:
      return make_int(c.hour);
    case Fn::kGetMinutes:
      return make_int(c.minute);
    case Fn::kGetSeconds:
      return make_int(c.second);
    case Fn::kGetMilliseconds:
      return make_int(c.nanos / 1'000'000);
    default:
      return no_overload();
  }
}

}  // namespace

Val convert_function(Fn fn, const std::vector<Value>& args) {
  switch (fn) {
    case Fn::kInt:
      return to_int(args[0]);
    case Fn::kUint:
      return to_uint(args[0]);
    case Fn::kDouble:
      return to_double(args[0]);
    case Fn::kString:
      return to_string_value(args[0]);
    case Fn::kBool:
      return to_bool(args[0]);
    case Fn::kBytes:
      if (args[0].kind() == Kind::kBytes) return args[0];
      if (args[0].kind() == Kind::kString) return make_bytes(args[0].as_string());
      return no_overload();
    case Fn::kDyn:
      return args[0];
    case Fn::kType:
      return make_type(type_name(args[0]));
    case Fn::kDuration:
      if (args[0].kind() == Kind::kDuration) return args[0];
      if (args[0].kind() != Kind::kString) return no_overload();
      if (auto d = parse_duration(args[0].as_string())) return make_duration(*d);
      return conversion_error(args[0], "google.protobuf.Duration");
    case Fn::kTimestamp:
      if (args[0].kind() == Kind::kTimestamp) return args[0];
      if (args[0].kind() == Kind::kInt) return make_timestamp(args[0].as_int(), 0, 0);
      if (args[0].kind() != Kind::kString) return no_overload();
      if (auto t = parse_rfc3339(args[0].as_string())) return Value{*t};
      return conversion_error(args[0], "google.protobuf.Timestamp");
    default:
      return is_time_accessor(fn) ? time_accessor(fn, args) : no_overload();
  }
}

}  // namespace kubex::sim::cel::internal
