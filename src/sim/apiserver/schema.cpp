// Structural schemas for custom resources. The behaviour follows k8s.io/apiextensions-apiserver
// (pkg/apiserver/schema: pruning, defaulting, listtype, objectmeta) and k8s.io/kube-openapi/pkg/validation
// (validators, messages), and errors are rendered like k8s.io/apimachinery field.Error. Where Go's formatting
// leaks into messages (%q, %v of floats, json.Marshal) it comes from go_format.h.
#include "sim/apiserver/schema.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>
#include <unordered_map>
#include <utility>

#include "common/utf8.h"
#include "sim/apiserver/go_format.h"

namespace kubex::sim {
namespace {

using nlohmann::json;

// Shortest round-trip scientific form, the identity of a float64 among list items.
std::string scientific(double v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  return std::string(buf, res.ptr);
}

// swag.IsFloat64AJSONInteger: an integral float within ±(2^53-1), with a little tolerance.
bool is_json_integer(double f) {
  constexpr double kMax = 9007199254740991.0;
  if (!std::isfinite(f) || f < -kMax || f > kMax) return false;
  const double r = std::round(f);
  if (f == r) return true;
  const double diff = std::fabs(f - r);
  return r == 0 ? diff < 1e-9 : diff / std::fabs(r) < 1e-9;
}

// ---------------------------------------------------------------------------------------------------------
// field.Error construction
// ---------------------------------------------------------------------------------------------------------

Cause make_cause(std::string reason, std::string field, const std::string& body, std::string bad_value = {}) {
  Cause c;
  c.reason = std::move(reason);
  c.message = field + ": " + body;
  c.field = std::move(field);
  c.bad_value = std::move(bad_value);
  return c;
}

std::string with_detail(std::string s, const std::string& detail) {
  if (!detail.empty()) s += ": " + detail;
  return s;
}

Cause required_cause(std::string field, const std::string& detail) {
  return make_cause("FieldValueRequired", std::move(field), with_detail("Required value", detail));
}

Cause forbidden_cause(std::string field, const std::string& detail) {
  return make_cause("FieldValueForbidden", std::move(field), with_detail("Forbidden", detail));
}

Cause invalid_rendered(std::string field, std::string bad, const std::string& detail,
                       std::string reason = "FieldValueInvalid") {
  std::string body = with_detail("Invalid value: " + bad, detail);
  return make_cause(std::move(reason), std::move(field), body, std::move(bad));
}

Cause invalid_cause(std::string field, const json& value, const std::string& detail,
                    std::string reason = "FieldValueInvalid") {
  return invalid_rendered(std::move(field), go_value(value), detail, std::move(reason));
}

Cause not_supported_cause(std::string field, const json& value, const std::vector<std::string>& supported) {
  std::string bad = go_value(value);
  std::string detail;
  for (const auto& s : supported) {
    detail += detail.empty() ? "supported values: " : ", ";
    detail += go_quote(s);
  }
  return make_cause("FieldValueNotSupported", std::move(field),
                    with_detail("Unsupported value: " + bad, detail), bad);
}

Cause duplicate_cause(std::string field, const json& value) {
  std::string bad = go_value(value);
  return make_cause("FieldValueDuplicate", std::move(field), "Duplicate value: " + bad, bad);
}

Cause too_long_cause(std::string field, int64_t max) {
  std::string detail = "may not be more than " + std::to_string(max) + (max == 1 ? " byte" : " bytes");
  return make_cause("FieldValueTooLong", std::move(field), "Too long: " + detail);
}

Cause too_many_cause(std::string field, int64_t actual, int64_t max) {
  std::string detail = "must have at most " + std::to_string(max) + (max == 1 ? " item" : " items");
  std::string bad = std::to_string(actual);
  return make_cause("FieldValueTooMany", std::move(field), "Too many: " + bad + ": " + detail, bad);
}

// ---------------------------------------------------------------------------------------------------------
// Paths
// ---------------------------------------------------------------------------------------------------------

// A field path built on the stack while walking a value, rendered only when an error needs it.
struct PathRef {
  enum class Seg : uint8_t { kRoot, kField, kKey, kIndex };
  const PathRef* parent = nullptr;
  Seg seg = Seg::kRoot;
  std::string_view name;
  std::size_t index = 0;

