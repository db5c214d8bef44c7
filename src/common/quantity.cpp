#include "common/quantity.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "common/quote.h"

namespace kubex::common {
namespace {

using u128 = unsigned __int128;
using i128 = __int128;

constexpr u128 pow10_u128(int n) {
  u128 v = 1;
  for (int i = 0; i < n; ++i) v *= 10;
  return v;
}

constexpr std::int64_t kNanoPerUnit = 1'000'000'000;
// Largest supported magnitude in nano-units: 10^38 - 1 (just under 10^29 units).
constexpr int kMaxNanoDigits = 38;
constexpr i128 kMaxNanos = static_cast<i128>(pow10_u128(kMaxNanoDigits) - 1);
// apimachinery caps BinarySI values at 2^63-1 units.
constexpr u128 kBinaryCapNanos = static_cast<u128>(std::numeric_limits<std::int64_t>::max()) * kNanoPerUnit;

constexpr std::string_view kRegex = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$";

i128 clamp_nanos(i128 v) {
  if (v > kMaxNanos) return kMaxNanos;
  if (v < -kMaxNanos) return -kMaxNanos;
  return v;
}

u128 magnitude(i128 v) {
  return v < 0 ? static_cast<u128>(-v) : static_cast<u128>(v);
}

std::string u128_to_string(u128 v) {
  if (v == 0) return "0";
  char buf[48];
  int i = 48;
  while (v != 0) {
    buf[--i] = static_cast<char>('0' + static_cast<int>(v % 10));
    v /= 10;
  }
  return std::string(buf + i, buf + 48);
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// Multiplies a decimal digit string (most significant first) by a small factor in place.
void multiply_digits(std::string& digits, unsigned factor) {
  unsigned carry = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    unsigned v = static_cast<unsigned>(*it - '0') * factor + carry;
    *it = static_cast<char>('0' + v % 10);
    carry = v / 10;
  }
  while (carry != 0) {
    digits.insert(digits.begin(), static_cast<char>('0' + carry % 10));
    carry /= 10;
  }
}

// Parses the optional sign and digits of a decimal exponent ("+3", "-12", "7"), like strconv.ParseInt.
bool parse_exponent(std::string_view s, std::int64_t& out) {
  if (s.empty()) return false;
  bool neg = false;
  if (s[0] == '+' || s[0] == '-') {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return false;
  std::int64_t v = 0;
  for (char c : s) {
    if (!is_digit(c)) return false;
    if (v > (std::numeric_limits<std::int64_t>::max() - (c - '0')) / 10) return false;
    v = v * 10 + (c - '0');
  }
  out = neg ? -v : v;
  return true;
}

struct Suffix {
  int base = 10;              // 10 or 2
  std::int64_t exponent = 0;  // power of `base`
  QuantityFormat format = QuantityFormat::DecimalSI;
};

bool interpret_suffix(std::string_view s, Suffix& out) {
  struct Entry {
    std::string_view text;
    int base;
    int exponent;
    QuantityFormat format;
  };
  static constexpr Entry kTable[] = {
      {"", 10, 0, QuantityFormat::DecimalSI},   {"n", 10, -9, QuantityFormat::DecimalSI},
      {"u", 10, -6, QuantityFormat::DecimalSI}, {"m", 10, -3, QuantityFormat::DecimalSI},
      {"k", 10, 3, QuantityFormat::DecimalSI},  {"M", 10, 6, QuantityFormat::DecimalSI},
      {"G", 10, 9, QuantityFormat::DecimalSI},  {"T", 10, 12, QuantityFormat::DecimalSI},
      {"P", 10, 15, QuantityFormat::DecimalSI}, {"E", 10, 18, QuantityFormat::DecimalSI},
      {"Ki", 2, 10, QuantityFormat::BinarySI},  {"Mi", 2, 20, QuantityFormat::BinarySI},
      {"Gi", 2, 30, QuantityFormat::BinarySI},  {"Ti", 2, 40, QuantityFormat::BinarySI},
      {"Pi", 2, 50, QuantityFormat::BinarySI},  {"Ei", 2, 60, QuantityFormat::BinarySI},
  };
  for (const auto& e : kTable) {
    if (e.text == s) {
      out = Suffix{e.base, e.exponent, e.format};
      return true;
    }
  }
  if (s.size() > 1 && (s[0] == 'e' || s[0] == 'E')) {
    std::int64_t exp = 0;
    if (!parse_exponent(s.substr(1), exp)) return false;
    out = Suffix{10, exp, QuantityFormat::DecimalExponent};
    return true;
  }
  return false;
}

// Whether apimachinery's fast parser path would keep the input text as the cached string form.
// `num` has its leading zeros stripped ("0" when nothing is left).
bool apimachinery_keeps_input(std::string_view num, std::string_view denom, const Suffix& suffix) {
  if (suffix.format == QuantityFormat::BinarySI) {
    if (!denom.empty()) return false;
    // Precision budget of the int64 fast path (15 digits minus ~0.3 digit per binary power).
    std::int64_t precision = 15 - static_cast<std::int64_t>(num.size()) - suffix.exponent * 3 / 10 - 1;
    if (precision < 0) return false;
    std::int64_t value = 0;
    for (char c : num) value = value * 10 + (c - '0');
    // value << exponent must fit an int64.
    if (value != 0 && value > (std::numeric_limits<std::int64_t>::max() >> suffix.exponent)) return false;
    return (value & 7) != 0;
  }
  std::int64_t precision = 18 - static_cast<std::int64_t>(num.size() + denom.size());
  if (precision < 0) return false;
  // (Exponents are clamped first so the subtraction cannot overflow; anything that large is rejected anyway.)
  constexpr std::int64_t kLimit = 1'000'000'000'000'000;
  std::int64_t scale = std::clamp(suffix.exponent, -kLimit, kLimit) - static_cast<std::int64_t>(denom.size());
  if (scale < -9) return false;
  std::string shifted = std::string(num) + std::string(denom);
  return scale % 3 == 0 && !shifted.ends_with("000") && shifted[0] != '0';
}

enum class ValueStatus { Ok, TooLarge };

// Exact magnitude in nano-units of digits * 10^(dec_exp) * 2^(bin_exp), rounded up to a whole nano-unit.
ValueStatus magnitude_nanos(std::string digits, std::int64_t dec_exp, std::int64_t bin_exp, u128& out) {
  std::size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) {
    out = 0;
    return ValueStatus::Ok;
  }
  digits.erase(0, first);
  for (std::int64_t i = 0; i < bin_exp; i += 10) multiply_digits(digits, 1024);
  std::int64_t shift = dec_exp + 9;  // to nano-units
  std::string_view integer = digits;
  bool fraction = false;
  if (shift >= 0) {
    if (static_cast<std::int64_t>(digits.size()) + shift > kMaxNanoDigits) return ValueStatus::TooLarge;
    digits.append(static_cast<std::size_t>(shift), '0');
    integer = digits;
  } else {
    auto drop = static_cast<std::uint64_t>(-shift);
    if (drop >= digits.size()) {
      integer = {};
      fraction = true;  // digits is non-zero
    } else {
      integer = std::string_view(digits).substr(0, digits.size() - drop);
      std::string_view rest = std::string_view(digits).substr(digits.size() - drop);
      fraction = rest.find_first_not_of('0') != std::string_view::npos;
    }
    if (integer.size() > static_cast<std::size_t>(kMaxNanoDigits)) return ValueStatus::TooLarge;
  }
  u128 v = 0;
  for (char c : integer) v = v * 10 + static_cast<unsigned>(c - '0');
  if (fraction) v += 1;
  if (v > static_cast<u128>(kMaxNanos)) return ValueStatus::TooLarge;
  out = v;
  return ValueStatus::Ok;
}

// Rounds nanos to a multiple of `unit` nano-units, away from zero, then divides; saturates to int64.
std::int64_t scaled_up(i128 nanos, std::int64_t unit) {
  u128 mag = magnitude(nanos);
  u128 q = mag / static_cast<u128>(unit);
  if (mag % static_cast<u128>(unit) != 0) ++q;
  constexpr auto kMax = static_cast<u128>(std::numeric_limits<std::int64_t>::max());
  if (nanos < 0) {
    if (q > kMax + 1) return std::numeric_limits<std::int64_t>::min();
    return static_cast<std::int64_t>(-static_cast<i128>(q));
  }
  if (q > kMax) return std::numeric_limits<std::int64_t>::max();
  return static_cast<std::int64_t>(q);
}

}  // namespace

Quantity::Quantity(std::int64_t units, Format format)
    : nanos_(static_cast<i128>(units) * kNanoPerUnit), format_(format) {}

Quantity Quantity::from_milli(std::int64_t milli_units, Format format) {
  return from_nanos(static_cast<i128>(milli_units) * 1'000'000, format);
}

Quantity Quantity::from_nanos(__int128 nano_units, Format format) {
  Quantity q;
  q.nanos_ = clamp_nanos(nano_units);
  q.format_ = format;
  return q;
}

Result<Quantity> Quantity::parse(std::string_view s) {
  auto format_error = [&] {
    return fail("invalid quantity " + quote(s) + ": quantities must match the regular expression '" +
                std::string(kRegex) + "'");
  };
  if (s.empty()) return format_error();
  if (s == "0") {
    Quantity q;
    q.verbatim_ = "0";
    return q;
  }

  // Scan [+-]? digits* ('.' digits*)? [eEinumkKMGTP]* [+-]? digits*  — the shape apimachinery's scanner
  // accepts.
  std::size_t pos = 0;
  bool negative = false;
  if (s[0] == '+' || s[0] == '-') {
    negative = s[0] == '-';
    pos = 1;
  }
  std::size_t begin = pos;
  while (pos < s.size() && is_digit(s[pos])) ++pos;
  std::string_view num = s.substr(begin, pos - begin);
  std::string_view denom;
  if (pos < s.size() && s[pos] == '.') {
    begin = ++pos;
    while (pos < s.size() && is_digit(s[pos])) ++pos;
    denom = s.substr(begin, pos - begin);
  }
  std::size_t suffix_begin = pos;
  while (pos < s.size() && std::string_view("eEinumkKMGTP").find(s[pos]) != std::string_view::npos) ++pos;
  if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) ++pos;
  while (pos < s.size() && is_digit(s[pos])) ++pos;
  if (pos != s.size()) return format_error();
  std::string_view suffix_text = s.substr(suffix_begin);

