// x-kubernetes-validations: the rule runner (apply_rules) with kube-apiserver's field.Error messages, and the
// CRD-creation checks of rule lists (check_rules) with apiextensions validation's paths and messages.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/apiserver/cel.h"
#include "sim/apiserver/cel/internal.h"
#include "sim/apiserver/go_format.h"

namespace kubex::sim::cel {

using nlohmann::json;
using namespace internal;  // NOLINT(google-build-using-namespace): implementation file

namespace {

constexpr std::size_t kMaxMessageExpressionBytes =
    5 * 1024;  // celconfig.MaxEvaluatedMessageExpressionSizeBytes

std::string string_field(const json& rule, const char* key) {
  auto it = rule.find(key);
  return it != rule.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The rule as Go prints apiextensions.ValidationRule with %#v (pointer fields show their value).
std::string go_rule_repr(const json& rule) {
  auto ptr = [&](const char* key, const char* type) -> std::string {
    auto it = rule.find(key);
    if (it == rule.end() || it->is_null()) return std::string("(*") + type + ")(nil)";
    std::string shown = it->is_string() ? go_quote(it->get<std::string>())
                                        : it->dump(-1, ' ', false, json::error_handler_t::replace);
    return std::string("(*") + type + ")(" + shown + ")";
  };
  return "apiextensions.ValidationRule{Rule:" + go_quote(string_field(rule, "rule")) +
         ", Message:" + go_quote(string_field(rule, "message")) +
         ", MessageExpression:" + go_quote(string_field(rule, "messageExpression")) +
         ", Reason:" + ptr("reason", "apiextensions.FieldValueErrorReason") +
         ", FieldPath:" + go_quote(string_field(rule, "fieldPath")) +
         ", OptionalOldSelf:" + ptr("optionalOldSelf", "bool") + "}";
}

// Parses a rule's fieldPath (".a.b", ".a['b.c']", "['x']") into the path suffix kube-apiserver appends
// ("a.b", "a.b.c", "x"); nullopt when it is not a valid path.
std::optional<std::string> normalize_field_path(std::string_view p) {
  std::string out;
  std::size_t i = 0;
  if (p.empty()) return std::nullopt;
  while (i < p.size()) {
    std::string name;
    if (p[i] == '.') {
      ++i;
      std::size_t start = i;
      while (i < p.size() && p[i] != '.' && p[i] != '[' && p[i] != ']') ++i;
      name = std::string(p.substr(start, i - start));
      if (name.empty()) return std::nullopt;
    } else if (p[i] == '[') {
      ++i;
      if (i >= p.size() || p[i] != '\'') return std::nullopt;
      ++i;
      bool closed = false;
      while (i < p.size()) {
        char c = p[i++];
        if (c == '\'') {
          closed = true;
          break;
        }
        if (c == '\\') {
          if (i >= p.size()) return std::nullopt;
          char e = p[i++];
          static constexpr std::string_view kFrom = "abfnrtv'\\";
          static constexpr std::string_view kTo = "\a\b\f\n\r\t\v'\\";
          std::size_t k = kFrom.find(e);
          if (k == std::string_view::npos) return std::nullopt;
          name += kTo[k];
          continue;
        }
        name += c;
      }
      if (!closed || i >= p.size() || p[i] != ']') return std::nullopt;
      ++i;
    } else {
      return std::nullopt;
    }
    out = common::join_path(out, name);
  }
  return out;
}

std::string schema_type_of(const json& v) {
  switch (v.type()) {
    case json::value_t::object:
      return "object";
    case json::value_t::array:
      return "array";
    case json::value_t::string:
      return "string";
    case json::value_t::boolean:
      return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "integer";
    case json::value_t::number_float:
      return "number";
    default:
      return "null";
  }
}

RuleViolation violation(std::string reason, std::string field, std::string body, std::string bad_value) {
  RuleViolation v;
  v.reason = std::move(reason);
  v.field = std::move(field);
  v.message = v.field + ": " + body;
  v.bad_value = std::move(bad_value);
  return v;
}

RuleViolation invalid(const std::string& field, const std::string& shown_value, const std::string& detail) {
  return violation("FieldValueInvalid", field, "Invalid value: " + shown_value + ": " + detail, shown_value);
}

bool has_newline(std::string_view s) {
  return s.find('\n') != std::string_view::npos;
}

}  // namespace

std::string RuleViolation::body() const {
  std::string prefix = field + ": ";
  if (message.compare(0, prefix.size(), prefix) == 0) return message.substr(prefix.size());
  return message;
}

static std::vector<RuleViolation> apply_rules_impl(const json& rules, const json& self, const json* old_self,
                                                   const std::string& path, const RuleOptions& options) {
  std::vector<RuleViolation> out;
  if (self.is_null() || !rules.is_array() || rules.empty()) return out;
  const std::string field = path.empty() ? "<nil>" : path;
  const std::string type = go_quote(options.schema_type.empty() ? schema_type_of(self) : options.schema_type);
  if (options.remaining_budget != nullptr && *options.remaining_budget <= 0) {
    out.push_back(
        invalid(field, type,
                "validation failed due to running out of cost budget, no further validation rules will be "
                "run"));
    return out;
  }
  auto self_v = from_json(self);
  if (!self_v) {
    out.push_back(invalid(field, type, self_v.error()));
    return out;
  }
  std::optional<Value> old_v;
  if (old_self != nullptr && !old_self->is_null()) {
    auto o = from_json(*old_self);
    if (!o) {
      out.push_back(invalid(field, type, o.error()));
      return out;
    }
    old_v = std::move(*o);
  }
  const Value optional_old = make_opt(old_v);

  for (const json& rule : rules) {
    if (!rule.is_object()) continue;
    const std::string raw_rule = string_field(rule, "rule");
    const std::string rule_text = trim(raw_rule);
    if (rule_text.empty()) continue;
    const std::string message = trim(string_field(rule, "message"));
    const std::string rule_error = message.empty() ? rule_text : message;
    auto program = compile_cached(raw_rule);
    if (!program) {
      out.push_back(
          invalid(field, type, "rule compile error: compilation failed: " + program.error().message));
      continue;
    }
    const Program& p = **program;
    const bool optional_old_self = rule.value("optionalOldSelf", json(false)).is_boolean() &&
                                   rule.value("optionalOldSelf", json(false)).get<bool>();
    if (p.uses_old_self && !old_v && !optional_old_self) continue;  // transition rule on create

    int64_t limit = options.per_call_cost_limit;
    Outcome res = run(p, &*self_v, optional_old_self ? &optional_old : (old_v ? &*old_v : nullptr), limit);
    if (options.remaining_budget != nullptr) {
      if (res.cost > *options.remaining_budget) {
        out.push_back(invalid(
            field, type,
            "validation failed due to running out of cost budget, no further validation rules will be run"));
        *options.remaining_budget = -1;
        return out;
      }
      *options.remaining_budget -= res.cost;
    }
    if (!res.value) {
      const Err& e = res.value.error();
      if (e.kind == ErrKind::kCostExceeded) {
        out.push_back(
            invalid(field, type,
                    "'" + e.message +
                        "': no further validation rules will be run due to call cost exceeds limit for "
                        "rule: " +
                        rule_error));
        return out;
      }
      if (e.message.rfind("no such overload", 0) == 0) {
        out.push_back(invalid(field, type,
                              "'" + e.message +
                                  "': call arguments did not match a supported operator, function or macro "
                                  "signature for rule: " +
                                  rule_error));
      } else {
        out.push_back(invalid(field, type, e.message + " evaluating rule: " + rule_error));
      }
      continue;
    }
    if (res.value->kind() == Kind::kBool && res.value->as_bool()) continue;

    // The rule failed: where, and with which message.
    std::string target = field;
    if (std::string fp = string_field(rule, "fieldPath"); !fp.empty()) {
      if (auto norm = normalize_field_path(fp)) target = common::join_path(path, *norm);
    }
    std::string detail;
    if (std::string expr = string_field(rule, "messageExpression"); !trim(expr).empty()) {
      auto mp = compile_cached(expr);
      if (mp) {
        int64_t budget =
            options.remaining_budget != nullptr ? std::min(limit, *options.remaining_budget) : limit;
        Outcome m = run(**mp, &*self_v, old_v ? &*old_v : nullptr, budget);
        if (options.remaining_budget != nullptr) *options.remaining_budget -= m.cost;
        if (!m.value && m.value.error().kind == ErrKind::kCostExceeded) {
          out.push_back(
              invalid(target, type,
                      "messageExpression evaluation failed due to running out of cost budget, no further "
                      "validation rules will be run"));
          return out;
        }
        if (m.value && m.value->kind() == Kind::kString) {
          std::string s = trim(m.value->as_string());
          if (!s.empty() && s.size() <= kMaxMessageExpressionBytes && !has_newline(s)) detail = std::move(s);
        }
      }
    }
    if (detail.empty()) detail = message.empty() ? "failed rule: " + rule_text : message;

    std::string reason = string_field(rule, "reason");
    if (reason == "FieldValueForbidden") {
      out.push_back(violation(reason, target, "Forbidden: " + detail, ""));
    } else if (reason == "FieldValueRequired") {
      out.push_back(violation(reason, target, "Required value: " + detail, ""));
    } else if (reason == "FieldValueDuplicate") {
      out.push_back(violation(reason, target, "Duplicate value: " + type, type));
    } else {
      out.push_back(invalid(target, type, detail));
    }
  }
  return out;
}

static std::vector<RuleViolation> check_rules_impl(const json& rules, const std::string& schema_path) {
  std::vector<RuleViolation> schema_errors, cel_errors;
  if (!rules.is_array()) return schema_errors;
  for (std::size_t i = 0; i < rules.size(); ++i) {
    const json& rule = rules[i];
    const std::string base = schema_path + ".x-kubernetes-validations[" + std::to_string(i) + "]";
    if (!rule.is_object()) {
      schema_errors.push_back(
          violation("FieldValueRequired", base + ".rule", "Required value: rule is not specified", ""));
      continue;
    }
    const std::string rule_text = trim(string_field(rule, "rule"));
    const bool has_message = rule.contains("message");
    const std::string message = string_field(rule, "message");
    if (rule_text.empty()) {
      schema_errors.push_back(
          violation("FieldValueRequired", base + ".rule", "Required value: rule is not specified", ""));
    } else if (has_message && trim(message).empty()) {
      schema_errors.push_back(
          invalid(base + ".message", go_quote(message), "must be non-empty if specified"));
    } else if (has_newline(message)) {
      schema_errors.push_back(invalid(base + ".message", go_quote(message), "must not contain line breaks"));
    } else if (has_newline(rule_text) && trim(message).empty()) {
      schema_errors.push_back(
          violation("FieldValueRequired", base + ".message",
                    "Required value: message must be specified if rule contains line breaks", ""));
    }
    if (rule.contains("messageExpression") && trim(string_field(rule, "messageExpression")).empty()) {
      schema_errors.push_back(violation("FieldValueRequired", base + ".messageExpression",
                                        "Required value: messageExpression must be non-empty if specified",
                                        ""));
    }
    if (auto it = rule.find("reason"); it != rule.end() && !it->is_null()) {
      std::string r =
          it->is_string() ? it->get<std::string>() : it->dump(-1, ' ', false, json::error_handler_t::replace);
      if (r != "FieldValueInvalid" && r != "FieldValueForbidden" && r != "FieldValueRequired" &&
          r != "FieldValueDuplicate") {
        std::string shown = go_quote(r);
        schema_errors.push_back(
            violation("FieldValueNotSupported", base + ".reason",
                      "Unsupported value: " + shown +
                          ": supported values: \"FieldValueDuplicate\", \"FieldValueForbidden\", "
                          "\"FieldValueInvalid\", \"FieldValueRequired\"",
                      shown));
      }
    }
    if (rule.contains("fieldPath")) {
      std::string fp = string_field(rule, "fieldPath");
      if (trim(fp).empty()) {
        schema_errors.push_back(invalid(base + ".fieldPath", go_quote(fp), "must be non-empty if specified"));
      } else if (has_newline(fp)) {
        schema_errors.push_back(invalid(base + ".fieldPath", go_quote(fp), "must not contain line breaks"));
      } else if (!normalize_field_path(fp)) {
        schema_errors.push_back(invalid(base + ".fieldPath", go_quote(fp), "must be a valid path"));
      }
    }
    if (rule_text.empty()) continue;

    const std::string repr = go_rule_repr(rule);
    auto program = compile(string_field(rule, "rule"));
    if (!program) {
      cel_errors.push_back(invalid(base + ".rule", repr, "compilation failed: " + program.error().message));
    } else {
      auto kind = static_result_kind(*(*program)->root);
      if (kind && *kind != Kind::kBool) {
        cel_errors.push_back(invalid(base + ".rule", repr, "cel expression must evaluate to a bool"));
      }
    }
    std::string expr = string_field(rule, "messageExpression");
    if (!trim(expr).empty()) {
      auto mp = compile(expr);
      if (!mp) {
        cel_errors.push_back(invalid(base + ".messageExpression", repr,
                                     "messageExpression compilation failed: " + mp.error().message));
      } else if (auto kind = static_result_kind(*(*mp)->root); kind && *kind != Kind::kString) {
        cel_errors.push_back(
            invalid(base + ".messageExpression", repr, "messageExpression must evaluate to a string"));
      }
    }
    if (auto it = rule.find("optionalOldSelf");
        it != rule.end() && it->is_boolean() && program && !(*program)->uses_old_self) {
      cel_errors.push_back(invalid(base + ".optionalOldSelf", it->get<bool>() ? "true" : "false",
                                   "may not be set if oldSelf is not used in rule"));
    }
  }
  schema_errors.insert(schema_errors.end(), cel_errors.begin(), cel_errors.end());
  return schema_errors;
}

static std::vector<RuleViolation> internal_error(const std::string& field, const std::exception& e) {
  return {violation("InternalError", field.empty() ? "<nil>" : field,
                    std::string("Internal error: ") + e.what(), "")};
}

std::vector<RuleViolation> apply_rules(const json& rules, const json& self, const json* old_self,
                                       const std::string& path, const RuleOptions& options) {
  try {
    return apply_rules_impl(rules, self, old_self, path, options);
  } catch (const std::exception& e) {
    return internal_error(path, e);
  }
}

std::vector<RuleViolation> check_rules(const json& rules, const std::string& schema_path) {
  try {
    return check_rules_impl(rules, schema_path);
  } catch (const std::exception& e) {
    return internal_error(schema_path, e);
  }
}

common::Errors to_errors(const std::vector<RuleViolation>& violations) {
  common::Errors errs;
  for (const auto& v : violations) errs.add(v.field, v.body());
  return errs;
}

}  // namespace kubex::sim::cel
