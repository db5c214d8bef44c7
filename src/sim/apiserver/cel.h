// A CEL interpreter for CustomResourceDefinition `x-kubernetes-validations` rules, following the CEL language
// definition (github.com/google/cel-spec doc/langdef.md) and cel-go's runtime as kube-apiserver configures
// it: heterogeneous equality, cross-type numeric ordering, optional types, cel-go ext strings (v2) and sets,
// the Kubernetes quantity, lists and regex libraries, and two-variable comprehensions.
//
// Values come from JSON without a schema: integers are `int` (`uint` only above INT64_MAX), other numbers
// `double`, objects `map` (null-valued fields count as absent, as for schema objects in Kubernetes, and
// `self.x__dash__y` / `self.__namespace__` also find the escaped property names). Expressions are not
// type-checked against a schema, so what kube-apiserver rejects at CRD creation (`undefined field`, most
// overload mismatches) surfaces here as a runtime error instead. See cel.cpp for the full list of deviations.
//
// Nothing here throws; recursion is bounded (expression nesting, value nesting) and evaluation has a cost
// budget, so a pathological rule or object cannot hang or crash the server.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace kubex::sim::cel {

// Compiled expression: immutable, safe to evaluate from several threads at once.
class Program;

// Per-evaluation cost limit, in evaluation steps (roughly one per operator/function call/comprehension
// iteration, more for work proportional to string and list sizes). kube-apiserver's per-call limit is 1e6
// cost units; this budget is in the same order of magnitude.
inline constexpr int64_t kDefaultCostLimit = 1'000'000;
// Total budget for one object's rules (kube-apiserver: RuntimeCELCostBudget).
inline constexpr int64_t kDefaultTotalCostBudget = 10'000'000;

// Parses and checks `expression`. The error message is cel-go's issue format, e.g.
// "ERROR: <input>:1:6: Syntax error: unexpected end of input\n | self.\n | .....^".
common::Result<std::shared_ptr<const Program>> compile(std::string_view expression);

// The expression text the program was compiled from.
std::string_view source(const Program& program);

// True if the expression references oldSelf (a transition rule).
bool references_old_self(const Program& program);

struct EvalOptions {
  int64_t cost_limit = kDefaultCostLimit;
  // Bind oldSelf as optional(T) — optional.of(old) or optional.none() when `old_self` is null — as
  // kube-apiserver does for rules with `optionalOldSelf: true`.
  bool optional_old_self = false;
  // If set, receives the cost the evaluation used.
  int64_t* cost_used = nullptr;
};

// Evaluates with `self` (and optionally `oldSelf`). The result as JSON: bool, number (int → integer,
// uint → unsigned, double → float), string, list, map (keys rendered as strings), null; durations,
// timestamps and quantities render as strings ("90s", RFC 3339, plain decimal), optional values as their
// value or null. Errors carry the CEL error text, e.g. "no such key: foo", "division by zero",
// "operation cancelled: actual cost limit exceeded".
common::Result<nlohmann::json> evaluate(const Program& program, const nlohmann::json& self,
                                        const nlohmann::json* old_self, const EvalOptions& options = {});

// Convenience for validation rules: compiles through a process-wide cache, evaluates, requires a bool.
common::Result<bool> evaluate_rule(std::string_view rule, const nlohmann::json& self,
                                   const nlohmann::json* old_self, const EvalOptions& options = {});

// ---------------------------------------------------------------------------------------------------------
// x-kubernetes-validations

// One failed rule, shaped like a k8s.io/apimachinery field.Error (the same shape as sim::Cause).
struct RuleViolation {
  std::string reason;  // FieldValueInvalid, FieldValueForbidden, FieldValueRequired, FieldValueDuplicate
  std::string field;   // "spec.enablement.gpu.requests.floor"
  // Full text as kube-apiserver prints it:
  // `spec.enablement.gpu.requests: Invalid value: "object": floor must be less than or equal to ceiling`.
  std::string message;
  std::string bad_value;  // `"object"`; empty when the message shows none (Forbidden, Required)

  // The message without the leading "field: ".
  std::string body() const;
};

struct RuleOptions {
  int64_t per_call_cost_limit = kDefaultCostLimit;
  // Shared budget across calls for one object (kube-apiserver's RuntimeCELCostBudget). When given it is
  // decreased by the cost used; once exhausted, rules are no longer run and one violation says so.
  int64_t* remaining_budget = nullptr;
  // The node's schema type as the message shows it ("object", "array", "string", "integer", "number",
  // "boolean"); derived from `self` when empty.
  std::string schema_type;
};

// Applies one `x-kubernetes-validations` list (JSON array of {rule, message, messageExpression, reason,
// fieldPath, optionalOldSelf}) to `self`, the value at field path `path`, the way kube-apiserver (1.30-1.34)
// reports failures:
//   failing rule        `<path>[.<fieldPath>]: Invalid value: "<type>": <message>`
//                       (`Forbidden: <message>`, `Required value: <message>`, `Duplicate value: "<type>"`
//                       with `reason`), message from messageExpression (falling back to `message` when it
//                       fails or is not a usable string), else `message`, else `failed rule: <rule>`
//   evaluation error    `<path>: Invalid value: "<type>": <error> evaluating rule: <message or rule>`
//   cost limit          `... 'operation cancelled: actual cost limit exceeded': no further validation rules
//                       will be run due to call cost exceeds limit for rule: <message or rule>` (stops)
//   rule that does not compile   `<path>: Invalid value: "<type>": rule compile error: compilation failed:
//   ...`
// Transition rules (referencing oldSelf) are skipped when `old_self` is null unless `optionalOldSelf: true`.
// A null `self` is not validated. Programs are cached process-wide by rule text.
std::vector<RuleViolation> apply_rules(const nlohmann::json& rules, const nlohmann::json& self,
                                       const nlohmann::json* old_self, const std::string& path,
                                       const RuleOptions& options = {});

// CRD-creation check of one `x-kubernetes-validations` list found at `schema_path` (e.g.
// "spec.versions[0].schema.openAPIV3Schema.properties[spec]"), with kube-apiserver's paths and messages:
//   `<schema_path>.x-kubernetes-validations[0].rule: Invalid value:
//   apiextensions.ValidationRule{Rule:"self.",
//    Message:"", ...}: compilation failed: ERROR: <input>:1:6: Syntax error: ...`
// plus `rule: Required value: rule is not specified`, empty or multi-line messages, unsupported reasons,
// invalid fieldPaths, messageExpressions that do not compile, and optionalOldSelf without oldSelf.
std::vector<RuleViolation> check_rules(const nlohmann::json& rules, const std::string& schema_path);

// Violations as house-style errors (path = field, message = body()).
common::Errors to_errors(const std::vector<RuleViolation>& violations);

}  // namespace kubex::sim::cel
