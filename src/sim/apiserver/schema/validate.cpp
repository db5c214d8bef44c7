// OpenAPI v3 validation (k8s.io/kube-openapi pkg/validation/validate) and its conversion to field errors
// (kubeOpenAPIResultToFieldErrors), with kube-openapi's messages.
#include "sim/apiserver/schema/passes.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/utf8.h"
#include "sim/apiserver/schema/causes.h"
#include "sim/apiserver/schema/formats.h"
#include "sim/apiserver/schema/path.h"

namespace kubex::sim::schema {
namespace {

// swag.IsFloat64AJSONInteger: an integral float within ±(2^53-1), with a little tolerance.
bool is_json_integer(double f) {
  constexpr double kMax = 9007199254740991.0;
  if (!std::isfinite(f) || f < -kMax || f > kMax) return false;
  const double r = std::round(f);
  if (f == r) return true;
  const double diff = std::fabs(f - r);
  return r == 0 ? diff < 1e-9 : diff / std::fabs(r) < 1e-9;
}

enum class Code : uint8_t {
  kGeneric,  // not an errors.Validation (composite anyOf/oneOf/allOf/not, range checks): reported without
             // path
  kInvalidType,
  kRequired,
  kTooLong,
  kTooShort,
  kPattern,
  kEnum,
  kMultipleOf,
  kMax,
  kMin,
  kUnique,
  kMaxItems,
  kMinItems,
  kTooFewProperties,
  kTooManyProperties,
  kUnallowedProperty,
  kMultipleOfMustBePositive,
};

struct OErr {
  Code code = Code::kGeneric;
  std::string name;     // kube-openapi path
  std::string message;  // kube-openapi message, also the de-duplication key
  json value;           // Go nil when null
  int64_t limit = 0;    // max for TooLong/MaxItems/TooManyProperties
  const std::vector<json>* enum_values = nullptr;
};

// validate.Result: errors de-duplicated by message, and a match count used to pick the "best" failing
// anyOf/oneOf branch.
struct VResult {
  std::vector<OErr> errors;
  int64_t match = 0;

  bool valid() const { return errors.empty(); }
  void add(OErr e) {
    for (const auto& x : errors) {
      if (x.message == e.message) return;
    }
    errors.push_back(std::move(e));
  }
  void merge(VResult&& o) {
    for (auto& e : o.errors) add(std::move(e));
    match += o.match;
  }
};

OErr generic_error(std::string message) {
  OErr e;
  e.message = std::move(message);
  return e;
}

OErr make_error(Code code, std::string name, std::string message, json value = nullptr) {
  OErr e;
  e.code = code;
  e.name = std::move(name);
  e.message = std::move(message);
  e.value = std::move(value);
  return e;
}

// The path in a message, computed once and only when needed.
class LazyName {
 public:
  explicit LazyName(const PathRef& p) : p_(p) {}
  const std::string& get() {
    if (!s_) s_ = openapi_name(p_);
    return *s_;
  }

