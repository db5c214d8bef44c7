#include "common/time_format.h"

#include <cstdio>
#include <ctime>

namespace kubex::common {
namespace {

std::string format_with_fraction(TimePoint t, int digits) {
  using namespace std::chrono;
  auto secs = time_point_cast<seconds>(t);
  if (secs > t) secs -= seconds(1);
  auto frac = duration_cast<nanoseconds>(t - secs).count();
  std::time_t tt = system_clock::to_time_t(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[64];
  int n = std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1,
                        tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  std::string out(buf, static_cast<std::size_t>(n));
  if (digits > 0) {
    long long div = 1;
    for (int i = digits; i < 9; ++i) div *= 10;
    std::snprintf(buf, sizeof buf, ".%0*lld", digits, static_cast<long long>(frac / div));
    out += buf;
  }
  out += 'Z';
  return out;
}

bool read_int(std::string_view s, std::size_t pos, std::size_t len, int& out) {
  if (pos + len > s.size()) return false;
  int v = 0;
  for (std::size_t i = pos; i < pos + len; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  out = v;
  return true;
}

}  // namespace

std::string format_rfc3339(TimePoint t) { return format_with_fraction(t, 0); }
std::string format_rfc3339_micro(TimePoint t) { return format_with_fraction(t, 6); }
std::string format_rfc3339_milli(TimePoint t) { return format_with_fraction(t, 3); }

Result<TimePoint> parse_rfc3339(std::string_view s) {
  int year, mon, day, hour, min, sec;
  if (s.size() < 20 || !read_int(s, 0, 4, year) || s[4] != '-' || !read_int(s, 5, 2, mon) || s[7] != '-' ||
      !read_int(s, 8, 2, day) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || !read_int(s, 11, 2, hour) ||
      s[13] != ':' || !read_int(s, 14, 2, min) || s[16] != ':' || !read_int(s, 17, 2, sec)) {
    return fail("invalid RFC3339 time \"" + std::string(s) + "\"");
  }
  if (mon < 1 || mon > 12 || day < 1 || day > 31 || hour > 23 || min > 59 || sec > 60) {
    return fail("invalid RFC3339 time \"" + std::string(s) + "\"");
  }
  std::size_t pos = 19;
  long long nanos = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int digits = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (digits < 9) {
        nanos = nanos * 10 + (s[pos] - '0');
        ++digits;
      }
      ++pos;
    }
    if (digits == 0) return fail("invalid RFC3339 time \"" + std::string(s) + "\"");
    for (; digits < 9; ++digits) nanos *= 10;
  }
  long offset = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh, om;
    if (!read_int(s, pos + 1, 2, oh) || pos + 3 >= s.size() || s[pos + 3] != ':' || !read_int(s, pos + 4, 2, om)) {
      return fail("invalid RFC3339 time \"" + std::string(s) + "\"");
    }
    offset = (oh * 3600L + om * 60L) * (s[pos] == '+' ? 1 : -1);
    pos += 6;
  } else {
    return fail("invalid RFC3339 time \"" + std::string(s) + "\"");
  }
  if (pos != s.size()) return fail("invalid RFC3339 time \"" + std::string(s) + "\"");
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = mon - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = min;
  tm.tm_sec = sec;
  std::time_t tt = timegm(&tm);
  auto tp = std::chrono::system_clock::from_time_t(tt) - std::chrono::seconds(offset);
  return tp + std::chrono::duration_cast<TimePoint::duration>(std::chrono::nanoseconds(nanos));
}

}  // namespace kubex::common
