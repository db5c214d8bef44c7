// The CEL function table and the strict built-ins: operators, the Kubernetes quantity library and optional
// values. Conversions and time accessors live in cel/convert.cpp; string, regex, list and set functions in
// cel/strings.cpp.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/apiserver/cel/internal.h"

namespace kubex::sim::cel::internal {

namespace {

struct Entry {
  std::string_view name;
  FunctionInfo info;
};

// name, {fn, global, member, min args, max args} (member counts include the receiver)
constexpr Entry kFunctions[] = {
    {"size", {Fn::kSize, true, true, 1, 1}},
    {"int", {Fn::kInt, true, false, 1, 1}},
    {"uint", {Fn::kUint, true, false, 1, 1}},
    {"double", {Fn::kDouble, true, false, 1, 1}},
    {"string", {Fn::kString, true, false, 1, 1}},
    {"bool", {Fn::kBool, true, false, 1, 1}},
    {"bytes", {Fn::kBytes, true, false, 1, 1}},
    {"dyn", {Fn::kDyn, true, false, 1, 1}},
    {"type", {Fn::kType, true, false, 1, 1}},
    {"duration", {Fn::kDuration, true, false, 1, 1}},
    {"timestamp", {Fn::kTimestamp, true, false, 1, 1}},
    {"matches", {Fn::kMatches, true, true, 2, 2}},
    {"contains", {Fn::kContains, false, true, 2, 2}},
    {"startsWith", {Fn::kStartsWith, false, true, 2, 2}},
    {"endsWith", {Fn::kEndsWith, false, true, 2, 2}},
    {"getFullYear", {Fn::kGetFullYear, false, true, 1, 2}},
    {"getMonth", {Fn::kGetMonth, false, true, 1, 2}},
    {"getDayOfYear", {Fn::kGetDayOfYear, false, true, 1, 2}},
    {"getDayOfMonth", {Fn::kGetDayOfMonth, false, true, 1, 2}},
    {"getDate", {Fn::kGetDate, false, true, 1, 2}},
    {"getDayOfWeek", {Fn::kGetDayOfWeek, false, true, 1, 2}},
    {"getHours", {Fn::kGetHours, false, true, 1, 2}},
    {"getMinutes", {Fn::kGetMinutes, false, true, 1, 2}},
    {"getSeconds", {Fn::kGetSeconds, false, true, 1, 2}},
    {"getMilliseconds", {Fn::kGetMilliseconds, false, true, 1, 2}},
    {"charAt", {Fn::kCharAt, false, true, 2, 2}},
    {"indexOf", {Fn::kIndexOf, false, true, 2, 3}},
    {"lastIndexOf", {Fn::kLastIndexOf, false, true, 2, 3}},
    {"lowerAscii", {Fn::kLowerAscii, false, true, 1, 1}},
    {"upperAscii", {Fn::kUpperAscii, false, true, 1, 1}},
    {"replace", {Fn::kReplace, false, true, 3, 4}},
    {"split", {Fn::kSplit, false, true, 2, 3}},
    {"substring", {Fn::kSubstring, false, true, 2, 3}},
    {"trim", {Fn::kTrim, false, true, 1, 1}},
    {"join", {Fn::kJoin, false, true, 1, 2}},
    {"strings.quote", {Fn::kQuote, true, false, 1, 1}},
    {"find", {Fn::kFind, false, true, 2, 2}},
    {"findAll", {Fn::kFindAll, false, true, 2, 3}},
    {"isSorted", {Fn::kIsSorted, false, true, 1, 1}},
    {"sum", {Fn::kSum, false, true, 1, 1}},
    {"min", {Fn::kMin, false, true, 1, 1}},
    {"max", {Fn::kMax, false, true, 1, 1}},
    {"sets.contains", {Fn::kSetsContains, true, false, 2, 2}},
    {"sets.equivalent", {Fn::kSetsEquivalent, true, false, 2, 2}},
    {"sets.intersects", {Fn::kSetsIntersects, true, false, 2, 2}},
    {"quantity", {Fn::kQuantity, true, false, 1, 1}},
    {"isQuantity", {Fn::kIsQuantity, true, false, 1, 1}},
    {"sign", {Fn::kSign, true, false, 1, 1}},  // global only, like kube-apiserver
    {"isGreaterThan", {Fn::kIsGreaterThan, false, true, 2, 2}},
    {"isLessThan", {Fn::kIsLessThan, false, true, 2, 2}},
    {"compareTo", {Fn::kCompareTo, false, true, 2, 2}},
    {"asApproximateFloat", {Fn::kAsApproximateFloat, false, true, 1, 1}},
    {"asInteger", {Fn::kAsInteger, false, true, 1, 1}},
    {"isInteger", {Fn::kIsInteger, false, true, 1, 1}},
    {"add", {Fn::kQuantityAdd, false, true, 2, 2}},
    {"sub", {Fn::kQuantitySub, false, true, 2, 2}},
    {"optional.of", {Fn::kOptionalOf, true, false, 1, 1}},
    {"optional.none", {Fn::kOptionalNone, true, false, 0, 0}},
    {"optional.ofNonZeroValue", {Fn::kOptionalOfNonZero, true, false, 1, 1}},
    {"hasValue", {Fn::kHasValue, false, true, 1, 1}},
    {"value", {Fn::kOptValue, false, true, 1, 1}},
    {"orValue", {Fn::kOrValue, false, true, 2, 2}},
    {"or", {Fn::kOr, false, true, 2, 2}},
};

std::unexpected<Err> overflow() {
  return error("integer overflow");
}
std::unexpected<Err> uint_overflow() {
  return error("unsigned integer overflow");
}

Val ts_plus_duration(const TimestampV& t, int64_t d) {
  return make_timestamp(t.seconds + d / 1'000'000'000, t.nanos + d % 1'000'000'000, t.offset);
}

Val add(const Value& a, const Value& b) {
  Kind ka = a.kind(), kb = b.kind();
  if (ka == Kind::kTimestamp && kb == Kind::kDuration)
    return ts_plus_duration(a.as_timestamp(), b.as_duration());
  if (ka == Kind::kDuration && kb == Kind::kTimestamp)
    return ts_plus_duration(b.as_timestamp(), a.as_duration());
  if (ka != kb) return no_overload();
  switch (ka) {
    case Kind::kInt: {
      int64_t r;
      if (__builtin_add_overflow(a.as_int(), b.as_int(), &r)) return overflow();
      return make_int(r);
    }
    case Kind::kUint: {
      uint64_t r;
      if (__builtin_add_overflow(a.as_uint(), b.as_uint(), &r)) return uint_overflow();
      return make_uint(r);
    }
    case Kind::kDouble:
      return make_double(a.as_double() + b.as_double());
    case Kind::kString:
      return make_string(a.as_string() + b.as_string());
    case Kind::kBytes:
      return make_bytes(a.as_bytes() + b.as_bytes());
    case Kind::kList: {
      if (b.as_list().empty()) return a;
      if (a.as_list().empty()) return b;
      std::vector<Value> out = a.as_list();
      out.insert(out.end(), b.as_list().begin(), b.as_list().end());
      return make_list(std::move(out));
    }
    case Kind::kDuration: {
      int64_t r;
      if (__builtin_add_overflow(a.as_duration(), b.as_duration(), &r)) return overflow();
      return make_duration(r);
    }
    default:
      return no_overload();
  }
}

Val subtract(const Value& a, const Value& b) {
  Kind ka = a.kind(), kb = b.kind();
  if (ka == Kind::kTimestamp && kb == Kind::kDuration) {
    if (b.as_duration() == std::numeric_limits<int64_t>::min()) return error("timestamp overflow");
    return ts_plus_duration(a.as_timestamp(), -b.as_duration());
  }
  if (ka != kb) return no_overload();
  switch (ka) {
    case Kind::kInt: {
      int64_t r;
      if (__builtin_sub_overflow(a.as_int(), b.as_int(), &r)) return overflow();
      return make_int(r);
    }
    case Kind::kUint: {
      uint64_t r;
      if (__builtin_sub_overflow(a.as_uint(), b.as_uint(), &r)) return uint_overflow();
      return make_uint(r);
    }
    case Kind::kDouble:
      return make_double(a.as_double() - b.as_double());
    case Kind::kDuration: {
      int64_t r;
      if (__builtin_sub_overflow(a.as_duration(), b.as_duration(), &r)) return overflow();
      return make_duration(r);
    }
    case Kind::kTimestamp: {
      const auto& x = a.as_timestamp();
      const auto& y = b.as_timestamp();
      int64_t secs, nanos;
      if (__builtin_mul_overflow(x.seconds - y.seconds, int64_t{1'000'000'000}, &secs) ||
          __builtin_add_overflow(secs, static_cast<int64_t>(x.nanos - y.nanos), &nanos)) {
        return overflow();
      }
      return make_duration(nanos);
    }
    default:
      return no_overload();
  }
}

Val multiply(const Value& a, const Value& b) {
  if (a.kind() != b.kind()) return no_overload();
  switch (a.kind()) {
    case Kind::kInt: {
      int64_t r;
      if (__builtin_mul_overflow(a.as_int(), b.as_int(), &r)) return overflow();
      return make_int(r);
    }
    case Kind::kUint: {
      uint64_t r;
      if (__builtin_mul_overflow(a.as_uint(), b.as_uint(), &r)) return uint_overflow();
      return make_uint(r);
    }
    case Kind::kDouble:
      return make_double(a.as_double() * b.as_double());
    default:
      return no_overload();
  }
}

Val divide(const Value& a, const Value& b, bool modulo) {
  if (a.kind() != b.kind()) return no_overload();
  const char* zero = modulo ? "modulus by zero" : "division by zero";
  switch (a.kind()) {
    case Kind::kInt: {
      int64_t x = a.as_int(), y = b.as_int();
      if (y == 0) return error(zero);
      if (x == std::numeric_limits<int64_t>::min() && y == -1) return overflow();
      return make_int(modulo ? x % y : x / y);
    }
    case Kind::kUint: {
      uint64_t x = a.as_uint(), y = b.as_uint();
      if (y == 0) return error(zero);
      return make_uint(modulo ? x % y : x / y);
    }
    case Kind::kDouble:
      if (modulo) return no_overload();
      return make_double(a.as_double() / b.as_double());
    default:
      return no_overload();
  }
}

Val contains_element(const Value& elem, const Value& container) {
  if (container.kind() == Kind::kList) {
    std::optional<Err> err;
    for (const Value& v : container.as_list()) {
      auto e = equals(elem, v);
      if (!e) {
        if (!err) err = e.error();
      } else if (*e) {
        return make_bool(true);
      }
    }
    if (err) return std::unexpected(*err);
    return make_bool(false);
  }
  if (container.kind() == Kind::kMap) return make_bool(container.as_map().find(elem) != nullptr);
  return no_overload();
}

// ---------------------------------------------------------------------------------------------------------
// Quantity and optional

Value make_quantity(QuantityData q) {
  return Value{std::make_shared<const QuantityData>(std::move(q))};
}

Val quantity_function(Fn fn, const std::vector<Value>& args) {
  if (fn == Fn::kQuantity || fn == Fn::kIsQuantity) {
    if (args[0].kind() != Kind::kString) return no_overload();
    auto q = parse_quantity(args[0].as_string());
    if (fn == Fn::kIsQuantity) return make_bool(q.has_value());
    if (!q) return error(q.error());
    return make_quantity(std::move(*q));
  }
  if (args[0].kind() != Kind::kQuantity) return no_overload();
  const QuantityData& q = args[0].as_quantity();
  switch (fn) {
    case Fn::kSign:
      return make_int(quantity_sign(q));
    case Fn::kAsApproximateFloat:
      return make_double(quantity_as_approximate_float(q));
    case Fn::kIsInteger:
      return make_bool(quantity_as_int64(q).has_value());
    case Fn::kAsInteger:
      if (auto i = quantity_as_int64(q)) return make_int(*i);
      return error("cannot convert value to integer");
    case Fn::kQuantityAdd:
    case Fn::kQuantitySub: {
      QuantityData other;
      if (args[1].kind() == Kind::kQuantity) {
        other = args[1].as_quantity();
      } else if (args[1].kind() == Kind::kInt) {
        other = quantity_from_int(args[1].as_int());
      } else {
        return no_overload();
      }
      auto r = quantity_add(q, other, fn == Fn::kQuantitySub);
      if (!r) return error(r.error());
      return make_quantity(std::move(*r));
    }
    default:
      break;
  }
  if (args.size() < 2 || args[1].kind() != Kind::kQuantity) return no_overload();
  int c = quantity_compare(q, args[1].as_quantity());
  switch (fn) {
    case Fn::kCompareTo:
      return make_int(c);
    case Fn::kIsGreaterThan:
      return make_bool(c > 0);
    case Fn::kIsLessThan:
      return make_bool(c < 0);
    default:
      return no_overload();
  }
}

bool is_zero_value(const Value& v) {
  switch (v.kind()) {
    case Kind::kNull:
      return true;
    case Kind::kBool:
      return !v.as_bool();
    case Kind::kInt:
      return v.as_int() == 0;
    case Kind::kUint:
      return v.as_uint() == 0;
    case Kind::kDouble:
      return v.as_double() == 0;
    case Kind::kString:
      return v.as_string().empty();
    case Kind::kBytes:
      return v.as_bytes().empty();
    case Kind::kList:
      return v.as_list().empty();
    case Kind::kMap:
      return v.as_map().entries.empty();
    case Kind::kDuration:
      return v.as_duration() == 0;
    case Kind::kTimestamp:
      return v.as_timestamp().seconds == kMinUnixSeconds && v.as_timestamp().nanos == 0;
    case Kind::kOptional:
      return !v.as_optional().value;
    default:
      return false;
  }
}

Val optional_function(Fn fn, const std::vector<Value>& args) {
  switch (fn) {
    case Fn::kOptionalOf:
      return make_opt(args[0]);
    case Fn::kOptionalNone:
      return make_opt(std::nullopt);
    case Fn::kOptionalOfNonZero:
      return is_zero_value(args[0]) ? make_opt(std::nullopt) : make_opt(args[0]);
    default:
      break;
  }
  if (args[0].kind() != Kind::kOptional) return no_overload();
  const auto& o = args[0].as_optional().value;
  switch (fn) {
    case Fn::kHasValue:
      return make_bool(o != nullptr);
    case Fn::kOptValue:
      if (!o) return error("optional.none() dereference");
      return *o;
    case Fn::kOrValue:
      return o ? *o : args[1];
    case Fn::kOr:
      if (args[1].kind() != Kind::kOptional) return no_overload();
      return o ? args[0] : args[1];
    default:
      return no_overload();
  }
}

int64_t work_of(const Value& v) {
  switch (v.kind()) {
    case Kind::kString:
      return static_cast<int64_t>(v.as_string().size());
    case Kind::kBytes:
      return static_cast<int64_t>(v.as_bytes().size());
    case Kind::kList:
      return static_cast<int64_t>(v.as_list().size()) * 4;
    case Kind::kMap:
      return static_cast<int64_t>(v.as_map().entries.size()) * 4;
    default:
      return 0;
  }
}

}  // namespace

const FunctionInfo* lookup_function(std::string_view name) {
  for (const auto& e : kFunctions) {
    if (e.name == name) return &e.info;
  }
  return nullptr;
}

Val call_function(const Node& n, std::vector<Value>& args, EvalContext& ctx) {
  int64_t work = 0;
  for (const Value& a : args) work += work_of(a);
  if (!ctx.charge(work / 32))
    return std::unexpected(Err{std::string(kCostExceededMessage), ErrKind::kCostExceeded});
  if (is_time_accessor(n.fn)) return convert_function(n.fn, args);
  switch (n.fn) {
    case Fn::kAdd:
      return add(args[0], args[1]);
    case Fn::kSub:
      return subtract(args[0], args[1]);
    case Fn::kMul:
      return multiply(args[0], args[1]);
    case Fn::kDiv:
      return divide(args[0], args[1], false);
    case Fn::kMod:
      return divide(args[0], args[1], true);
    case Fn::kNeg:
      if (args[0].kind() == Kind::kInt) {
        if (args[0].as_int() == std::numeric_limits<int64_t>::min()) return overflow();
        return make_int(-args[0].as_int());
      }
      if (args[0].kind() == Kind::kDouble) return make_double(-args[0].as_double());
      if (args[0].kind() == Kind::kDuration && args[0].as_duration() != std::numeric_limits<int64_t>::min()) {
        return make_duration(-args[0].as_duration());
      }
      return no_overload();
    case Fn::kNot:
      if (args[0].kind() != Kind::kBool) return no_overload();
      return make_bool(!args[0].as_bool());
    case Fn::kEq:
    case Fn::kNe: {
      auto e = equals(args[0], args[1]);
      if (!e) return std::unexpected(e.error());
      return make_bool(*e == (n.fn == Fn::kEq));
    }
    case Fn::kLt:
    case Fn::kLe:
    case Fn::kGt:
    case Fn::kGe: {
      auto c = compare(args[0], args[1]);
      if (!c) return std::unexpected(c.error());
      bool r = n.fn == Fn::kLt ? *c < 0 : n.fn == Fn::kLe ? *c <= 0 : n.fn == Fn::kGt ? *c > 0 : *c >= 0;
      return make_bool(r);
    }
    case Fn::kIn:
      return contains_element(args[0], args[1]);
    case Fn::kSize:
      switch (args[0].kind()) {
        case Kind::kString:
          return make_int(utf8_length(args[0].as_string()));
        case Kind::kBytes:
          return make_int(static_cast<int64_t>(args[0].as_bytes().size()));
        case Kind::kList:
          return make_int(static_cast<int64_t>(args[0].as_list().size()));
        case Kind::kMap:
          return make_int(static_cast<int64_t>(args[0].as_map().entries.size()));
        default:
          return no_overload();
      }
    case Fn::kInt:
    case Fn::kUint:
    case Fn::kDouble:
    case Fn::kString:
    case Fn::kBool:
    case Fn::kBytes:
    case Fn::kDyn:
    case Fn::kType:
    case Fn::kDuration:
    case Fn::kTimestamp:
      return convert_function(n.fn, args);
    case Fn::kQuantity:
    case Fn::kIsQuantity:
    case Fn::kSign:
    case Fn::kIsGreaterThan:
    case Fn::kIsLessThan:
    case Fn::kCompareTo:
    case Fn::kAsApproximateFloat:
    case Fn::kAsInteger:
    case Fn::kIsInteger:
    case Fn::kQuantityAdd:
    case Fn::kQuantitySub:
      return quantity_function(n.fn, args);
    case Fn::kOptionalOf:
    case Fn::kOptionalNone:
    case Fn::kOptionalOfNonZero:
    case Fn::kHasValue:
    case Fn::kOptValue:
    case Fn::kOrValue:
    case Fn::kOr:
      return optional_function(n.fn, args);
    case Fn::kUnknown:
      return error("undeclared reference to '" + n.name + "'");
    default:
      return call_collection_function(n, args, ctx);
  }
}

}  // namespace kubex::sim::cel::internal
