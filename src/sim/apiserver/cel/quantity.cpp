// kubernetes.Quantity for CEL: an exact decimal implementation of k8s.io/apimachinery resource.Quantity's
// parsing (suffixes, rounding up to nano units, the BinarySI cap), comparison and addition. Quantities keep
// the two representations the Go type has (an int64 amount, or an arbitrary decimal) because the CEL
// functions asInteger/isInteger and asApproximateFloat observe them: quantity("1.0").isInteger() is false,
// quantity("1k").isInteger() is true.
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>

#include "sim/apiserver/cel/internal.h"

namespace kubex::sim::cel::internal {

namespace {

// Digit-string arithmetic is bounded so absurd exponents ("1e999999999") cannot exhaust memory.
constexpr std::size_t kMaxDigits = 4096;
constexpr std::string_view kTooLarge = "quantity exceeds supported precision";
constexpr std::string_view kFormatWrong =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
constexpr std::string_view kNumeric = "unable to parse numeric part of quantity";
constexpr std::string_view kSuffix = "unable to parse quantity's suffix";
constexpr int32_t kNanoScale = 9;  // inf.Dec scale of resource.Nano

std::string strip_leading_zeros(std::string s) {
  std::size_t k = 0;
  while (k < s.size() && s[k] == '0') ++k;
  return s.substr(k);
}

// Compares a*10^-sa with b*10^-sb (non-negative magnitudes without leading zeros).
int cmp_mag(const std::string& a, int64_t sa, const std::string& b, int64_t sb) {
  if (a.empty() || b.empty()) return a.empty() ? (b.empty() ? 0 : -1) : 1;
  int64_t ea = static_cast<int64_t>(a.size()) - sa;
  int64_t eb = static_cast<int64_t>(b.size()) - sb;
  if (ea != eb) return ea < eb ? -1 : 1;
  std::size_t n = std::max(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    char x = i < a.size() ? a[i] : '0';
    char y = i < b.size() ? b[i] : '0';
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

// Equal-length-agnostic addition of decimal digit strings.
std::string add_digits(const std::string& a, const std::string& b) {
  std::string out;
  int carry = 0;
  for (std::size_t i = 0; i < std::max(a.size(), b.size()) || carry; ++i) {
    int x = i < a.size() ? a[a.size() - 1 - i] - '0' : 0;
    int y = i < b.size() ? b[b.size() - 1 - i] - '0' : 0;
    int s = x + y + carry;
    out += static_cast<char>('0' + s % 10);
    carry = s / 10;
  }
  return strip_leading_zeros(std::string(out.rbegin(), out.rend()));
}

// a - b for a >= b.
std::string sub_digits(const std::string& a, const std::string& b) {
  std::string out;
  int borrow = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    int x = a[a.size() - 1 - i] - '0' - borrow;
    int y = i < b.size() ? b[b.size() - 1 - i] - '0' : 0;
    borrow = x < y ? 1 : 0;
    out += static_cast<char>('0' + x + borrow * 10 - y);
  }
  return strip_leading_zeros(std::string(out.rbegin(), out.rend()));
}

std::string mul_small(const std::string& a, uint32_t m) {
  if (a.empty() || m == 0) return "";
  std::string out;
  uint64_t carry = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    uint64_t p = static_cast<uint64_t>(a[a.size() - 1 - i] - '0') * m + carry;
    out += static_cast<char>('0' + p % 10);
    carry = p / 10;
  }
  while (carry) {
    out += static_cast<char>('0' + carry % 10);
    carry /= 10;
  }
  return strip_leading_zeros(std::string(out.rbegin(), out.rend()));
}

std::string digits_of(uint64_t v) {
  return v == 0 ? std::string() : std::to_string(v);
}

BigDecimal to_big(const QuantityData& q) {
  if (!q.small) return q.dec;
  BigDecimal d;
  d.negative = q.value < 0;
  uint64_t mag = q.value < 0 ? 0 - static_cast<uint64_t>(q.value) : static_cast<uint64_t>(q.value);
  d.digits = digits_of(mag);
  d.scale = -static_cast<int64_t>(q.scale);
  return d;
}

std::expected<BigDecimal, std::string> big_add(const BigDecimal& x, const BigDecimal& y) {
  int64_t s = std::max(x.scale, y.scale);
  auto align = [&](const BigDecimal& d) -> std::expected<std::string, std::string> {
    if (d.digits.empty()) return std::string();
    uint64_t pad = static_cast<uint64_t>(s - d.scale);
    if (pad + d.digits.size() > kMaxDigits) return std::unexpected(std::string(kTooLarge));
    return d.digits + std::string(static_cast<std::size_t>(pad), '0');
  };
  auto ax = align(x);
  if (!ax) return std::unexpected(ax.error());
  auto ay = align(y);
  if (!ay) return std::unexpected(ay.error());
  BigDecimal r;
  r.scale = s;
  if (x.negative == y.negative) {
    r.digits = add_digits(*ax, *ay);
    r.negative = x.negative;
  } else if (int c = cmp_mag(*ax, 0, *ay, 0); c >= 0) {
    r.digits = sub_digits(*ax, *ay);
    r.negative = x.negative;
  } else {
    r.digits = sub_digits(*ay, *ax);
    r.negative = y.negative;
  }
  if (r.digits.empty()) r.negative = false;
  if (r.digits.size() > kMaxDigits) return std::unexpected(std::string(kTooLarge));
  return r;
}

bool mul_overflows(int64_t a, int64_t b, int64_t& out) {
  return __builtin_mul_overflow(a, b, &out);
}

// value * 10^scale for scale > 0, or false on overflow (resource.positiveScaleInt64).
bool positive_scale(int64_t value, int32_t scale, int64_t& out) {
  out = value;
  for (int32_t i = 0; i < scale; ++i) {
    if (mul_overflows(out, 10, out)) return false;
  }
  return true;
}

// resource.int64Amount.Add; false when the result needs the decimal representation.
bool small_add(QuantityData& a, const QuantityData& b) {
  if (b.value == 0) return true;
  if (a.value == 0) {
    a.value = b.value;
    a.scale = b.scale;
    return true;
  }
  int64_t c = 0;
  if (a.scale == b.scale) {
    if (__builtin_add_overflow(a.value, b.value, &c)) return false;
    a.value = c;
  } else if (a.scale > b.scale) {
    if (!positive_scale(a.value, a.scale - b.scale, c) || __builtin_add_overflow(c, b.value, &c))
      return false;
    a.scale = b.scale;
    a.value = c;
  } else {
    if (!positive_scale(b.value, b.scale - a.scale, c) || __builtin_add_overflow(a.value, c, &c))
      return false;
    a.value = c;
  }
  return true;
}

// Go's math.Pow10 (table based, so results match Go bit for bit).
double go_pow10(int n) {
  static const auto tables = [] {
    struct T {
      std::array<double, 32> tab{};
      std::array<double, 10> pos{};
      std::array<double, 11> neg{};
    } t;
    for (int i = 0; i < 32; ++i)
      t.tab[static_cast<std::size_t>(i)] = std::strtod(("1e" + std::to_string(i)).c_str(), nullptr);
    for (int i = 0; i < 10; ++i)
      t.pos[static_cast<std::size_t>(i)] = std::strtod(("1e" + std::to_string(32 * i)).c_str(), nullptr);
    for (int i = 0; i < 11; ++i)
      t.neg[static_cast<std::size_t>(i)] = std::strtod(("1e-" + std::to_string(32 * i)).c_str(), nullptr);
    return t;
  }();
  if (n >= 0 && n <= 308)
    return tables.pos[static_cast<std::size_t>(n / 32)] * tables.tab[static_cast<std::size_t>(n % 32)];
  if (n < 0 && n >= -323)
    return tables.neg[static_cast<std::size_t>(-n / 32)] / tables.tab[static_cast<std::size_t>(-n % 32)];
  return n > 0 ? std::numeric_limits<double>::infinity() : 0.0;
}

}  // namespace

std::expected<QuantityData, std::string> parse_quantity(std::string_view str) {
  auto fail = [](std::string_view m) { return std::unexpected(std::string(m)); };
  if (str.empty()) return fail(kFormatWrong);
  if (str == "0") return QuantityData{};
  // Split into sign, numerator, denominator and suffix (resource.parseQuantityString).
  bool positive = true;
  std::size_t pos = 0, end = str.size();
  if (str[0] == '-' || str[0] == '+') {
    positive = str[0] == '+';
    ++pos;
  }
  std::string num, denom, suffix;
  std::string_view value;
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  while (pos < end && str[pos] == '0') ++pos;
  if (pos >= end) {
    num = "0";
    value = str.substr(0, end);
  } else {
    std::size_t start = pos;
    while (pos < end && is_digit(str[pos])) ++pos;
    num = std::string(str.substr(start, pos - start));
    if (num.empty()) num = "0";
    bool done = pos >= end;
    if (!done && str[pos] == '.') {
      ++pos;
      std::size_t ds = pos;
      while (pos < end && is_digit(str[pos])) ++pos;
      denom = std::string(str.substr(ds, pos - ds));
      done = pos >= end;
    }
    value = str.substr(0, pos);
    if (!done) {
      std::size_t ss = pos;
      while (pos < end && std::string_view("eEinumkKMGTP").find(str[pos]) != std::string_view::npos) ++pos;
      if (pos < end && (str[pos] == '-' || str[pos] == '+')) ++pos;
      while (pos < end && is_digit(str[pos])) ++pos;
      if (pos < end) return fail(kFormatWrong);
      suffix = std::string(str.substr(ss));
    }
  }
  // Interpret the suffix.
  int base = 10;
  int64_t exponent = 0;
  enum class Format { kDecimalSI, kBinarySI, kDecimalExponent } format = Format::kDecimalSI;
  static constexpr std::pair<std::string_view, int> kDec[] = {{"", 0},   {"n", -9}, {"u", -6}, {"m", -3},
                                                              {"k", 3},  {"M", 6},  {"G", 9},  {"T", 12},
                                                              {"P", 15}, {"E", 18}};
  static constexpr std::pair<std::string_view, int> kBin[] = {{"Ki", 10}, {"Mi", 20}, {"Gi", 30},
                                                              {"Ti", 40}, {"Pi", 50}, {"Ei", 60}};
  bool known = false;
  for (const auto& [s, e] : kDec) {
    if (suffix == s) known = true, exponent = e;
  }
  for (const auto& [s, e] : kBin) {
    if (suffix == s) known = true, exponent = e, base = 2, format = Format::kBinarySI;
  }
  if (!known) {
    if (suffix.size() < 2 || (suffix[0] != 'e' && suffix[0] != 'E')) return fail(kSuffix);
    std::string_view digits = std::string_view(suffix).substr(1);
    bool neg = false;
    if (digits[0] == '+' || digits[0] == '-') {
      neg = digits[0] == '-';
      digits.remove_prefix(1);
    }
    if (digits.empty() || digits.size() > 18) return fail(kSuffix);
    int64_t e = 0;
    for (char c : digits) {
      if (!is_digit(c)) return fail(kSuffix);
      e = e * 10 + (c - '0');
    }
    exponent = neg ? -e : e;
    format = Format::kDecimalExponent;
  }
  if (exponent > std::numeric_limits<int32_t>::max() / 2 ||
      exponent < std::numeric_limits<int32_t>::min() / 2) {
    return fail(kTooLarge);
  }
  // Fast path: an int64 amount (resource.ParseQuantity).
  int64_t precision = 0, scale = 0, mantissa = 1;
  if (format == Format::kBinarySI) {
    if (denom.empty()) {
      mantissa = int64_t{1} << exponent;
      precision = 15 - static_cast<int64_t>(num.size()) -
                  static_cast<int64_t>(static_cast<float>(exponent) * 3 / 10) - 1;
    } else {
      precision = -1;
    }
  } else {
    scale = exponent;
    precision = 18 - static_cast<int64_t>(num.size() + denom.size());
  }
  if (precision >= 0) {
    scale -= static_cast<int64_t>(denom.size());
    if (scale >= -kNanoScale) {
      std::string shifted = num + denom;
      int64_t v = 0;
      for (char c : shifted) v = v * 10 + (c - '0');  // at most 18 digits
      int64_t result = 0;
      if (!mul_overflows(v, mantissa, result)) {
        QuantityData q;
        q.small = true;
        q.value = positive ? result : -result;
        q.scale = static_cast<int32_t>(scale);
        return q;
      }
    }
  }
  // Decimal path: inf.Dec from the numeric text, shifted by the suffix, rounded up to nano units.
  BigDecimal d;
  {
    std::string_view t = value;
    if (!t.empty() && (t[0] == '+' || t[0] == '-')) t.remove_prefix(1);
    std::string digits;
    int64_t frac = 0;
    bool dot = false;
    for (char c : t) {
      if (c == '.') {
        dot = true;
        continue;
      }
      digits += c;
      if (dot) ++frac;
    }
    if (digits.empty()) return fail(kNumeric);
    d.digits = strip_leading_zeros(digits);
    d.scale = frac;
  }
  if (base == 10) {
    d.scale -= exponent;
  } else {
    for (int64_t k = 0; k < exponent; k += 10) d.digits = mul_small(d.digits, 1024);
  }
  if (!d.digits.empty()) {
    if (d.scale <= kNanoScale) {
      uint64_t pad = static_cast<uint64_t>(kNanoScale - d.scale);
      if (pad + d.digits.size() > kMaxDigits) return fail(kTooLarge);
      d.digits += std::string(static_cast<std::size_t>(pad), '0');
    } else {
      uint64_t drop = static_cast<uint64_t>(d.scale - kNanoScale);
      bool inexact = false;
      if (drop >= d.digits.size()) {
        inexact = true;  // non-zero value below one nano
        d.digits.clear();
      } else {
        std::size_t keep = d.digits.size() - static_cast<std::size_t>(drop);
        inexact = d.digits.find_first_not_of('0', keep) != std::string::npos;
        d.digits.resize(keep);
        d.digits = strip_leading_zeros(d.digits);
      }
      if (inexact) d.digits = add_digits(d.digits, "1");
    }
    d.scale = kNanoScale;
  }
  if (format == Format::kBinarySI && cmp_mag(d.digits, d.scale, "9223372036854775807", 0) > 0) {
    d.digits = "9223372036854775807";
    d.scale = 0;
  }
  d.negative = !positive && !d.digits.empty();
  QuantityData q;
  q.small = false;
  q.dec = std::move(d);
  return q;
}

int quantity_compare(const QuantityData& a, const QuantityData& b) {
  BigDecimal x = to_big(a), y = to_big(b);
  if (x.negative != y.negative) return x.negative ? -1 : 1;
  int c = cmp_mag(x.digits, x.scale, y.digits, y.scale);
  return x.negative ? -c : c;
}

std::expected<QuantityData, std::string> quantity_add(const QuantityData& a, const QuantityData& b,
                                                      bool subtract) {
  QuantityData y = b;
  if (subtract) {
    if (y.small) {
      if (y.value == std::numeric_limits<int64_t>::min()) {
        y.small = false;
        y.dec = to_big(b);
        y.dec.negative = false;
      } else {
        y.value = -y.value;
      }
    } else {
      y.dec.negative = !y.dec.negative && !y.dec.digits.empty();
    }
  }
  if (a.small && y.small) {
    QuantityData r = a;
    if (small_add(r, y)) return r;
  }
  auto sum = big_add(to_big(a), to_big(y));
  if (!sum) return std::unexpected(sum.error());
  QuantityData r;
  r.small = false;
  r.dec = std::move(*sum);
  return r;
}

QuantityData quantity_from_int(int64_t v) {
  QuantityData q;
  q.value = v;
  return q;
}

std::optional<int64_t> quantity_as_int64(const QuantityData& q) {
  if (!q.small || q.scale < 0) return std::nullopt;
  int64_t out = 0;
  if (!positive_scale(q.value, q.scale, out)) return std::nullopt;
  return out;
}

double quantity_as_approximate_float(const QuantityData& q) {
  double base = 0;
  int64_t exponent = 0;
  if (q.small) {
    base = static_cast<double>(q.value);
    exponent = q.scale;
  } else {
    base = q.dec.digits.empty() ? 0.0 : std::strtod(q.dec.digits.c_str(), nullptr);
    if (q.dec.negative) base = -base;
    exponent = -q.dec.scale;
  }
  if (exponent == 0) return base;
  if (exponent > 100000 || exponent < -100000) return base * (exponent > 0 ? go_pow10(400) : go_pow10(-400));
  return base * go_pow10(static_cast<int>(exponent));
}

int quantity_sign(const QuantityData& q) {
  if (q.small) return q.value == 0 ? 0 : (q.value > 0 ? 1 : -1);
  if (q.dec.digits.empty()) return 0;
  return q.dec.negative ? -1 : 1;
}

std::string quantity_to_string(const QuantityData& q) {
  BigDecimal d = to_big(q);
  if (d.digits.empty()) return "0";
  std::string digits = d.digits;
  int64_t scale = d.scale;
  while (scale > 0 && !digits.empty() && digits.back() == '0') {
    digits.pop_back();
    --scale;
  }
  std::string out = d.negative ? "-" : "";
  if (scale <= 0) {
    if (static_cast<uint64_t>(-scale) + digits.size() > kMaxDigits)
      return out + digits + "e" + std::to_string(-scale);
    return out + digits + std::string(static_cast<std::size_t>(-scale), '0');
  }
  auto s = static_cast<std::size_t>(scale);
  if (s >= digits.size()) return out + "0." + std::string(s - digits.size(), '0') + digits;
  return out + digits.substr(0, digits.size() - s) + "." + digits.substr(digits.size() - s);
}

}  // namespace kubex::sim::cel::internal