 private:
  const PathRef& p_;
  std::optional<std::string> s_;
};

VResult validate_node(const Node& n, const json& d, const PathRef& path);

VResult check_type(const Node& n, const json& d, Kind k, LazyName& name) {
  VResult r;
  auto fail = [&](const std::string& type_name, const std::string& got) {
    r.errors.push_back(make_error(Code::kInvalidType, name.get(),
                                  name.get() + " in body must be of type " + type_name + ": " + go_quote(got),
                                  got));
    return r;
  };
  if (k == Kind::kNull) {
    if (n.types != 0 && !n.nullable) return fail(n.type_label, "null");
    r.match = 1;
    return r;
  }
  std::string sch_type, data_format;
  switch (k) {
    case Kind::kBool:
      sch_type = "boolean";
      break;
    case Kind::kInt:
      sch_type = "integer";
      data_format = "int64";
      break;
    case Kind::kFloat:
      sch_type = "number";
      data_format = "float64";
      break;
    case Kind::kString:
      sch_type = "string";
      break;
    case Kind::kArray:
      sch_type = "array";
      break;
    default:
      sch_type = "object";
      break;
  }
  const bool contains = (n.types & type_bit(sch_type)) != 0;
  const bool is_float_int = k == Kind::kFloat && (n.types & kTInteger) && is_json_integer(d.get<double>());
  const bool is_int_float = k == Kind::kInt && (n.types & kTNumber);
  const bool stringish = k == Kind::kString || k == Kind::kArray;
  if (!stringish && !n.format.empty() &&
      !(contains || data_format == n.format || is_float_int || is_int_float)) {
    return fail(n.format, data_format);
  }
  if (!(n.types & (kTNumber | kTInteger)) && !n.format.empty() && stringish) {
    r.match = 1;
    return r;
  }
  if (!(contains || is_float_int || is_int_float)) return fail(n.type_label, sch_type);
  r.match = 1;
  return r;
}

VResult check_schema_props(const Node& n, const json& d, const PathRef& path, LazyName& name) {
  VResult main;
  if (!n.any_of.empty()) {
    std::optional<VResult> best, first_success;
    for (const auto& sub : n.any_of) {
      VResult r = validate_node(*sub, d, path);
      if (r.valid()) {
        best.reset();
        first_success = std::move(r);
        break;
      }
      if (!best || r.match > best->match) best = std::move(r);
    }
    if (!first_success)
      main.add(generic_error(go_quote(name.get()) + " must validate at least one schema (anyOf)"));
    if (best) {
      main.merge(std::move(*best));
    } else if (first_success) {
      main.merge(std::move(*first_success));
    }
  }
  if (!n.one_of.empty()) {
    std::optional<VResult> best, first_success;
    int validated = 0;
    for (const auto& sub : n.one_of) {
      VResult r = validate_node(*sub, d, path);
      if (r.valid()) {
        ++validated;
        best.reset();
        if (!first_success) first_success = std::move(r);
        continue;
      }
      if (validated == 0 && (!best || r.match > best->match)) best = std::move(r);
    }
    if (validated != 1) {
      std::string why =
          validated == 0 ? "Found none valid" : "Found " + std::to_string(validated) + " valid alternatives";
      main.add(
          generic_error(go_quote(name.get()) + " must validate one and only one schema (oneOf). " + why));
      if (best) main.merge(std::move(*best));
    } else if (first_success) {
      main.merge(std::move(*first_success));
    }
  }
  if (!n.all_of.empty()) {
    std::size_t validated = 0;
    for (const auto& sub : n.all_of) {
      VResult r = validate_node(*sub, d, path);
      if (r.valid()) ++validated;
      main.merge(std::move(r));
    }
    if (validated != n.all_of.size()) {
      main.add(generic_error(go_quote(name.get()) + " must validate all the schemas (allOf)" +
                             (validated == 0 ? ". None validated" : "")));
    }
  }
  if (n.not_schema && validate_node(*n.not_schema, d, path).valid()) {
    main.add(generic_error(go_quote(name.get()) + " must not validate the schema (not)"));
  }
  main.match += 1;
  return main;
}

VResult check_string(const Node& n, const std::string& s, LazyName& name) {
  VResult r;
  if (n.max_length || n.min_length) {
    const int64_t len = static_cast<int64_t>(common::utf8_count(s));
    if (n.max_length && len > *n.max_length) {
      OErr e = make_error(
          Code::kTooLong, name.get(),
          name.get() + " in body should be at most " + std::to_string(*n.max_length) + " chars long", s);
      e.limit = *n.max_length;
      r.errors.push_back(std::move(e));
      return r;
    }
    if (n.min_length && len < *n.min_length) {
      r.errors.push_back(make_error(
          Code::kTooShort, name.get(),
          name.get() + " in body should be at least " + std::to_string(*n.min_length) + " chars long", s));
      return r;
    }
  }
  if (n.pattern_re) {
    bool matched = false;
    try {
      matched = std::regex_search(s, *n.pattern_re);
    } catch (const std::regex_error&) {
      matched = false;
    }
    if (!matched) {
      r.errors.push_back(make_error(Code::kPattern, name.get(),
                                    name.get() + " in body should match '" + n.pattern + "'", s));
    }
  }
  return r;
}

VResult check_format(const Node& n, const std::string& s, LazyName& name) {
  VResult r;
  bool ok = true;
  if (n.str_format == StrFormat::kDateTime) ok = is_date_time(s);
  if (n.str_format == StrFormat::kDate) ok = is_date(s);
  if (!ok) {
    r.errors.push_back(make_error(Code::kInvalidType, name.get(),
                                  name.get() + " in body must be of type " + n.format + ": " + go_quote(s),
                                  s));
  }
  return r;
}

std::string range_message(const Node& n, const char* prefix, const std::string& name) {
  std::string type = n.num_type == NumType::kInteger ? "integer" : "number";
  if (!n.num_format.empty()) {
    return std::string(prefix) + " value must be of type " + type + " with format " + n.num_format + " in " +
           name;
  }
  return std::string(prefix) + " value must be of type " + type + " (default format) in " + name;
}

VResult check_number(const Node& n, const json& d, Kind k, LazyName& name) {
  VResult res;
  const double f = d.get<double>();
  if (n.num_type != NumType::kNone && !fits_numeric_type(k, &d, f, n.num_type, n.num_format)) {
    res.add(generic_error(range_message(n, "Checked", name.get())));
  }
  VResult rmult, rmin, rmax;
  if (n.multiple_of) {
    const double factor = *n.multiple_of;
    if (!n.multiple_of_ok) rmult.add(generic_error(range_message(n, "MultipleOf", name.get())));
    if (n.multiple_of_ok && k == Kind::kInt && integral_int64(factor)) {
      const auto fi = static_cast<int64_t>(factor);
      const int64_t v = as_int(d);
      if (fi <= 0) {
        rmult.add(make_error(
            Code::kMultipleOfMustBePositive, name.get(),
            "factor MultipleOf declared for " + name.get() + " must be positive: " + std::to_string(fi), fi));
      } else if (v % fi != 0) {
        rmult.add(make_error(Code::kMultipleOf, name.get(),
                             name.get() + " in body should be a multiple of " + std::to_string(fi), v));
      }
    } else if (factor <= 0) {
      rmult.add(make_error(
          Code::kMultipleOfMustBePositive, name.get(),
          "factor MultipleOf declared for " + name.get() + " must be positive: " + go_float(factor),
          factor));
    } else {
      const double mult = factor < 1 ? 1 / factor * f : f / factor;
      if (!is_json_integer(mult)) {
        rmult.add(make_error(Code::kMultipleOf, name.get(),
                             name.get() + " in body should be a multiple of " + go_float(factor), f));
      }
    }
  }
  auto bound = [&](VResult& out, double b, bool ok, bool exclusive, bool is_max, const char* prefix) {
    if (!ok) out.add(generic_error(range_message(n, prefix, name.get())));
    std::string text;
    json value;
    bool failed = false;
    if (ok && k == Kind::kInt && integral_int64(b)) {
      const auto bi = static_cast<int64_t>(b);
      const int64_t v = as_int(d);
      failed = is_max ? (exclusive ? v >= bi : v > bi) : (exclusive ? v <= bi : v < bi);
      text = std::to_string(bi);
      value = v;
    } else {
      failed = is_max ? (exclusive ? f >= b : f > b) : (exclusive ? f <= b : f < b);
      text = go_float(b);
      value = k == Kind::kInt ? json(as_int(d)) : json(f);
    }
    if (!failed) return;
    std::string rel = is_max ? (exclusive ? "less than " : "less than or equal to ")
                             : (exclusive ? "greater than " : "greater than or equal to ");
    out.add(make_error(is_max ? Code::kMax : Code::kMin, name.get(),
                       name.get() + " in body should be " + rel + text, std::move(value)));
  };
  if (n.minimum) bound(rmin, *n.minimum, n.minimum_ok, n.exclusive_minimum, false, "Minimum boundary");
  if (n.maximum) bound(rmax, *n.maximum, n.maximum_ok, n.exclusive_maximum, true, "Maximum boundary");
  res.merge(std::move(rmult));
  res.merge(std::move(rmin));
  res.merge(std::move(rmax));
  res.match += 1;
  return res;
}

// reflect.DeepEqual on decoded JSON: int64 and float64 never compare equal.
bool go_deep_equal(const json& a, const json& b) {
  const Kind ka = kind_of(a), kb = kind_of(b);
  if (ka != kb) return false;
  switch (ka) {
    case Kind::kInt:
      return as_int(a) == as_int(b);
    case Kind::kFloat:
      return a.get<double>() == b.get<double>();
    case Kind::kArray:
      if (a.size() != b.size()) return false;
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (!go_deep_equal(a[i], b[i])) return false;
      }
      return true;
    case Kind::kObject: {
      if (a.size() != b.size()) return false;
      for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
        if (ia.key() != ib.key() || !go_deep_equal(*ia, *ib)) return false;
      }
      return true;
    }
    default:
      return a == b;
  }
}

