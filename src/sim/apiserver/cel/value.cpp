// CEL values: constructors, map keys with heterogeneous numeric lookup, type names, display, and the
// equality and ordering rules of cel-spec (heterogeneous numeric equality, cross-type numeric ordering as
// kube-apiserver enables it with CrossTypeNumericComparisons).
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/apiserver/cel/internal.h"
#include "sim/apiserver/go_format.h"

namespace kubex::sim::cel::internal {

// ---------------------------------------------------------------------------------------------------------
// Values

Value make_null() {
  return Value{NullV{}};
}
Value make_bool(bool b) {
  return Value{b};
}
Value make_int(int64_t i) {
  return Value{i};
}
Value make_uint(uint64_t u) {
  return Value{u};
}
Value make_double(double d) {
  return Value{d};
}
Value make_string(std::string s) {
  return Value{StrV{std::make_shared<const std::string>(std::move(s))}};
}
Value make_bytes(std::string s) {
  return Value{BytesV{std::make_shared<const std::string>(std::move(s))}};
}
Value make_list(std::vector<Value> items) {
  return Value{std::make_shared<const std::vector<Value>>(std::move(items))};
}
Value make_map(MapData data) {
  return Value{std::make_shared<const MapData>(std::move(data))};
}
Value make_duration(int64_t nanos) {
  return Value{DurationV{nanos}};
}
Value make_type(std::string_view static_name) {
  return Value{TypeV{static_name}};
}
Value make_opt(std::optional<Value> v) {
  if (!v) return Value{OptionalV{}};
  return Value{OptionalV{std::make_shared<const Value>(std::move(*v))}};
}

std::string_view type_name(const Value& v) {
  switch (v.kind()) {
    case Kind::kNull:
      return "null_type";
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kUint:
      return "uint";
    case Kind::kDouble:
      return "double";
    case Kind::kString:
      return "string";
    case Kind::kBytes:
      return "bytes";
    case Kind::kList:
      return "list";
    case Kind::kMap:
      return "map";
    case Kind::kDuration:
      return "google.protobuf.Duration";
    case Kind::kTimestamp:
      return "google.protobuf.Timestamp";
    case Kind::kType:
      return "type";
    case Kind::kQuantity:
      return "kubernetes.Quantity";
    case Kind::kOptional:
      return "optional_type";
  }
  return "dyn";
}

std::optional<std::string> map_key_repr(const Value& key) {
  switch (key.kind()) {
    case Kind::kBool:
      return key.as_bool() ? "b1" : "b0";
    case Kind::kString:
      return "s" + key.as_string();
    case Kind::kInt:
      return "n" + std::to_string(key.as_int());
    case Kind::kUint:
      return "n" + std::to_string(key.as_uint());
    case Kind::kDouble: {
      double d = key.as_double();
      if (std::isnan(d) || std::trunc(d) != d) return std::nullopt;
      if (d >= -9223372036854775808.0 && d < 0) return "n" + std::to_string(static_cast<int64_t>(d));
      if (d >= 0 && d < 18446744073709551616.0) return "n" + std::to_string(static_cast<uint64_t>(d));
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

bool is_valid_map_key(const Value& key) {
  Kind k = key.kind();
  return k == Kind::kBool || k == Kind::kString || k == Kind::kInt || k == Kind::kUint;
}

const Value* MapData::find(const Value& key) const {
  auto repr = map_key_repr(key);
  if (!repr) return nullptr;
  auto it = index.find(*repr);
  return it == index.end() ? nullptr : &entries[it->second].second;
}

bool MapData::insert(Value key, Value value) {
  auto repr = map_key_repr(key);
  if (!repr) return false;
  auto [it, added] = index.emplace(std::move(*repr), entries.size());
  if (!added) return false;
  entries.emplace_back(std::move(key), std::move(value));
  return true;
}

std::string display(const Value& v) {
  switch (v.kind()) {
    case Kind::kNull:
      return "null";
    case Kind::kBool:
      return v.as_bool() ? "true" : "false";
    case Kind::kInt:
      return std::to_string(v.as_int());
    case Kind::kUint:
      return std::to_string(v.as_uint());
    case Kind::kDouble:
      return go_float(v.as_double());
    case Kind::kString:
      return v.as_string();
    case Kind::kBytes:
      return v.as_bytes();
    case Kind::kList: {
      std::string out = "[";
      for (const Value& e : v.as_list()) out += (out.size() > 1 ? ", " : "") + display(e);
      return out + "]";
    }
    case Kind::kMap: {
      std::string out = "{";
      for (const auto& [k, e] : v.as_map().entries) {
        out += (out.size() > 1 ? ", " : "") + display(k) + ": " + display(e);
      }
      return out + "}";
    }
    case Kind::kDuration:
      return format_duration(v.as_duration());
    case Kind::kTimestamp:
      return format_timestamp(v.as_timestamp());
    case Kind::kType:
      return std::string(v.as_type());
    case Kind::kQuantity:
      return quantity_to_string(v.as_quantity());
    case Kind::kOptional:
      return v.as_optional().value ? "optional(" + display(*v.as_optional().value) + ")" : "optional.none()";
  }
  return "";
}

namespace {

bool is_number(Kind k) {
  return k == Kind::kInt || k == Kind::kUint || k == Kind::kDouble;
}

// Orders int64 against a double exactly (no rounding of large integers); the double must not be NaN.
int cmp_int_double(int64_t i, double d) {
  if (d >= 9223372036854775808.0) return -1;
  if (d < -9223372036854775808.0) return 1;
  double t = std::trunc(d);
  auto ti = static_cast<int64_t>(t);
  if (i != ti) return i < ti ? -1 : 1;
  if (d > t) return -1;
  if (d < t) return 1;
  return 0;
}

int cmp_uint_double(uint64_t u, double d) {
  if (d < 0) return 1;
  if (d >= 18446744073709551616.0) return -1;
  double t = std::trunc(d);
  auto tu = static_cast<uint64_t>(t);
  if (u != tu) return u < tu ? -1 : 1;
  if (d > t) return -1;
  return 0;
}

// Numeric comparison across int/uint/double; nullopt if a NaN is involved.
std::optional<int> cmp_numbers(const Value& a, const Value& b) {
  auto sgn = [](auto x, auto y) { return x < y ? -1 : (x > y ? 1 : 0); };
  switch (a.kind()) {
    case Kind::kInt:
      switch (b.kind()) {
        case Kind::kInt:
          return sgn(a.as_int(), b.as_int());
        case Kind::kUint:
          return a.as_int() < 0 ? -1 : sgn(static_cast<uint64_t>(a.as_int()), b.as_uint());
        default:
          if (std::isnan(b.as_double())) return std::nullopt;
          return cmp_int_double(a.as_int(), b.as_double());
      }
    case Kind::kUint:
      switch (b.kind()) {
        case Kind::kInt:
          return b.as_int() < 0 ? 1 : sgn(a.as_uint(), static_cast<uint64_t>(b.as_int()));
        case Kind::kUint:
          return sgn(a.as_uint(), b.as_uint());
        default:
          if (std::isnan(b.as_double())) return std::nullopt;
          return cmp_uint_double(a.as_uint(), b.as_double());
      }
    default: {
      double d = a.as_double();
      if (std::isnan(d)) return std::nullopt;
      switch (b.kind()) {
        case Kind::kInt:
          return -cmp_int_double(b.as_int(), d);
        case Kind::kUint:
          return -cmp_uint_double(b.as_uint(), d);
        default:
          if (std::isnan(b.as_double())) return std::nullopt;
          return sgn(d, b.as_double());
      }
    }
  }
}

// Element-wise equality of lists and maps: any unequal pair decides false; otherwise the first error, if any.
struct EqualityFold {
  std::optional<Err> err;
  // False when the pair was unequal (the whole comparison is false then).
  bool add(const std::expected<bool, Err>& e) {
    if (e) return *e;
    if (!err) err = e.error();
    return true;
  }
  std::expected<bool, Err> result() const {
    if (err) return std::unexpected(*err);
    return true;
  }
};

}  // namespace

std::expected<bool, Err> equals(const Value& a, const Value& b) {
  Kind ka = a.kind(), kb = b.kind();
  if (ka == Kind::kNull || kb == Kind::kNull) return ka == kb;
  if (is_number(ka) && is_number(kb)) {
    auto c = cmp_numbers(a, b);
    return c.has_value() && *c == 0;
  }
  if (ka == Kind::kQuantity || kb == Kind::kQuantity) {
    if (ka != kb) return std::unexpected(Err{"no such overload", ErrKind::kNoSuchOverload});
    return quantity_compare(a.as_quantity(), b.as_quantity()) == 0;
  }
  if (ka != kb) return false;
  switch (ka) {
    case Kind::kBool:
      return a.as_bool() == b.as_bool();
    case Kind::kString:
      return a.as_string() == b.as_string();
    case Kind::kBytes:
      return a.as_bytes() == b.as_bytes();
    case Kind::kDuration:
      return a.as_duration() == b.as_duration();
    case Kind::kTimestamp:
      return a.as_timestamp().seconds == b.as_timestamp().seconds &&
             a.as_timestamp().nanos == b.as_timestamp().nanos;
    case Kind::kType:
      return a.as_type() == b.as_type();
    case Kind::kOptional: {
      const auto& oa = a.as_optional().value;
      const auto& ob = b.as_optional().value;
      if (!oa || !ob) return !oa && !ob;
      return equals(*oa, *ob);
    }
    case Kind::kList: {
      const auto& la = a.as_list();
      const auto& lb = b.as_list();
      if (la.size() != lb.size()) return false;
      EqualityFold fold;
      for (std::size_t i = 0; i < la.size(); ++i) {
        if (!fold.add(equals(la[i], lb[i]))) return false;
      }
      return fold.result();
    }
    case Kind::kMap: {
      const auto& ma = a.as_map();
      const auto& mb = b.as_map();
      if (ma.entries.size() != mb.entries.size()) return false;
      EqualityFold fold;
      for (const auto& [k, v] : ma.entries) {
        const Value* other = mb.find(k);
        if (other == nullptr || !fold.add(equals(v, *other))) return false;
      }
      return fold.result();
    }
    default:
      return false;
  }
}

std::expected<int, Err> compare(const Value& a, const Value& b) {
  Kind ka = a.kind(), kb = b.kind();
  auto sgn = [](auto x, auto y) { return x < y ? -1 : (x > y ? 1 : 0); };
  if (is_number(ka) && is_number(kb)) {
    auto c = cmp_numbers(a, b);
    if (!c) return std::unexpected(Err{"NaN values cannot be ordered"});
    return *c;
  }
  if (ka != kb) return std::unexpected(Err{"no such overload", ErrKind::kNoSuchOverload});
  switch (ka) {
    case Kind::kBool:
      return sgn(a.as_bool(), b.as_bool());
    case Kind::kString:
      return sgn(a.as_string().compare(b.as_string()), 0);
    case Kind::kBytes:
      return sgn(a.as_bytes().compare(b.as_bytes()), 0);
    case Kind::kDuration:
      return sgn(a.as_duration(), b.as_duration());
    case Kind::kTimestamp: {
      const auto& x = a.as_timestamp();
      const auto& y = b.as_timestamp();
      if (x.seconds != y.seconds) return sgn(x.seconds, y.seconds);
      return sgn(x.nanos, y.nanos);
    }
    default:
      return std::unexpected(Err{"no such overload", ErrKind::kNoSuchOverload});
  }
}

}  // namespace kubex::sim::cel::internal
