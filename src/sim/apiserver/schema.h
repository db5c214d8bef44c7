// CustomResourceDefinition structural schemas: pruning, defaulting and OpenAPI v3 validation of custom
// resources the way kube-apiserver (k8s.io/apiextensions-apiserver + kube-openapi) does it, with the same
// field paths and error messages, so kubectl users and tests recognise them.
//
// A custom resource write goes through, in this order:
//   prune(obj)           unknown fields removed; the paths are what fieldValidation=Strict|Warn reports
//   apply_defaults(obj)  non-nullable nulls without a default dropped, then `default:` values filled in
//   validate(obj, old)   schema, embedded-resource, list-type and (via a hook) x-kubernetes-validations
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace kubex::sim {

// One validation failure, shaped like a k8s.io/apimachinery field.Error.
struct Cause {
  // FieldValueInvalid, FieldValueRequired, FieldValueNotSupported, FieldValueTypeInvalid, FieldValueTooLong,
  // FieldValueTooMany, FieldValueDuplicate, FieldValueForbidden.
  std::string reason;
  // "spec.replicas", "spec.precedence[1]"; "<nil>" for errors kube-apiserver reports without a path.
  std::string field;
  // Full text as field.Error.Error() prints it: `spec.replicas: Invalid value: "string": spec.replicas in
  // body must be of type integer: "string"`.
  std::string message;
  // The bad value as the message renders it (`"string"`, `0`, `{"type":"StaticPolicy"}`); empty if none.
  std::string bad_value;

  // The message without the leading "field: " — what a metav1.StatusCause carries as its message.
  std::string body() const;
};

// Evaluates x-kubernetes-validations (CEL) rules. Called once per present, non-null value whose schema node
// carries the extension, parents before children, after all schema errors were found and only if none of
// them blocks rule evaluation (as kube-apiserver does: otherwise validate() reports
// `<nil>: Invalid value: null: some validation rules were not checked ...` instead).
//   rules     the node's x-kubernetes-validations array, verbatim; the reference stays valid and at the same
//             address for the lifetime of the StructuralSchema, so it can key a cache of compiled programs
//   self      the value at that node
//   old_self  the correlated value in the old object (update), or nullptr: on create, for list items that are
//             not in an x-kubernetes-list-type=map list, under x-kubernetes-map-type=atomic maps, or when the
//             old object has nothing at that place
//   path      field path of the node ("spec.metrics", "spec.items[0]", "spec.labels[key]"; "" for the root)
//   out       append failures here
using ValidationRulesHook =
    std::function<void(const nlohmann::json& rules, const nlohmann::json& self,
                       const nlohmann::json* old_self, const std::string& path, std::vector<Cause>& out)>;

// A compiled openAPIV3Schema. Immutable after compile() apart from the rules hook; cheap to copy (shares the
// compiled tree); const member functions are safe to call concurrently.
class StructuralSchema {
 public:
  // Compiles spec.versions[].schema.openAPIV3Schema. Fails when the schema cannot be used: missing or unknown
  // `type`, arrays without `items`, invalid `pattern`s, contradictory extensions, defaults that do not
  // validate, ... `schema_path` prefixes the reported paths, e.g. "spec.versions[0].schema.openAPIV3Schema"
  // gives `spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty
  // for specified object fields`. The Error carries the first problem's path, and a message listing every
  // problem; `all_errors`, when given, receives each problem as a Cause.
  // Lenient where kube-apiserver rejects CRDs for reasons that do not affect processing (uniqueItems,
  // `type` inside allOf/anyOf/oneOf/not, unknown keywords, `x-kubernetes-preserve-unknown-fields: false`).
  // Defaults are pruned against their own schema node (kube-apiserver rejects unpruned defaults).
  static common::Result<StructuralSchema> compile(const nlohmann::json& open_api_v3_schema,
                                                  std::string_view schema_path = "openAPIV3Schema",
                                                  std::vector<Cause>* all_errors = nullptr);

  // Removes fields the schema does not specify, honouring x-kubernetes-preserve-unknown-fields,
  // additionalProperties and x-kubernetes-embedded-resource (which keeps apiVersion/kind/metadata untouched).
  // apiVersion/kind/metadata at the root are never pruned (the server handles metadata). Returns the removed
  // paths ("spec.foo", "spec.items[0].bar") sorted bytewise, exactly as kube-apiserver lists them in
  // `unknown field "..."` warnings and strict-decoding errors.
  std::vector<std::string> prune(nlohmann::json& obj) const;

  // Drops nulls the schema does not allow and that have no default, then applies `default:` values where a
  // field is absent (or a non-nullable null), recursing into defaulted values, list items and map values.
  // Call after prune().
  void apply_defaults(nlohmann::json& obj) const;

  // Every violation, in kube-apiserver's order: OpenAPI schema errors, embedded-resource apiVersion/kind
  // errors, x-kubernetes-list-type set/map duplicates, then the rules hook. `old_obj` (updates) is only
  // used to hand old_self to the rules hook. Call after apply_defaults().
  std::vector<Cause> validate(const nlohmann::json& obj, const nlohmann::json* old_obj = nullptr) const;

  // Plugs in the CEL evaluator. Without a hook, x-kubernetes-validations are ignored.
  void set_validation_rules_hook(ValidationRulesHook hook) { rules_hook_ = std::move(hook); }
  // True if any structural node carries x-kubernetes-validations.
  bool has_validation_rules() const;

  // The schema as given to compile(), for OpenAPI publishing and `kubectl explain`.
  const nlohmann::json& raw() const;

 private:
  struct Impl;  // the compiled tree (schema.cpp)
  explicit StructuralSchema(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

  std::shared_ptr<const Impl> impl_;
  ValidationRulesHook rules_hook_;
};

}  // namespace kubex::sim