  Suffix suffix;
  if (!interpret_suffix(suffix_text, suffix)) {
    return fail("invalid quantity " + quote(s) + ": unable to parse quantity's suffix " + quote(suffix_text));
  }

  std::size_t nz = num.find_first_not_of('0');
  std::string_view num_stripped = nz == std::string_view::npos ? std::string_view("0") : num.substr(nz);

  std::int64_t dec_exp = 0;
  std::int64_t bin_exp = 0;
  if (suffix.base == 2) {
    bin_exp = suffix.exponent;
  } else {
    // Exponents beyond +-10^15 behave like +-10^15: far out of range either way.
    constexpr std::int64_t kExpLimit = 1'000'000'000'000'000;
    dec_exp = std::clamp(suffix.exponent, -kExpLimit, kExpLimit);
  }
  dec_exp -= static_cast<std::int64_t>(denom.size());

  u128 mag = 0;
  if (magnitude_nanos(std::string(num) + std::string(denom), dec_exp, bin_exp, mag) != ValueStatus::Ok) {
    return fail("invalid quantity " + quote(s) + ": too large (the supported magnitude is below 10^29)");
  }
  Format format = suffix.format;
  if (format == Format::BinarySI) {
    if (mag > kBinaryCapNanos) mag = kBinaryCapNanos;
    if (mag != 0 && mag < static_cast<u128>(kNanoPerUnit)) format = Format::DecimalSI;
  }