  PathRef field(std::string_view n) const { return {this, Seg::kField, n, 0}; }
  PathRef key(std::string_view n) const { return {this, Seg::kKey, n, 0}; }
  PathRef at(std::size_t i) const { return {this, Seg::kIndex, {}, i}; }
};

// kube-openapi's path: properties join with "." (none at the root), additionalProperties keys always get a
// leading "." (".foo" at the root), list items "[i]".
std::string openapi_name(const PathRef& p) {
  if (p.seg == PathRef::Seg::kRoot) return {};
  std::string parent = openapi_name(*p.parent);
  switch (p.seg) {
    case PathRef::Seg::kField:
      if (parent.empty()) return std::string(p.name);
      return parent + "." + std::string(p.name);
    case PathRef::Seg::kKey:
      return parent + "." + std::string(p.name);
    default:
      return parent + "[" + std::to_string(p.index) + "]";
  }
}

// field.Path: Child "a.b", Key "a[k]", Index "a[0]".
std::string field_path(const PathRef& p) {
  if (p.seg == PathRef::Seg::kRoot) return {};
  std::string parent = field_path(*p.parent);
  switch (p.seg) {
    case PathRef::Seg::kField:
      if (parent.empty()) return std::string(p.name);
      return parent + "." + std::string(p.name);
    case PathRef::Seg::kKey:
      return parent + "[" + std::string(p.name) + "]";
    default:
      return parent + "[" + std::to_string(p.index) + "]";
  }
}

std::string child_path(const std::string& parent, std::string_view name) {
  return parent.empty() ? std::string(name) : parent + "." + std::string(name);
}

// ---------------------------------------------------------------------------------------------------------
// The compiled schema
// ---------------------------------------------------------------------------------------------------------

enum TypeBit : uint8_t {
  kTObject = 1,
  kTArray = 2,
  kTString = 4,
  kTInteger = 8,
  kTNumber = 16,
  kTBoolean = 32,
};

uint8_t type_bit(std::string_view t) {
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
Kind kind_of(const json& v) {
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

int64_t as_int(const json& v) {
  return v.is_number_unsigned() ? static_cast<int64_t>(v.get<uint64_t>()) : v.get<int64_t>();
}

bool is_meta_field(std::string_view k) {
  return k == "apiVersion" || k == "kind" || k == "metadata";
}

const json* find_member(const json& obj, const std::string& k) {
  auto it = obj.find(k);
  return it == obj.end() ? nullptr : &*it;
}

// ---------------------------------------------------------------------------------------------------------
// Pruning (pkg/apiserver/schema/pruning)
// ---------------------------------------------------------------------------------------------------------

class Pruner {
 public:
  explicit Pruner(std::vector<std::string>* out) : out_(out) {}

  void prune(json& x, const Node* s, bool embedded) {
    if (s != nullptr && s->preserve_unknown) {
      skip_prune(x, s, embedded);
      return;
    }
    if (x.is_object()) {
      if (s == nullptr) {
        for (const auto& [k, v] : x.items()) record(k);
        x = json::object();
        return;
      }
      std::vector<std::string> drop;
      for (auto it = x.begin(); it != x.end(); ++it) {
        const std::string& k = it.key();
        if (embedded && is_meta_field(k)) continue;
        if (const Node* prop = s->property(k)) {
          Mark m = push_key(k);
          prune(*it, prop, prop->embedded);
          pop(m);
        } else if (s->additional != Additional::kNone) {
          const Node* ap = s->additional_schema.get();
          Mark m = push_key(k);
          prune(*it, ap, ap != nullptr && ap->embedded);
          pop(m);
        } else {
          record(k);
          drop.push_back(k);
        }
      }
      for (const auto& k : drop) x.erase(k);
    } else if (x.is_array()) {
      const Node* items = s != nullptr ? s->items.get() : nullptr;
      for (std::size_t i = 0; i < x.size(); ++i) {
        Mark m = push_index(i);
        prune(x[i], items, items != nullptr && items->embedded);
        pop(m);
      }
    }
  }

 private:
  using Mark = std::size_t;

  // x-kubernetes-preserve-unknown-fields: keep unknown fields, but prune below specified ones.
  void skip_prune(json& x, const Node* s, bool embedded) {
    if (s == nullptr) return;
    if (x.is_object()) {
      for (auto it = x.begin(); it != x.end(); ++it) {
        const std::string& k = it.key();
        if (embedded && is_meta_field(k)) continue;
        if (const Node* prop = s->property(k)) {
          Mark m = push_key(k);
          prune(*it, prop, prop->embedded);
          pop(m);
        } else if (s->additional != Additional::kNone) {
          const Node* ap = s->additional_schema.get();
          Mark m = push_key(k);
          prune(*it, ap, ap != nullptr && ap->embedded);
          pop(m);
        }
      }
    } else if (x.is_array()) {
      const Node* items = s->items.get();
      for (std::size_t i = 0; i < x.size(); ++i) {
        Mark m = push_index(i);
        skip_prune(x[i], items, items != nullptr && items->embedded);
        pop(m);
      }
    }
  }

  Mark push_key(const std::string& k) {
    Mark m = path_.size();
    if (out_ != nullptr) {
      if (!path_.empty()) path_ += '.';
      path_ += k;
    }
    return m;
  }
  Mark push_index(std::size_t i) {
    Mark m = path_.size();
    if (out_ != nullptr) path_ += "[" + std::to_string(i) + "]";
    return m;
  }
  void pop(Mark m) { path_.resize(m); }
  void record(const std::string& k) {
    if (out_ != nullptr) out_->push_back(path_.empty() ? k : path_ + "." + k);
  }

  std::vector<std::string>* out_;
  std::string path_;
};

// ---------------------------------------------------------------------------------------------------------
// Defaulting (pkg/apiserver/schema/defaulting)
// ---------------------------------------------------------------------------------------------------------

const Node* field_schema(const Node* s, std::string_view k) {
  if (s == nullptr) return nullptr;
  if (const Node* p = s->property(k)) return p;
  return s->additional == Additional::kSchema ? s->additional_schema.get() : nullptr;
}

// Nothing can be dropped below a value without schema, so the walk stops there (Go's recursion is a no-op).
void prune_non_nullable_nulls(json& x, const Node* s) {
  if (s == nullptr) return;
  if (x.is_object()) {
    std::vector<std::string> drop;
    for (auto it = x.begin(); it != x.end(); ++it) {
      const Node* fs = field_schema(s, it.key());
      if (it->is_null() && fs != nullptr && !fs->nullable && !fs->default_value) {
        drop.push_back(it.key());
      } else {
        prune_non_nullable_nulls(*it, fs);
      }
    }
    for (const auto& k : drop) x.erase(k);
  } else if (x.is_array()) {
    for (auto& e : x) prune_non_nullable_nulls(e, s->items.get());
  }
}

bool non_nullable_null(const json& x, const Node* s) {
  return x.is_null() && s != nullptr && !s->nullable;
}

void apply_defaults_to(json& x, const Node* s) {
  if (s == nullptr) return;
  if (x.is_object()) {
    for (const auto& [k, prop] : s->properties) {
      if (!prop->default_value) continue;
      auto it = x.find(k);
      if (it == x.end() || non_nullable_null(*it, prop.get())) x[k] = *prop->default_value;
    }
    for (auto it = x.begin(); it != x.end(); ++it) {
      if (const Node* prop = s->property(it.key())) {
        apply_defaults_to(*it, prop);
      } else if (s->additional != Additional::kNone) {
        const Node* ap = s->additional_schema.get();
        if (non_nullable_null(*it, ap) && ap->default_value) *it = *ap->default_value;
        apply_defaults_to(*it, ap);
      }
    }
  } else if (x.is_array()) {
    const Node* items = s->items.get();
    for (auto& e : x) {
      if (non_nullable_null(e, items) && items->default_value) e = *items->default_value;
      apply_defaults_to(e, items);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Formats (kube-openapi strfmt)
// ---------------------------------------------------------------------------------------------------------

bool two_digits(std::string_view s, std::size_t at) {
  return at + 2 <= s.size() && std::isdigit(static_cast<unsigned char>(s[at])) &&
         std::isdigit(static_cast<unsigned char>(s[at + 1]));
}

int num_at(std::string_view s, std::size_t at, std::size_t len) {
  int v = 0;
  for (std::size_t i = at; i < at + len; ++i) v = v * 10 + (s[i] - '0');
  return v;
}

// time.Parse("2006-01-02", s) == nil
bool is_date(std::string_view s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
  if (!two_digits(s, 0) || !two_digits(s, 2) || !two_digits(s, 5) || !two_digits(s, 8)) return false;
  const int year = num_at(s, 0, 4), month = num_at(s, 5, 2), day = num_at(s, 8, 2);
  if (month < 1 || month > 12 || day < 1) return false;
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int max_day = kDays[month - 1];
  if (month == 2 && year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)) max_day = 29;
  return day <= max_day;
}

bool is_zone(std::string_view z) {
  if (z == "z") return true;
  return z.size() == 6 && (z[0] == '+' || z[0] == '-') && two_digits(z, 1) && z[3] == ':' && two_digits(z, 4);
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// strfmt.IsDateTime: lower-cased, split at "t", a full-date and then
// ^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$ with hh<=23, mm<=59, ss<=59.
bool is_date_time(std::string_view str) {
  if (str.size() < 4) return false;
  std::string lower(str);
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string_view s = lower;
  auto t1 = s.find('t');
  if (t1 == std::string_view::npos || !is_date(s.substr(0, t1))) return false;
  std::string_view time = s.substr(t1 + 1);
  time = time.substr(0, time.find('t'));
  if (time.size() < 9 || !two_digits(time, 0) || time[2] != ':' || !two_digits(time, 3) || time[5] != ':' ||
      !two_digits(time, 6)) {
    return false;
  }
  if (num_at(time, 0, 2) > 23 || num_at(time, 3, 2) > 59 || num_at(time, 6, 2) > 59) return false;
  std::string_view tail = time.substr(8);
  if (is_zone(tail)) return true;
  // One character (not a newline), digits, then the zone.
  std::size_t i = 0;
  if (tail.empty() || tail[0] == '\n') return false;
  common::utf8_next(tail, i);
  std::string_view rest = tail.substr(i);
  if (!rest.empty() && rest.back() == 'z' && all_digits(rest.substr(0, rest.size() - 1))) return true;
  return rest.size() > 6 && is_zone(rest.substr(rest.size() - 6)) &&
         all_digits(rest.substr(0, rest.size() - 6));
}

// Formats kube-apiserver keeps on string (or untyped) schemas, normalised without "-".
bool is_supported_string_format(std::string_view normalized) {
  static constexpr std::string_view kFormats[] = {
      "bsonobjectid", "uri",        "email",    "hostname",     "ipv4",       "ipv6", "cidr",
      "mac",          "uuid",       "uuid3",    "uuid4",        "uuid5",      "isbn", "isbn10",
      "isbn13",       "creditcard", "ssn",      "hexcolor",     "rgbcolor",   "byte", "password",
      "date",         "duration",   "datetime", "k8sshortname", "k8slongname"};
  return std::find(std::begin(kFormats), std::end(kFormats), normalized) != std::end(kFormats);
}

// ---------------------------------------------------------------------------------------------------------
// OpenAPI validation (kube-openapi pkg/validation/validate)
// ---------------------------------------------------------------------------------------------------------

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

// IsValueValidAgainstRange: does the value (or a bound) fit the schema's single numeric type and format?
bool fits_numeric_type(Kind k, const json* v, double f, NumType t, const std::string& fmt) {
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

std::string range_message(const Node& n, const char* prefix, const std::string& name) {
  std::string type = n.num_type == NumType::kInteger ? "integer" : "number";
  if (!n.num_format.empty()) {
    return std::string(prefix) + " value must be of type " + type + " with format " + n.num_format + " in " +
           name;
  }
  return std::string(prefix) + " value must be of type " + type + " (default format) in " + name;
}

bool integral_int64(double b) {
  return std::isfinite(b) && b == std::trunc(b) && b >= -9223372036854775808.0 && b < 9223372036854775808.0;
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

// ---------------------------------------------------------------------------------------------------------
// Embedded resources (pkg/apiserver/schema/objectmeta/validation.go), apiVersion and kind only
// ---------------------------------------------------------------------------------------------------------

std::vector<std::string> dns1035_label_errors(const std::string& value) {
  std::vector<std::string> errs;
  if (value.size() > 63) errs.push_back("must be no more than 63 characters");
  bool ok = !value.empty() && value.front() >= 'a' && value.front() <= 'z';
  for (char c : value) ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-');
  ok = ok && value.back() != '-';
  if (!ok) {
    errs.push_back(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
        "alphabetic "
        "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
        "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')");
  }
  return errs;
}

void validate_embedded_resource(const json& x, const PathRef& p, std::vector<Cause>& out) {
  const std::string base = field_path(p);
  const std::string api_version_path = child_path(base, "apiVersion");
  const std::string kind_path = child_path(base, "kind");
  if (!x.contains("apiVersion")) out.push_back(required_cause(api_version_path, ""));
  if (!x.contains("kind")) out.push_back(required_cause(kind_path, ""));
  if (const json* v = find_member(x, "apiVersion")) {
    if (!v->is_string()) {
      out.push_back(invalid_cause(api_version_path, *v, "must be a string"));
    } else if (const auto& s = v->get_ref<const std::string&>(); s.empty()) {
      out.push_back(invalid_cause(api_version_path, *v, "must not be empty"));
    } else if (s != "/" && std::count(s.begin(), s.end(), '/') > 1) {
      out.push_back(invalid_cause(api_version_path, *v, "unexpected GroupVersion string: " + s));
    }
  }
  if (const json* v = find_member(x, "kind")) {
    if (!v->is_string()) {
      out.push_back(invalid_cause(kind_path, *v, "must be a string"));
    } else if (const auto& s = v->get_ref<const std::string&>(); s.empty()) {
      out.push_back(invalid_cause(kind_path, *v, "must not be empty"));
    } else {
      std::string lower = s;
      for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      auto errs = dns1035_label_errors(lower);
      if (!errs.empty()) {
        std::string joined;
        for (const auto& e : errs) joined += (joined.empty() ? "" : ",") + e;
        out.push_back(
            invalid_cause(kind_path, *v, "may have mixed case, but should otherwise match: " + joined));
      }
    }
  }
}

void walk_embedded(const Node* s, const json& x, const PathRef& p, std::vector<Cause>& out) {
  if (s == nullptr || !s->subtree_embedded) return;
  if (x.is_object()) {
    if (s->embedded) validate_embedded_resource(x, p, out);
    for (const auto& [k, v] : x.items()) {
      if (const Node* prop = s->property(k)) {
        walk_embedded(prop, v, p.field(k), out);
      } else if (s->additional != Additional::kNone) {
        walk_embedded(s->additional_schema.get(), v, p.key(k), out);
      }
    }
  } else if (x.is_array()) {
    for (std::size_t i = 0; i < x.size(); ++i) walk_embedded(s->items.get(), x[i], p.at(i), out);
  }
}

// ---------------------------------------------------------------------------------------------------------
// x-kubernetes-list-type set/map uniqueness (pkg/apiserver/schema/listtype)
// ---------------------------------------------------------------------------------------------------------

// Identity of a list element as Go compares it: scalars by dynamic type and value, compound values by JSON.
std::string identity(const json& v) {
  switch (kind_of(v)) {
    case Kind::kNull:
      return "n";
    case Kind::kBool:
      return v.get<bool>() ? "b1" : "b0";
    case Kind::kInt:
      return "i" + std::to_string(as_int(v));
    case Kind::kFloat:
      return "f" + scientific(v.get<double>());
    case Kind::kString:
      return "s" + v.get<std::string>();
    default:
      return "c" + go_json(v);
  }
}

// Indices of the first repeated appearance of each non-unique identity.
std::vector<std::size_t> non_unique(const std::vector<std::string>& ids) {
  std::unordered_map<std::string_view, int> seen;
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (++seen[ids[i]] == 2) out.push_back(i);
  }
  return out;
}

void validate_list_map(const Node& s, const json& arr, const PathRef& p, std::vector<Cause>& out) {
  for (std::size_t i = 0; i < arr.size(); ++i) {
    if (!arr[i].is_object() && !arr[i].is_null()) {
      out.push_back(
          invalid_cause(field_path(p.at(i)), arr[i], "must be an object for an array of list-type map"));
      return;
    }
  }
  if (arr.size() <= 1) return;
  std::vector<json> keys;
  std::vector<std::string> ids;
  for (const auto& x : arr) {
    json key = json::object();
    for (const auto& k : s.list_map_keys) {
      if (const json* v = x.is_object() ? find_member(x, k) : nullptr) key[k] = *v;
    }
    if (s.list_map_keys.size() == 1) {
      ids.push_back(key.empty() ? std::string("u") : identity(key.begin().value()));
    } else {
      ids.push_back(identity(key));
    }
    keys.push_back(std::move(key));
  }
  for (std::size_t i : non_unique(ids)) out.push_back(duplicate_cause(field_path(p.at(i)), keys[i]));
}

void walk_lists(const Node* s, const json& x, const PathRef& p, std::vector<Cause>& out);

void walk_list_object(const Node* s, const json& x, const PathRef& p, std::vector<Cause>& out) {
  if (s->additional == Additional::kSchema) {
    for (const auto& [k, v] : x.items()) walk_lists(s->additional_schema.get(), v, p.key(k), out);
  }
  if (!s->properties.empty()) {
    for (const auto& [k, v] : x.items()) {
      if (const Node* prop = s->property(k)) walk_lists(prop, v, p.field(k), out);
    }
  }
}

void walk_lists(const Node* s, const json& x, const PathRef& p, std::vector<Cause>& out) {
  if (s == nullptr || !s->subtree_list) return;
  if (x.is_object()) {
    walk_list_object(s, x, p, out);
  } else if (x.is_array()) {
    if (s->list_type == ListType::kSet) {
      std::vector<std::string> ids;
      ids.reserve(x.size());
      for (const auto& e : x) ids.push_back(identity(e));
      for (std::size_t i : non_unique(ids)) out.push_back(duplicate_cause(field_path(p.at(i)), x[i]));
    } else if (s->list_type == ListType::kMap) {
      validate_list_map(*s, x, p, out);
    }
    if (s->items) {
      for (std::size_t i = 0; i < x.size(); ++i) walk_lists(s->items.get(), x[i], p.at(i), out);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// x-kubernetes-validations hook
// ---------------------------------------------------------------------------------------------------------

const json* correlated_item(const Node& s, const json* old, const json& item) {
  if (s.list_type != ListType::kMap || old == nullptr || !old->is_array() || !item.is_object())
    return nullptr;
  for (const auto& candidate : *old) {
    if (!candidate.is_object()) continue;
    bool same = true;
    for (const auto& k : s.list_map_keys) {
      const json* a = find_member(item, k);
      const json* b = find_member(candidate, k);
      same = same && ((a == nullptr && b == nullptr) || (a != nullptr && b != nullptr && *a == *b));
    }
    if (same) return &candidate;
  }
  return nullptr;
}

void walk_rules(const Node* s, const json& x, const json* old, const PathRef& p,
                const ValidationRulesHook& hook, std::vector<Cause>& out) {
  if (s == nullptr || !s->subtree_rules || x.is_null()) return;
  if (s->rules != nullptr) hook(*s->rules, x, old, field_path(p), out);
  if (x.is_object()) {
    const json* old_obj = old != nullptr && old->is_object() && !s->map_atomic ? old : nullptr;
    for (const auto& [k, v] : x.items()) {
      const json* old_child = old_obj != nullptr ? find_member(*old_obj, k) : nullptr;
      if (const Node* prop = s->property(k)) {
        walk_rules(prop, v, old_child, p.field(k), hook, out);
      } else if (s->additional == Additional::kSchema) {
        walk_rules(s->additional_schema.get(), v, old_child, p.key(k), hook, out);
      }
    }
  } else if (x.is_array() && s->items) {
    for (std::size_t i = 0; i < x.size(); ++i) {
      walk_rules(s->items.get(), x[i], correlated_item(*s, old, x[i]), p.at(i), hook, out);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Compilation
// ---------------------------------------------------------------------------------------------------------

enum class Level : uint8_t { kRoot, kItems, kField };

class Compiler {
 public:
  std::vector<Cause> errors;

  std::unique_ptr<Node> compile(const json& j, const std::string& path, Level level, bool structural) {
    auto n = std::make_unique<Node>();
    if (!j.is_object()) {
      errors.push_back(invalid_cause(path, j, "must be a schema object"));
      return n;
    }
    Node& node = *n;
    Keywords kw{j, path, *this};

    std::string type;
    bool type_invalid = false;
    if (auto t = kw.str("type")) {
      type = *t;
      if (!type.empty() && type_bit(type) == 0) {
        errors.push_back(not_supported_cause(path + ".type", type,
                                             {"array", "boolean", "integer", "number", "object", "string"}));
        type_invalid = true;
        type.clear();
      }
    }
    node.nullable = kw.boolean("nullable").value_or(false);
    node.int_or_string = kw.boolean("x-kubernetes-int-or-string").value_or(false);
    node.preserve_unknown = kw.boolean("x-kubernetes-preserve-unknown-fields").value_or(false);
    node.embedded = kw.boolean("x-kubernetes-embedded-resource").value_or(false);
    if (node.int_or_string) {
      node.types = kTInteger | kTString;
      node.type_label = "integer,string";
    } else if (!type.empty()) {
      node.types = type_bit(type);
      node.type_label = type;
    }
    if (auto f = kw.str("format")) set_format(node, *f, node.int_or_string ? std::string() : type);

    node.maximum = kw.number("maximum");
    node.minimum = kw.number("minimum");
    node.multiple_of = kw.number("multipleOf");
    node.exclusive_maximum = kw.boolean("exclusiveMaximum").value_or(false);
    node.exclusive_minimum = kw.boolean("exclusiveMinimum").value_or(false);
    node.max_length = kw.count("maxLength");
    node.min_length = kw.count("minLength");
    node.max_items = kw.count("maxItems");
    node.min_items = kw.count("minItems");
    node.max_properties = kw.count("maxProperties");
    node.min_properties = kw.count("minProperties");
    node.unique_items = kw.boolean("uniqueItems").value_or(false);
    if (auto p = kw.str("pattern"); p && !p->empty()) {
      node.pattern = *p;
      std::string why;
      node.pattern_re = compile_pattern(*p, why);
      if (!node.pattern_re) {
        errors.push_back(
            invalid_cause(path + ".pattern", *p, "must be a valid regular expression, but isn't: " + why));
      }
    }
    if (const json* e = kw.get("enum")) {
      if (e->is_array()) {
        node.enum_values.assign(e->begin(), e->end());
      } else {
        errors.push_back(invalid_cause(path + ".enum", *e, "must be an array"));
      }
    }
    if (const json* r = kw.get("required")) {
      if (r->is_array() && std::all_of(r->begin(), r->end(), [](const json& x) { return x.is_string(); })) {
        for (const auto& x : *r) node.required.push_back(x.get<std::string>());
      } else {
        errors.push_back(invalid_cause(path + ".required", *r, "must be an array of strings"));
      }
    }

    // Structure.
    if (const json* props = kw.get("properties")) {
      if (props->is_object()) {
        for (const auto& [k, v] : props->items()) {
          node.properties.emplace(k, compile(v, path + ".properties[" + k + "]", Level::kField, structural));
        }
      } else {
        errors.push_back(invalid_cause(path + ".properties", *props, "must be an object"));
      }
    }
    bool has_items = false;
    if (const json* items = kw.get("items")) {
      if (items->is_object()) {
        node.items = compile(*items, path + ".items", Level::kItems, structural);
        has_items = true;
      } else {
        errors.push_back(invalid_cause(path + ".items", *items, "must be a schema, but is an array"));
      }
    }
    if (const json* ap = kw.get("additionalProperties")) {
      if (ap->is_boolean()) {
        node.additional = ap->get<bool>() ? Additional::kAllow : Additional::kForbid;
      } else if (ap->is_object()) {
        node.additional = Additional::kSchema;
        node.additional_schema = compile(*ap, path + ".additionalProperties", Level::kField, structural);
      } else {
        errors.push_back(invalid_cause(path + ".additionalProperties", *ap, "must be a boolean or a schema"));
      }
    }
    compile_list(kw, "allOf", level, node.all_of);
    compile_list(kw, "anyOf", level, node.any_of);
    compile_list(kw, "oneOf", level, node.one_of);
    if (const json* no = kw.get("not")) node.not_schema = compile(*no, path + ".not", level, false);

    if (!node.properties.empty() &&
        (node.additional == Additional::kForbid || node.additional == Additional::kSchema)) {
      errors.push_back(forbidden_cause(path + ".additionalProperties",
                                       "additionalProperties and properties are mutual exclusive"));
    }
    if (structural) check_structural(kw, node, type, type_invalid, has_items, level);

    // Numeric bounds that do not fit the type (kube-openapi then reports an error for every value).
    node.num_type = node.int_or_string  ? NumType::kNone
                    : type == "integer" ? NumType::kInteger
                    : type == "number"  ? NumType::kNumber
                                        : NumType::kNone;
    if (node.num_type != NumType::kNone) node.num_format = node.format;
    auto fits = [&](const std::optional<double>& b) {
      return !b || fits_numeric_type(Kind::kFloat, nullptr, *b, node.num_type, node.num_format);
    };
    node.maximum_ok = fits(node.maximum);
    node.minimum_ok = fits(node.minimum);
    node.multiple_of_ok = fits(node.multiple_of);

    node.subtree_rules = node.rules != nullptr;
    node.subtree_embedded = node.embedded;
    node.subtree_list = node.list_type == ListType::kSet || node.list_type == ListType::kMap;
    for (const Node* child : {node.items.get(), node.additional_schema.get()}) absorb(node, child);
    for (const auto& [k, child] : node.properties) absorb(node, child.get());

    if (structural) {
      if (const json* def = kw.get("default"); def != nullptr && !def->is_null()) {
        json value = *def;
        Pruner(nullptr).prune(value, &node, node.embedded);
        append_causes(validate_node(node, value, PathRef{}), path + ".default", errors);
        node.default_value = std::move(value);
      }
    }
    return n;
  }

 private:
  struct Keywords {
    const json& j;
    const std::string& path;
    Compiler& c;

    const json* get(const char* k) const {
      const json* v = find_member(j, k);
      return v == nullptr || v->is_null() ? nullptr : v;
    }
    std::optional<bool> boolean(const char* k) const {
      const json* v = get(k);
      if (v == nullptr) return std::nullopt;
      if (!v->is_boolean()) {
        c.errors.push_back(invalid_cause(path + "." + k, *v, "must be a boolean"));
        return std::nullopt;
      }
      return v->get<bool>();
    }
    std::optional<std::string> str(const char* k) const {
      const json* v = get(k);
      if (v == nullptr) return std::nullopt;
      if (!v->is_string()) {
        c.errors.push_back(invalid_cause(path + "." + k, *v, "must be a string"));
        return std::nullopt;
      }
      return v->get<std::string>();
    }
    std::optional<double> number(const char* k) const {
      const json* v = get(k);
      if (v == nullptr) return std::nullopt;
      if (!v->is_number()) {
        c.errors.push_back(invalid_cause(path + "." + k, *v, "must be a number"));
        return std::nullopt;
      }
      return v->get<double>();
    }
    std::optional<int64_t> count(const char* k) const {
      const json* v = get(k);
      if (v == nullptr) return std::nullopt;
      const bool ok = (v->is_number_unsigned() && !is_big_unsigned(*v)) ||
                      (v->is_number_integer() && v->get<int64_t>() >= 0) ||
                      (v->is_number_float() && v->get<double>() >= 0 && integral_int64(v->get<double>()));
      if (!ok) {
        c.errors.push_back(invalid_cause(path + "." + k, *v, "must be a non-negative integer"));
        return std::nullopt;
      }
      return v->is_number_float() ? static_cast<int64_t>(v->get<double>()) : as_int(*v);
    }
  };

  static void absorb(Node& n, const Node* child) {
    if (child == nullptr) return;
    n.subtree_rules = n.subtree_rules || child->subtree_rules;
    n.subtree_embedded = n.subtree_embedded || child->subtree_embedded;
    n.subtree_list = n.subtree_list || child->subtree_list;
  }

  void compile_list(const Keywords& kw, const char* key, Level level,
                    std::vector<std::unique_ptr<Node>>& out) {
    const json* list = kw.get(key);
    if (list == nullptr) return;
    if (!list->is_array()) {
      errors.push_back(invalid_cause(kw.path + "." + key, *list, "must be an array of schemas"));
      return;
    }
    for (std::size_t i = 0; i < list->size(); ++i) {
      out.push_back(compile((*list)[i], kw.path + "." + key + "[" + std::to_string(i) + "]", level, false));
    }
  }

  static void set_format(Node& n, const std::string& format, const std::string& type) {
    if (format.empty()) return;
    if (type.empty() || type == "string") {
      std::string normalized;
      for (char c : format) {
        if (c != '-') normalized += c;
      }
      if (!is_supported_string_format(normalized)) return;
      n.format = format;
      n.str_format = normalized == "datetime" ? StrFormat::kDateTime
                     : normalized == "date"   ? StrFormat::kDate
                                              : StrFormat::kOther;
    } else if ((type == "integer" && (format == "int32" || format == "int64")) ||
               (type == "number" && (format == "float" || format == "double"))) {
      n.format = format;
    }
  }

  // ECMA-262 patterns, evaluated with the linear-memory (BFS) executor so long inputs cannot exhaust the
  // stack. Go's leading (?i) is accepted; back-references are rejected as Go's RE2 does.
  static std::optional<std::regex> compile_pattern(const std::string& pattern, std::string& why) {
    std::string src = pattern;
    auto flags = std::regex::ECMAScript | std::regex::optimize | std::regex_constants::__polynomial;
    if (src.starts_with("(?i)")) {
      src.erase(0, 4);
      flags |= std::regex::icase;
    }
    for (std::size_t i = 0; i + 1 < src.size(); ++i) {
      if (src[i] != '\\') continue;
      if (src[i + 1] >= '1' && src[i + 1] <= '9') {
        why = std::string("error parsing regexp: invalid escape sequence: `\\") + src[i + 1] + "`";
        return std::nullopt;
      }
      ++i;
    }
    try {
      return std::regex(src, flags);
    } catch (const std::regex_error& e) {
      why = e.what();
      return std::nullopt;
    }
  }

  void check_structural(const Keywords& kw, Node& n, const std::string& type, bool type_invalid,
                        bool has_items, Level level) {
    const std::string& path = kw.path;
    if (type == "array" && !has_items) errors.push_back(required_cause(path + ".items", "must be specified"));
    if (n.embedded && type != "object") {
      const std::string why = "must be object if x-kubernetes-embedded-resource is true";
      errors.push_back(type.empty() ? required_cause(path + ".type", why)
                                    : invalid_cause(path + ".type", type, why));
    } else if (type.empty() && !type_invalid && !n.int_or_string && !n.preserve_unknown) {
      const char* why = level == Level::kRoot    ? "must not be empty at the root"
                        : level == Level::kItems ? "must not be empty for specified array items"
                                                 : "must not be empty for specified object fields";
      errors.push_back(required_cause(path + ".type", why));
    }
    if (n.embedded && n.additional != Additional::kNone) {
      errors.push_back(forbidden_cause(path + ".additionalProperties",
                                       "must not be used if x-kubernetes-embedded-resource is set"));
    }
    if (level == Level::kRoot && !type.empty() && type != "object") {
      errors.push_back(invalid_cause(path + ".type", type, "must be object at the root"));
    }
    if (level == Level::kRoot && n.additional != Additional::kNone) {
      errors.push_back(forbidden_cause(path + ".additionalProperties", "must not be used at the root"));
    }
    if (n.embedded && !n.preserve_unknown && n.properties.empty()) {
      errors.push_back(required_cause(path + ".properties",
                                      "must not be empty if x-kubernetes-embedded-resource is true without "
                                      "x-kubernetes-preserve-unknown-fields"));
    }
    if (n.int_or_string && n.preserve_unknown) {
      errors.push_back(invalid_cause(path + ".x-kubernetes-preserve-unknown-fields", true,
                                     "must be false if x-kubernetes-int-or-string is true"));
    }
    if (n.int_or_string && n.embedded) {
      errors.push_back(invalid_cause(path + ".x-kubernetes-embedded-resource", true,
                                     "must be false if x-kubernetes-int-or-string is true"));
    }

    if (auto mt = kw.str("x-kubernetes-map-type")) {
      if (type != "object") {
        const std::string why = "must be object if x-kubernetes-map-type is specified";
        errors.push_back(type.empty() ? required_cause(path + ".type", why)
                                      : invalid_cause(path + ".type", type, why));
      }
      if (*mt != "atomic" && *mt != "granular") {
        errors.push_back(not_supported_cause(path + ".x-kubernetes-map-type", *mt, {"atomic", "granular"}));
      }
      n.map_atomic = *mt == "atomic";
    }
    std::optional<std::string> lt = kw.str("x-kubernetes-list-type");
    if (const json* keys = kw.get("x-kubernetes-list-map-keys")) {
      if (keys->is_array() &&
          std::all_of(keys->begin(), keys->end(), [](const json& x) { return x.is_string(); })) {
        for (const auto& k : *keys) n.list_map_keys.push_back(k.get<std::string>());
      } else {
        errors.push_back(
            invalid_cause(path + ".x-kubernetes-list-map-keys", *keys, "must be an array of strings"));
      }
    }
    if (lt) {
      if (type != "array") {
        const std::string why = "must be array if x-kubernetes-list-type is specified";
        errors.push_back(type.empty() ? required_cause(path + ".type", why)
                                      : invalid_cause(path + ".type", type, why));
      }
      if (*lt == "atomic") {
        n.list_type = ListType::kAtomic;
      } else if (*lt == "set") {
        n.list_type = ListType::kSet;
      } else if (*lt == "map") {
        n.list_type = ListType::kMap;
      } else {
        errors.push_back(
            not_supported_cause(path + ".x-kubernetes-list-type", *lt, {"atomic", "set", "map"}));
      }
    }
    if (!n.list_map_keys.empty()) {
      if (!lt) {
        errors.push_back(required_cause(path + ".x-kubernetes-list-type",
                                        "must be map if x-kubernetes-list-map-keys is non-empty"));
      } else if (*lt != "map") {
        errors.push_back(invalid_cause(path + ".x-kubernetes-list-type", *lt,
                                       "must be map if x-kubernetes-list-map-keys is non-empty"));
      }
    }
    if (n.list_type == ListType::kMap) check_list_map(kw, n, has_items);

    if (const json* rules = kw.get("x-kubernetes-validations"); rules != nullptr && !rules->empty()) {
      n.rules = rules;
    }
  }

  void check_list_map(const Keywords& kw, Node& n, bool has_items) {
    const std::string& path = kw.path;
    if (n.list_map_keys.empty()) {
      errors.push_back(required_cause(path + ".x-kubernetes-list-map-keys",
                                      "must not be empty if x-kubernetes-list-type is map"));
    }
    if (!has_items) {
      errors.push_back(
          required_cause(path + ".items", "must have a schema if x-kubernetes-list-type is map"));
      return;
    }
    const json& items = *find_member(kw.j, "items");
    const json* item_type = find_member(items, "type");
    if (item_type == nullptr || *item_type != "object") {
      errors.push_back(invalid_cause(path + ".items.type", item_type != nullptr ? *item_type : json(""),
                                     "must be object if parent array's x-kubernetes-list-type is map"));
      return;
    }
    const json* keys = find_member(kw.j, "x-kubernetes-list-map-keys");
    std::vector<std::string> seen;
    for (const auto& k : n.list_map_keys) {
      if (const Node* prop = n.items->property(k)) {
        if (prop->types & (kTArray | kTObject)) {
          errors.push_back(
              invalid_cause(path + ".items.properties[" + k + "].type", *item_type,
                            "must be a scalar type if parent array's x-kubernetes-list-type is map"));
        }
      } else {
        errors.push_back(invalid_cause(path + ".x-kubernetes-list-map-keys", *keys,
                                       "entries must all be names of item properties"));
      }
      if (std::find(seen.begin(), seen.end(), k) != seen.end()) {
        errors.push_back(
            invalid_cause(path + ".x-kubernetes-list-map-keys", *keys, "must not contain duplicate entries"));
      }
      seen.push_back(k);
    }
  }
};

}  // namespace

struct StructuralSchema::Impl {
  json raw;
  std::unique_ptr<Node> root;
};

std::string Cause::body() const {
  if (message.size() >= field.size() + 2 && message.compare(0, field.size(), field) == 0) {
    return message.substr(field.size() + 2);
  }
  return message;
}

common::Result<StructuralSchema> StructuralSchema::compile(const nlohmann::json& open_api_v3_schema,
                                                           std::string_view schema_path,
                                                           std::vector<Cause>* all_errors) {
  auto impl = std::make_shared<Impl>();
  impl->raw = open_api_v3_schema;
  Compiler compiler;
  const std::string path(schema_path);
  if (impl->raw.is_null()) {
    compiler.errors.push_back(required_cause(path, ""));
  } else {
    impl->root = compiler.compile(impl->raw, path, Level::kRoot, true);
  }
  if (!compiler.errors.empty()) {
    std::string message = compiler.errors.front().body();
    for (std::size_t i = 1; i < compiler.errors.size(); ++i) message += "; " + compiler.errors[i].message;
    std::string first_path = compiler.errors.front().field;
    if (all_errors != nullptr) *all_errors = std::move(compiler.errors);
    return common::fail(std::move(message), std::move(first_path));
  }
  if (all_errors != nullptr) all_errors->clear();
  return StructuralSchema(std::move(impl));
}

std::vector<std::string> StructuralSchema::prune(nlohmann::json& obj) const {
  std::vector<std::string> removed;
  Pruner(&removed).prune(obj, impl_->root.get(), /*embedded=*/true);
  std::sort(removed.begin(), removed.end());
  return removed;
}

void StructuralSchema::apply_defaults(nlohmann::json& obj) const {
  prune_non_nullable_nulls(obj, impl_->root.get());
  apply_defaults_to(obj, impl_->root.get());
}

std::vector<Cause> StructuralSchema::validate(const nlohmann::json& obj,
                                              const nlohmann::json* old_obj) const {
  std::vector<Cause> out;
  const Node* root = impl_->root.get();
  const PathRef top;
  append_causes(validate_node(*root, obj, top), "", out);
  walk_embedded(root, obj, top, out);
  if (obj.is_object() && root->subtree_list) walk_list_object(root, obj, top, out);
  if (rules_hook_ && root->subtree_rules) {
    const bool blocked = std::any_of(out.begin(), out.end(), [](const Cause& c) {
      return c.reason == "FieldValueNotSupported" || c.reason == "FieldValueRequired" ||
             c.reason == "FieldValueTooLong" || c.reason == "FieldValueTooMany" ||
             c.reason == "FieldValueTypeInvalid";
    });
    if (blocked) {
      out.push_back(invalid_rendered("<nil>", "null",
                                     "some validation rules were not checked because the object was invalid; "
                                     "correct the existing errors to complete validation"));
    } else {
      walk_rules(root, obj, old_obj, top, rules_hook_, out);
    }
  }
  return out;
}

bool StructuralSchema::has_validation_rules() const {
  return impl_->root->subtree_rules;
}

const nlohmann::json& StructuralSchema::raw() const {
  return impl_->raw;
}

}  // namespace kubex::sim
