// Time with Go semantics, as cel-go inherits them: time.ParseDuration (common/duration.h) and
// Duration.Seconds() formatting, RFC 3339 timestamps and civil-time accessors.
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "common/duration.h"
#include "sim/apiserver/cel/internal.h"

namespace kubex::sim::cel::internal {

// ---------------------------------------------------------------------------------------------------------
// Durations

std::string format_duration(int64_t nanos) {
  // Go: strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s", with Seconds() = sec + nsec/1e9.
  int64_t sec = nanos / 1'000'000'000;
  int64_t nsec = nanos % 1'000'000'000;
  double s = static_cast<double>(sec) + static_cast<double>(nsec) / 1e9;
  std::array<char, 64> buf{};
  auto res = std::to_chars(buf.data(), buf.data() + buf.size(), s, std::chars_format::fixed);
  return std::string(buf.data(), static_cast<std::size_t>(res.ptr - buf.data())) + "s";
}

std::optional<int64_t> parse_duration(std::string_view s) {
  auto d = common::parse_go_duration(s);
  if (!d) return std::nullopt;
  return d->count();
}

// ---------------------------------------------------------------------------------------------------------
// Civil time

namespace {

int64_t floor_div(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0);
}

// Days since 1970-01-01 of a proleptic Gregorian date.
int64_t days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2 ? 1 : 0;
  int64_t era = floor_div(y, 400);
  int64_t yoe = y - era * 400;
  int64_t mp = (m + 9) % 12;
  int64_t doy = (153 * mp + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool is_leap(int64_t y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

int days_in_month(int64_t y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap(y) ? 29 : kDays[m - 1];
}

}  // namespace

CivilTime to_civil(int64_t seconds, int32_t nanos, int32_t offset) {
  CivilTime c;
  int64_t local = seconds + offset;
  int64_t days = floor_div(local, 86400);
  int64_t rem = local - days * 86400;
  c.hour = static_cast<int>(rem / 3600);
  c.minute = static_cast<int>(rem % 3600 / 60);
  c.second = static_cast<int>(rem % 60);
  c.nanos = nanos;
  c.weekday = static_cast<int>(((days % 7) + 11) % 7);  // 1970-01-01 was a Thursday (4)
  int64_t z = days + 719468;
  int64_t era = floor_div(z, 146097);
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  c.day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  c.month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  c.year = yoe + era * 400 + (c.month <= 2 ? 1 : 0);
  c.yday = static_cast<int>(days - days_from_civil(c.year, 1, 1));
  return c;
}

std::optional<TimestampV> parse_rfc3339(std::string_view s) {
  auto digits = [&](std::size_t at, std::size_t n, int& out) {
    if (at + n > s.size()) return false;
    out = 0;
    for (std::size_t k = at; k < at + n; ++k) {
      if (s[k] < '0' || s[k] > '9') return false;
      out = out * 10 + (s[k] - '0');
    }
    return true;
  };
  int y, mo, d, h, mi, sec;
  if (!digits(0, 4, y) || s.size() < 19 || s[4] != '-' || !digits(5, 2, mo) || s[7] != '-' ||
      !digits(8, 2, d) || s[10] != 'T' || !digits(11, 2, h) || s[13] != ':' || !digits(14, 2, mi) ||
      s[16] != ':' || !digits(17, 2, sec)) {
    return std::nullopt;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || sec > 59)
    return std::nullopt;
  std::size_t i = 19;
  int32_t nanos = 0;
  if (i < s.size() && (s[i] == '.' || s[i] == ',')) {
    ++i;
    std::size_t start = i;
    int64_t frac = 0;
    int n = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (n < 9) {
        frac = frac * 10 + (s[i] - '0');
        ++n;
      }
      ++i;
    }
    if (i == start) return std::nullopt;
    while (n < 9) {
      frac *= 10;
      ++n;
    }
    nanos = static_cast<int32_t>(frac);
  }
  int32_t offset = 0;
  if (i < s.size() && s[i] == 'Z') {
    ++i;
  } else if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    int oh, om;
    if (!digits(i + 1, 2, oh) || i + 3 >= s.size() || s[i + 3] != ':' || !digits(i + 4, 2, om))
      return std::nullopt;
    if (oh > 23 || om > 59) return std::nullopt;
    offset = (oh * 3600 + om * 60) * (s[i] == '-' ? -1 : 1);
    i += 6;
  } else {
    return std::nullopt;
  }
  if (i != s.size()) return std::nullopt;
  int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - offset;
  if (secs < kMinUnixSeconds || secs > kMaxUnixSeconds) return std::nullopt;
  return TimestampV{secs, nanos, offset};
}

std::string format_timestamp(const TimestampV& t) {
  CivilTime c = to_civil(t.seconds, t.nanos, t.offset);
  auto pad = [](int64_t v, int w) {
    std::string s = std::to_string(v);
    return std::string(s.size() < static_cast<std::size_t>(w) ? static_cast<std::size_t>(w) - s.size() : 0,
                       '0') +
           s;
  };
  std::string out = pad(c.year, 4) + "-" + pad(c.month, 2) + "-" + pad(c.day, 2) + "T" + pad(c.hour, 2) +
                    ":" + pad(c.minute, 2) + ":" + pad(c.second, 2);
  if (t.nanos != 0) {
    std::string frac = pad(t.nanos, 9);
    while (!frac.empty() && frac.back() == '0') frac.pop_back();
    out += "." + frac;
  }
  if (t.offset == 0) return out + "Z";
  int32_t off = t.offset < 0 ? -t.offset : t.offset;
  return out + (t.offset < 0 ? "-" : "+") + pad(off / 3600, 2) + ":" + pad(off % 3600 / 60, 2);
}

}  // namespace kubex::sim::cel::internal
