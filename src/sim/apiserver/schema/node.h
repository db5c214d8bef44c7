// The compiled form of a structural schema (one Node per schema object) and the Go view of a JSON value that
// the passes over it share. Internal to sim/apiserver/schema.cpp and schema/.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "sim/apiserver/go_format.h"

namespace kubex::sim::schema {

using nlohmann::json;

enum TypeBit : uint8_t {
  kTObject = 1,
  kTArray = 2,
  kTString = 4,
  kTInteger = 8,
  kTNumber = 16,
  kTBoolean = 32,
};

inline uint8_t type_bit(std::string_view t) {
  if (t == "object") return kTObject;
  if (t == "array") return kTArray;
  if (t == "string") return kTString;
  if (t == "integer") return kTInteger;
  if (t == "number") return kTNumber;
  if (t == "boolean") return kTBoolean;
  return 0;
}

enum class ListType : uint8_t { kNone, kAtomic, kSet, kMap };
enum class Additional : uint8_t { kNone, kAllow, kForbid, kSchema };
enum class StrFormat : uint8_t { kNone, kDateTime, kDate, kOther };
enum class NumType : uint8_t { kNone, kInteger, kNumber };

struct Node {
  // Generic.
  uint8_t types = 0;       // TypeBit mask; 0 = any
  std::string type_label;  // as kube-openapi joins it: "integer", "integer,string"
  bool nullable = false;
  std::string format;  // after dropping formats kube-apiserver does not support for the type
  StrFormat str_format = StrFormat::kNone;
  NumType num_type = NumType::kNone;  // single integer/number type, for range checks
  std::string num_format;             // int32/int64/float/double, when num_type is set
  std::optional<json> default_value;  // pruned
  // Extensions.
  bool preserve_unknown = false;
  bool embedded = false;
  bool int_or_string = false;
  bool map_atomic = false;
  ListType list_type = ListType::kNone;
  std::vector<std::string> list_map_keys;
  const json* rules = nullptr;  // x-kubernetes-validations, inside Impl::raw
  // What lies at or below this node, so validation passes can skip whole subtrees.
  bool subtree_rules = false;
  bool subtree_embedded = false;
  bool subtree_list = false;
  // Structure.
  std::map<std::string, std::unique_ptr<Node>, std::less<>> properties;
  std::unique_ptr<Node> items;
  Additional additional = Additional::kNone;
  std::unique_ptr<Node> additional_schema;
  // Value validations.
  std::optional<double> maximum, minimum, multiple_of;
  bool exclusive_maximum = false, exclusive_minimum = false;
  bool maximum_ok = true, minimum_ok = true, multiple_of_ok = true;  // bound fits the type/format
  std::optional<int64_t> max_length, min_length, max_items, min_items, max_properties, min_properties;
  bool unique_items = false;
  std::string pattern;
  std::optional<std::regex> pattern_re;
  std::vector<json> enum_values;
  std::vector<std::string> required;
  std::vector<std::unique_ptr<Node>> all_of, any_of, one_of;
  std::unique_ptr<Node> not_schema;

  const Node* property(std::string_view k) const {
    auto it = properties.find(k);
    return it == properties.end() ? nullptr : it->second.get();
  }
};

enum class Kind : uint8_t { kNull, kBool, kInt, kFloat, kString, kArray, kObject };

// The Go type apimachinery would decode a value to: numbers are int64 when they fit, float64 otherwise.
inline Kind kind_of(const json& v) {
  switch (v.type()) {
    case json::value_t::boolean:
      return Kind::kBool;
    case json::value_t::number_integer:
      return Kind::kInt;
    case json::value_t::number_unsigned:
      return is_big_unsigned(v) ? Kind::kFloat : Kind::kInt;
    case json::value_t::number_float:
      return Kind::kFloat;
    case json::value_t::string:
      return Kind::kString;
    case json::value_t::array:
      return Kind::kArray;
    case json::value_t::object:
      return Kind::kObject;
    default:
      return Kind::kNull;
  }
}

inline int64_t as_int(const json& v) {
  return v.is_number_unsigned() ? static_cast<int64_t>(v.get<uint64_t>()) : v.get<int64_t>();
}

inline bool is_meta_field(std::string_view k) {
  return k == "apiVersion" || k == "kind" || k == "metadata";
}

inline const json* find_member(const json& obj, const std::string& k) {
  auto it = obj.find(k);
  return it == obj.end() ? nullptr : &*it;
}

// IsValueValidAgainstRange: does the value (or a bound) fit the schema's single numeric type and format?
inline bool fits_numeric_type(Kind k, const json* v, double f, NumType t, const std::string& fmt) {
  if (t == NumType::kInteger) {
    const bool is32 = fmt == "int32";
    const double lo = is32 ? std::numeric_limits<int32_t>::min() : -9223372036854775808.0;
    if (k == Kind::kInt) {
      const int64_t i = as_int(*v);
      return !is32 || (i >= std::numeric_limits<int32_t>::min() && i <= std::numeric_limits<int32_t>::max());
    }
    if (!std::isfinite(f) || f != std::trunc(f)) return false;
    return is32 ? (f >= lo && f <= std::numeric_limits<int32_t>::max())
                : (f >= lo && f < 9223372036854775808.0);
  }
  if (t == NumType::kNumber && fmt == "float") return std::fabs(f) <= std::numeric_limits<float>::max();
  return true;
}

// A double that is a whole number within int64.
inline bool integral_int64(double b) {
  return std::isfinite(b) && b == std::trunc(b) && b >= -9223372036854775808.0 && b < 9223372036854775808.0;
}

}  // namespace kubex::sim::schema