  Quantity q;
  q.nanos_ = negative ? -static_cast<i128>(mag) : static_cast<i128>(mag);
  q.format_ = format;
  if (apimachinery_keeps_input(num_stripped, denom, suffix)) q.verbatim_ = std::string(s);
  return q;
}

Result<Quantity> Quantity::from_json(const nlohmann::json& j) {
  if (j.is_string()) {
    std::string_view s = j.get_ref<const std::string&>();
    constexpr std::string_view kSpace = " \t\r\n\v\f";
    std::size_t b = s.find_first_not_of(kSpace);
    if (b == std::string_view::npos) return parse("");
    std::size_t e = s.find_last_not_of(kSpace);
    return parse(s.substr(b, e - b + 1));
  }
  if (j.is_number_unsigned()) return parse(std::to_string(j.get<std::uint64_t>()));
  if (j.is_number_integer()) return parse(std::to_string(j.get<std::int64_t>()));
  if (j.is_number_float()) {
    double d = j.get<double>();
    if (!std::isfinite(d)) return fail("invalid quantity: the number is not finite");
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, d);
    if (res.ec != std::errc()) return fail("invalid quantity: cannot format the number");
    return parse(std::string_view(buf, static_cast<std::size_t>(res.ptr - buf)));
  }
  return fail(std::string("invalid quantity: expected a string or a number, got ") + j.type_name());
}

