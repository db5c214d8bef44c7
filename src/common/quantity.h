// Kubernetes resource quantities (`resource.Quantity`): "500m", "0.7", "1Gi", "2e3", 4.
//
// Semantics follow k8s.io/apimachinery/pkg/api/resource:
//   <quantity> ::= [+-] <number> <suffix>
//   <number>   ::= digits | digits "." digits | digits "." | "." digits
//   <suffix>   ::= "" | n u m k M G T P E          (DecimalSI)
//                | Ki Mi Gi Ti Pi Ei               (BinarySI)
//                | e<int> | E<int>                 (DecimalExponent)
// Like apimachinery, the number may be empty: ".", "+", "-", "Gi" and "m" parse as zero, and "--1" is a
// bad suffix ("-1") rather than a bad number.
//
// Values are stored exactly as a signed count of nano-units (10^-9). Anything finer is rounded UP
// (away from zero) to the next nano-unit, so "0.1n" is 1n, as in Kubernetes. BinarySI values are capped
// at 2^63-1 like apimachinery caps them. Unlike apimachinery (arbitrary precision for decimal
// values) the magnitude must stay below 10^29 units; larger inputs are rejected as "too large" and
// arithmetic saturates there.
//
// A quantity remembers the format family of its input (DecimalSI, BinarySI or DecimalExponent) and
// prints in the canonical form kube-apiserver would store: no fractional digits, the largest suffix
// that loses no precision ("0.7" -> "700m", "1024Mi" -> "1Gi", "1536Mi" -> "1536Mi", "2e3" -> "2e3",
// "1.5k" -> "1500"). A BinarySI value below 1024 or with a fraction prints as DecimalSI ("0.5Ki" -> "512").
//
// str() vs canonical(): apimachinery keeps the input text verbatim when its fast parser path decides
// the input is "already canonical". That check ignores a leading '+', leading zeros, a decimal point
// and the spelling of an exponent, so the API server really stores "+1", "01", "1.", "1.500", "1E3"
// unchanged (kubernetes/kubernetes#138165). str() reproduces that (it is what a real server would
// return); canonical() always gives the normalised form ("1", "1", "1", "1500m", "1e3").
#pragma once

#include <compare>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "common/result.h"

namespace kubex::common {

enum class QuantityFormat {
  DecimalSI,        // 12M  (12 * 10^6), 500m
  BinarySI,         // 12Mi (12 * 2^20)
  DecimalExponent,  // 12e6
};

class Quantity {
 public:
  using Format = QuantityFormat;

  // Zero.
  Quantity() = default;
  // `units` whole units, e.g. Quantity(4) == 4 GPUs, Quantity(1 << 30, Format::BinarySI) == 1Gi.
  explicit Quantity(std::int64_t units, Format format = Format::DecimalSI);
  // `milli_units` thousandths: from_milli(500) == 500m.
  static Quantity from_milli(std::int64_t milli_units, Format format = Format::DecimalSI);
  // Exact nano-units (saturated to the supported range).
  static Quantity from_nanos(__int128 nano_units, Format format = Format::DecimalSI);

  // Parses the string form. Never throws; malformed input gives an error naming the input.
  static Result<Quantity> parse(std::string_view s);
  // int-or-string (GPU-3): a JSON string (surrounding whitespace ignored, as apimachinery does), a JSON
  // integer, or a JSON float (formatted as its shortest decimal and parsed). Anything else is an error.
  static Result<Quantity> from_json(const nlohmann::json& j);

  // Approximate value in units.
  double as_double() const;
  // Value in whole units, rounded up (away from zero), saturated to the int64 range.
  std::int64_t value() const;
  // Value in milli-units, rounded up (away from zero), saturated to the int64 range.
  std::int64_t milli_value() const;
  // Exact value in nano-units.
  __int128 nano_value() const { return nanos_; }

  Format format() const { return format_; }
  bool is_zero() const { return nanos_ == 0; }
  // -1, 0 or 1.
  int sign() const { return nanos_ < 0 ? -1 : (nanos_ > 0 ? 1 : 0); }

  // What kube-apiserver would store for this quantity (see the note at the top of this file).
  std::string str() const;
  // The canonical form, never the verbatim input.
  std::string canonical() const;

  // Comparison is by value, never by format: Quantity::parse("1Ki") == Quantity::parse("1024").
  friend bool operator==(const Quantity& a, const Quantity& b) { return a.nanos_ == b.nanos_; }
  friend std::strong_ordering operator<=>(const Quantity& a, const Quantity& b) {
    return a.nanos_ <=> b.nanos_;
  }

  // Sums and differences saturate at the supported range. Like apimachinery, when the left operand is
  // zero the result takes the right operand's format; otherwise it keeps the left operand's format.
  friend Quantity operator+(const Quantity& a, const Quantity& b);
  friend Quantity operator-(const Quantity& a, const Quantity& b);
  Quantity operator-() const;
  Quantity& operator+=(const Quantity& other) { return *this = *this + other; }
  Quantity& operator-=(const Quantity& other) { return *this = *this - other; }

 private:
  __int128 nanos_ = 0;
  Format format_ = Format::DecimalSI;
  // The verbatim input when apimachinery would keep it (see str()); empty otherwise.
  std::string verbatim_;
};

}  // namespace kubex::common