VResult check_slice(const Node& n, const json& d, const PathRef& path, LazyName& name) {
  VResult res;
  if (n.items) {
    for (std::size_t i = 0; i < d.size(); ++i) res.merge(validate_node(*n.items, d[i], path.at(i)));
  }
  const auto size = static_cast<int64_t>(d.size());
  if (n.min_items && size < *n.min_items) {
    res.add(make_error(
        Code::kMinItems, name.get(),
        name.get() + " in body should have at least " + std::to_string(*n.min_items) + " items", size));
  }
  if (n.max_items && size > *n.max_items) {
    OErr e = make_error(
        Code::kMaxItems, name.get(),
        name.get() + " in body should have at most " + std::to_string(*n.max_items) + " items", size);
    e.limit = *n.max_items;
    res.add(std::move(e));
  }
  if (n.unique_items) {
    bool dup = false;
    for (std::size_t i = 1; i < d.size() && !dup; ++i) {
      for (std::size_t j = 0; j < i && !dup; ++j) dup = go_deep_equal(d[i], d[j]);
    }
    if (dup)
      res.add(make_error(Code::kUnique, name.get(), name.get() + " in body shouldn't contain duplicates"));
  }
  res.match += 1;
  return res;
}

// basicCommonValidator: the value converted to the enum member's type must equal it. Enum members are
// decoded as float64, so numbers compare by value; null never matches.
bool enum_matches(const json& member, const json& d) {
  if (d.is_null()) return false;
  if (member.is_number() && d.is_number()) return member.get<double>() == d.get<double>();
  return member == d;
}