double Quantity::as_double() const {
  return static_cast<double>(nanos_) / static_cast<double>(kNanoPerUnit);
}

std::int64_t Quantity::value() const {
  return scaled_up(nanos_, kNanoPerUnit);
}

std::int64_t Quantity::milli_value() const {
  return scaled_up(nanos_, 1'000'000);
}

std::string Quantity::str() const {
  return verbatim_.empty() ? canonical() : verbatim_;
}

std::string Quantity::canonical() const {
  if (nanos_ == 0) return "0";
  const std::string sign = nanos_ < 0 ? "-" : "";
  const u128 mag = magnitude(nanos_);
  Format format = format_;
  if (format == Format::BinarySI) {
    // Below 1024 or fractional: shown as DecimalSI so nothing is rounded.
    if (mag < static_cast<u128>(1024) * kNanoPerUnit || mag % kNanoPerUnit != 0) format = Format::DecimalSI;
  }
  if (format == Format::BinarySI) {
    static constexpr std::string_view kBinary[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    u128 units = mag / kNanoPerUnit;
    int power = 0;
    while (power < 6 && units % 1024 == 0) {
      units /= 1024;
      ++power;
    }
    return sign + u128_to_string(units) + std::string(kBinary[power]);
  }
  // Mantissa * 10^exponent with all factors of ten moved to the exponent, then the exponent lowered to
  // a multiple of three.
  u128 mantissa = mag;
  int exponent = -9;
  while (mantissa % 10 == 0) {
    mantissa /= 10;
    ++exponent;
  }
  while (((exponent % 3) + 3) % 3 != 0) {
    mantissa *= 10;
    --exponent;
  }
  if (format == Format::DecimalExponent) {
    return sign + u128_to_string(mantissa) + (exponent == 0 ? std::string() : "e" + std::to_string(exponent));
  }
  // apimachinery has no suffix above E (10^18); keep "E" and a longer mantissa.
  while (exponent > 18) {
    mantissa *= 10;
    --exponent;
  }
  static constexpr std::string_view kDecimal[] = {"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
  return sign + u128_to_string(mantissa) + std::string(kDecimal[(exponent + 9) / 3]);
}

Quantity operator+(const Quantity& a, const Quantity& b) {
  Quantity out;
  out.format_ = a.is_zero() ? b.format_ : a.format_;
  __int128 sum = 0;
  if (__builtin_add_overflow(a.nanos_, b.nanos_, &sum)) sum = a.nanos_ < 0 ? -kMaxNanos : kMaxNanos;
  out.nanos_ = clamp_nanos(sum);
  return out;
}

Quantity operator-(const Quantity& a, const Quantity& b) {
  return a + (-b);
}

Quantity Quantity::operator-() const {
  Quantity out;
  out.format_ = format_;
  out.nanos_ = -nanos_;  // the range is symmetric
  return out;
}

}  // namespace kubex::common
