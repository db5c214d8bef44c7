#include "common/duration.h"

#include <cstdint>

#include "common/quote.h"

namespace kubex::common {
namespace {

constexpr std::uint64_t kLimit = std::uint64_t{1} << 63;  // |d| may reach 2^63 only when negative

struct Unit {
  std::string_view name;
  std::uint64_t nanos;
};

constexpr Unit kUnits[] = {
    {"ns", 1},
    {"us", 1'000},
    {"\xC2\xB5s", 1'000},  // U+00B5 MICRO SIGN
    {"\xCE\xBCs", 1'000},  // U+03BC GREEK SMALL LETTER MU
    {"ms", 1'000'000},
    {"s", 1'000'000'000},
    {"m", 60'000'000'000},
    {"h", 3'600'000'000'000},
};

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// Consumes leading digits into `x`; false on overflow past 2^63.
bool leading_int(std::string_view& s, std::uint64_t& x) {
  std::size_t i = 0;
  x = 0;
  for (; i < s.size() && is_digit(s[i]); ++i) {
    if (x > kLimit / 10) return false;
    x = x * 10 + static_cast<std::uint64_t>(s[i] - '0');
    if (x > kLimit) return false;
  }
  s.remove_prefix(i);
  return true;
}

// Consumes leading digits of a fraction; digits that no longer fit are dropped (they cannot matter).
void leading_fraction(std::string_view& s, std::uint64_t& x, double& scale) {
  std::size_t i = 0;
  x = 0;
  scale = 1;
  bool overflow = false;
  for (; i < s.size() && is_digit(s[i]); ++i) {
    if (overflow) continue;
    if (x > (kLimit - 1) / 10) {
      overflow = true;
      continue;
    }
    std::uint64_t y = x * 10 + static_cast<std::uint64_t>(s[i] - '0');
    if (y > kLimit) {
      overflow = true;
      continue;
    }
    x = y;
    scale *= 10;
  }
  s.remove_prefix(i);
}

// Writes v/10^prec's fraction (".5", ".125") with trailing zeros removed; returns v/10^prec.
std::uint64_t format_fraction(std::string& out, std::uint64_t v, int prec) {
  std::string digits;
  bool print = false;
  for (int i = 0; i < prec; ++i) {
    int digit = static_cast<int>(v % 10);
    print = print || digit != 0;
    if (print) digits.insert(digits.begin(), static_cast<char>('0' + digit));
    v /= 10;
  }
  if (print) out.insert(0, "." + digits);
  return v;
}

}  // namespace

Result<std::chrono::nanoseconds> parse_go_duration(std::string_view orig) {
  auto invalid = [&] { return fail("time: invalid duration " + quote(orig)); };
  std::string_view s = orig;
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return std::chrono::nanoseconds(0);
  if (s.empty()) return invalid();

  std::uint64_t total = 0;
  while (!s.empty()) {
    if (!(s[0] == '.' || is_digit(s[0]))) return invalid();
    std::uint64_t whole = 0;
    std::size_t before = s.size();
    if (!leading_int(s, whole)) return invalid();
    bool pre = before != s.size();
    std::uint64_t frac = 0;
    double scale = 1;
    bool post = false;
    if (!s.empty() && s[0] == '.') {
      s.remove_prefix(1);
      std::size_t at = s.size();
      leading_fraction(s, frac, scale);
      post = at != s.size();
    }
    if (!pre && !post) return invalid();  // "." or ".s"

    std::size_t i = 0;
    while (i < s.size() && s[i] != '.' && !is_digit(s[i])) ++i;
    if (i == 0) return fail("time: missing unit in duration " + quote(orig));
    std::string_view name = s.substr(0, i);
    s.remove_prefix(i);
    const Unit* unit = nullptr;
    for (const auto& u : kUnits) {
      if (u.name == name) unit = &u;
    }
    if (unit == nullptr) return fail("time: unknown unit " + quote(name) + " in duration " + quote(orig));

    if (whole > kLimit / unit->nanos) return invalid();
    std::uint64_t v = whole * unit->nanos;
    if (frac > 0) {
      // Same floating-point conversion Go uses, so results agree to the nanosecond.
      v += static_cast<std::uint64_t>(static_cast<double>(frac) * (static_cast<double>(unit->nanos) / scale));
      if (v > kLimit) return invalid();
    }
    total += v;
    if (total > kLimit) return invalid();
  }
  if (negative) {
    // total <= 2^63 here, so -total fits.
    return std::chrono::nanoseconds(static_cast<std::int64_t>(0 - total));
  }
  if (total > kLimit - 1) return invalid();
  return std::chrono::nanoseconds(static_cast<std::int64_t>(total));
}

std::string format_go_duration(std::chrono::nanoseconds d) {
  std::int64_t n = d.count();
  bool negative = n < 0;
  std::uint64_t u = negative ? 0 - static_cast<std::uint64_t>(n) : static_cast<std::uint64_t>(n);
  std::string out;
  if (u < 1'000'000'000) {
    // Below one second: a single smaller unit, possibly with a fraction ("1.5µs").
    int prec = 0;
    if (u == 0) return "0s";
    if (u < 1'000) {
      out = "ns";
    } else if (u < 1'000'000) {
      prec = 3;
      out = "\xC2\xB5s";  // µs, U+00B5 like Go
    } else {
      prec = 6;
      out = "ms";
    }
    u = format_fraction(out, u, prec);
    out.insert(0, std::to_string(u));
  } else {
    out = "s";
    u = format_fraction(out, u, 9);  // u is now whole seconds
    out.insert(0, std::to_string(u % 60));
    u /= 60;  // minutes
    if (u > 0) {
      out.insert(0, std::to_string(u % 60) + "m");
      u /= 60;  // hours
      if (u > 0) out.insert(0, std::to_string(u) + "h");
    }
  }
  if (negative) out.insert(0, "-");
  return out;
}

}  // namespace kubex::common