VResult check_enum(const Node& n, const json& d, LazyName& name) {
  VResult r;
  if (n.enum_values.empty()) return r;
  for (const auto& m : n.enum_values) {
    if (enum_matches(m, d)) return r;
  }
  std::string list;
  for (const auto& m : n.enum_values) list += (list.empty() ? "" : " ") + m.dump();
  OErr e = make_error(Code::kEnum, name.get(), name.get() + " in body should be one of [" + list + "]", d);
  e.enum_values = &n.enum_values;
  r.errors.push_back(std::move(e));
  return r;
}

VResult check_object(const Node& n, const json& d, const PathRef& path, LazyName& name) {
  VResult res;
  const auto size = static_cast<int64_t>(d.size());
  if (n.min_properties && size < *n.min_properties) {
    res.add(make_error(
        Code::kTooFewProperties, name.get(),
        name.get() + " in body should have at least " + std::to_string(*n.min_properties) + " properties",
        size));
  }
  if (n.max_properties && size > *n.max_properties) {
    OErr e = make_error(
        Code::kTooManyProperties, name.get(),
        name.get() + " in body should have at most " + std::to_string(*n.max_properties) + " properties",
        size);
    e.limit = *n.max_properties;
    res.add(std::move(e));
  }
  if (n.additional == Additional::kForbid) {
    for (const auto& [k, v] : d.items()) {
      if (n.property(k) == nullptr) {
        res.add(make_error(Code::kUnallowedProperty, name.get(),
                           name.get() + "." + k + " in body is a forbidden property", k));
      }
    }
  } else if (n.additional == Additional::kSchema) {
    for (const auto& [k, v] : d.items()) {
      if (n.property(k) == nullptr) res.merge(validate_node(*n.additional_schema, v, path.key(k)));
    }
  }
  if (!n.properties.empty()) {
    for (const auto& [k, v] : d.items()) {
      if (const Node* prop = n.property(k)) res.merge(validate_node(*prop, v, path.field(k)));
    }
  }
  for (const auto& k : n.required) {
    if (!d.contains(k)) {
      std::string req = name.get() + "." + k;
      res.add(make_error(Code::kRequired, req, req + " in body is required"));
    }
  }
  return res;
}

