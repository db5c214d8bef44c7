// Compilation of an openAPIV3Schema into Nodes, with the structural-schema checks kube-apiserver makes when a
// CRD is written (paths and messages of apiextensions validation).
#include "sim/apiserver/schema/passes.h"

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/apiserver/schema/causes.h"
#include "sim/apiserver/schema/formats.h"

namespace kubex::sim::schema {
namespace {

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
        prune_unknown(value, &node, node.embedded, nullptr);
        validate_openapi(node, value, path + ".default", errors);
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

std::unique_ptr<Node> compile_node(const json& schema, const std::string& path, std::vector<Cause>& errors) {
  Compiler compiler;
  auto root = compiler.compile(schema, path, Level::kRoot, true);
  errors = std::move(compiler.errors);
  return root;
}

}  // namespace kubex::sim::schema
