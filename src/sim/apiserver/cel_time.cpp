// Text helpers with Go semantics, as cel-go inherits them: UTF-8 code points, fmt %g for doubles,
// time.ParseDuration / Duration.Seconds() formatting, RFC 3339 timestamps and civil-time accessors.
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "sim/apiserver/cel_internal.h"

namespace kubex::sim::cel::internal {

// ---------------------------------------------------------------------------------------------------------
// UTF-8

char32_t utf8_next(std::string_view s, std::size_t& i) {
  auto b = static_cast<unsigned char>(s[i]);
  auto cont = [&](std::size_t k) {
    return k < s.size() && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80;
  };
  if (b < 0x80) {
    ++i;
    return b;
  }
  int len = 0;
  char32_t cp = 0;
  char32_t min = 0;
  if ((b & 0xE0) == 0xC0) {
    len = 2, cp = b & 0x1F, min = 0x80;
  } else if ((b & 0xF0) == 0xE0) {
    len = 3, cp = b & 0x0F, min = 0x800;
  } else if ((b & 0xF8) == 0xF0) {
    len = 4, cp = b & 0x07, min = 0x10000;
  } else {
    ++i;
    return 0xFFFD;
  }
  for (int k = 1; k < len; ++k) {
    if (!cont(i + static_cast<std::size_t>(k))) {
      ++i;
      return 0xFFFD;
    }
    cp = (cp << 6) | (static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    ++i;
    return 0xFFFD;
  }
  i += static_cast<std::size_t>(len);
  return cp;
}

void utf8_append(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

int64_t utf8_length(std::string_view s) {
  int64_t n = 0;
  for (std::size_t i = 0; i < s.size();) {
    utf8_next(s, i);
    ++n;
  }
  return n;
}

// ---------------------------------------------------------------------------------------------------------
// Numbers

std::string format_double(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "+Inf" : "-Inf";
  // Shortest round-trip digits, then Go's %g layout: exponent form when exp < -4 || exp >= 6 (the precision
  // Go uses for this decision when printing the shortest representation).
  std::array<char, 64> buf{};
  auto res = std::to_chars(buf.data(), buf.data() + buf.size(), d, std::chars_format::scientific);
  std::string_view sci(buf.data(), static_cast<std::size_t>(res.ptr - buf.data()));
  bool neg = !sci.empty() && sci[0] == '-';
  if (neg) sci.remove_prefix(1);
  std::size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e)) {
    if (c != '.') digits += c;
  }
  int exp = 0;
  std::string_view es = sci.substr(e + 1);
  if (!es.empty() && es[0] == '+') es.remove_prefix(1);
  std::from_chars(es.data(), es.data() + es.size(), exp);
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out = neg ? "-" : "";
  if (digits == "0") return out + "0";
  if (exp < -4 || exp >= 6) {
    out += digits[0];
    if (digits.size() > 1) out += "." + digits.substr(1);
    out += exp < 0 ? "e-" : "e+";
    int a = std::abs(exp);
    if (a < 10) out += '0';
    out += std::to_string(a);
    return out;
  }
  int dp = exp + 1;  // digits before the decimal point
  auto nd = static_cast<int>(digits.size());
  if (dp <= 0) return out + "0." + std::string(static_cast<std::size_t>(-dp), '0') + digits;
  if (dp >= nd) return out + digits + std::string(static_cast<std::size_t>(dp - nd), '0');
  return out + digits.substr(0, static_cast<std::size_t>(dp)) + "." +
         digits.substr(static_cast<std::size_t>(dp));
}

std::string format_duration(int64_t nanos) {
  // Go: strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s", with Seconds() = sec + nsec/1e9.
  int64_t sec = nanos / 1'000'000'000;
  int64_t nsec = nanos % 1'000'000'000;
  double s = static_cast<double>(sec) + static_cast<double>(nsec) / 1e9;
  std::array<char, 64> buf{};
  auto res = std::to_chars(buf.data(), buf.data() + buf.size(), s, std::chars_format::fixed);
  return std::string(buf.data(), static_cast<std::size_t>(res.ptr - buf.data())) + "s";
}

// ---------------------------------------------------------------------------------------------------------
// Durations (Go time.ParseDuration)

std::optional<int64_t> parse_go_duration(std::string_view s) {
  constexpr uint64_t kLimit = uint64_t{1} << 63;
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return 0;
  if (s.empty()) return std::nullopt;
  uint64_t total = 0;
  while (!s.empty()) {
    if (!(s[0] == '.' || (s[0] >= '0' && s[0] <= '9'))) return std::nullopt;
    // Integer part.
    uint64_t v = 0;
    std::size_t i = 0;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
      if (v > (kLimit - 1) / 10) return std::nullopt;
      v = v * 10 + static_cast<uint64_t>(s[i] - '0');
      if (v > kLimit) return std::nullopt;
    }
    bool pre = i > 0;
    s.remove_prefix(i);
    // Fraction.
    uint64_t f = 0;
    double scale = 1;
    bool post = false;
    if (!s.empty() && s[0] == '.') {
      s.remove_prefix(1);
      std::size_t j = 0;
      bool overflow = false;
      for (; j < s.size() && s[j] >= '0' && s[j] <= '9'; ++j) {
        if (overflow) continue;
        if (f > (std::numeric_limits<int64_t>::max() - 9) / 10) {
          overflow = true;
          continue;
        }
        f = f * 10 + static_cast<uint64_t>(s[j] - '0');
        scale *= 10;
      }
      post = j > 0;
      s.remove_prefix(j);
    }
    if (!pre && !post) return std::nullopt;
    // Unit.
    std::size_t u = 0;
    while (u < s.size() && s[u] != '.' && !(s[u] >= '0' && s[u] <= '9')) ++u;
    if (u == 0) return std::nullopt;
    std::string_view unit = s.substr(0, u);
    s.remove_prefix(u);
    uint64_t mult = 0;
    if (unit == "ns") {
      mult = 1;
    } else if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") {
      mult = 1'000;
    } else if (unit == "ms") {
      mult = 1'000'000;
    } else if (unit == "s") {
      mult = 1'000'000'000;
    } else if (unit == "m") {
      mult = 60'000'000'000;
    } else if (unit == "h") {
      mult = 3'600'000'000'000;
    } else {
      return std::nullopt;
    }
    if (v > kLimit / mult) return std::nullopt;
    v *= mult;
    if (f > 0) {
      v += static_cast<uint64_t>(static_cast<double>(f) * (static_cast<double>(mult) / scale));
      if (v > kLimit) return std::nullopt;
    }
    total += v;
    if (total > kLimit) return std::nullopt;
  }
  if (neg) return total == kLimit ? std::numeric_limits<int64_t>::min() : -static_cast<int64_t>(total);
  if (total > kLimit - 1) return std::nullopt;
  return static_cast<int64_t>(total);
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