// SchemaValidator.Validate: the validators that apply to the value's kind, in kube-openapi's order.
VResult validate_node(const Node& n, const json& d, const PathRef& path) {
  const Kind k = kind_of(d);
  LazyName name(path);
  VResult res;
  const bool type_applies = n.types != 0 || !n.format.empty();
  if (k == Kind::kNull) {
    res.merge(check_type(n, d, k, name));
    res.merge(check_enum(n, d, name));
    return res;
  }
  auto step = [&](VResult r) {
    res.merge(std::move(r));
    res.match += 1;
  };
  if (type_applies) step(check_type(n, d, k, name));
  step(check_schema_props(n, d, path, name));
  if (k == Kind::kString) {
    const auto& s = d.get_ref<const std::string&>();
    step(check_string(n, s, name));
    if (n.str_format != StrFormat::kNone) step(check_format(n, s, name));
  }
  if (k == Kind::kInt || k == Kind::kFloat) step(check_number(n, d, k, name));
  if (k == Kind::kArray) step(check_slice(n, d, path, name));
  step(check_enum(n, d, name));
  if (k == Kind::kObject) step(check_object(n, d, path, name));
  res.match += 1;
  return res;
}

// kubeOpenAPIResultToFieldErrors. `base` is the field.Path handed to it ("" = nil, printed "<nil>").
void append_causes(const VResult& r, const std::string& base, std::vector<Cause>& out) {
  const std::string nil_path = base.empty() ? "<nil>" : base;
  for (const auto& e : r.errors) {
    std::string field = nil_path;
    if (e.code != Code::kGeneric && !e.name.empty() && e.name != ".") {
      std::string_view n = e.name;
      if (n.front() == '.') n.remove_prefix(1);
      field = child_path(base, n);
    }
    const json& value = e.value;
    const json shown = value.is_null() ? json("") : value;
    switch (e.code) {
      case Code::kRequired:
        out.push_back(required_cause(field, ""));
        break;
      case Code::kEnum: {
        std::vector<std::string> supported;
        for (const auto& m : *e.enum_values)
          supported.push_back(m.is_string() ? m.get<std::string>() : go_json(m));
        out.push_back(not_supported_cause(field, value, supported));
        break;
      }
      case Code::kTooLong:
        out.push_back(too_long_cause(field, e.limit));
        break;
      case Code::kMaxItems:
      case Code::kTooManyProperties:
        out.push_back(too_many_cause(field, as_int(value), e.limit));
        break;
      case Code::kInvalidType:
        out.push_back(invalid_cause(field, shown, e.message, "FieldValueTypeInvalid"));
        break;
      default:
        out.push_back(invalid_cause(field, shown, e.message));
        break;
    }
  }
}

}  // namespace

void validate_openapi(const Node& n, const json& x, const std::string& base, std::vector<Cause>& out) {
  append_causes(validate_node(n, x, PathRef{}), base, out);
}

}  // namespace kubex::sim::schema
