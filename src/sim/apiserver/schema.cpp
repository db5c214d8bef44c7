// Structural schemas for custom resources: StructuralSchema runs the passes of schema/ (compile, prune,
// default, validate, list types, the CEL hook) in kube-apiserver's order. The behaviour follows
// k8s.io/apiextensions-apiserver (pkg/apiserver/schema) and k8s.io/kube-openapi/pkg/validation, and errors
// are rendered like k8s.io/apimachinery field.Error; Go's formatting where it leaks into messages comes
// from go_format.h.
#include "sim/apiserver/schema.h"

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "sim/apiserver/schema/causes.h"
#include "sim/apiserver/schema/node.h"
#include "sim/apiserver/schema/passes.h"

namespace kubex::sim {

using nlohmann::json;

struct StructuralSchema::Impl {
  json raw;
  std::unique_ptr<schema::Node> root;
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
  std::vector<Cause> errors;
  const std::string path(schema_path);
  if (impl->raw.is_null()) {
    errors.push_back(schema::required_cause(path, ""));
  } else {
    impl->root = schema::compile_node(impl->raw, path, errors);
  }
  if (!errors.empty()) {
    std::string message = errors.front().body();
    for (std::size_t i = 1; i < errors.size(); ++i) message += "; " + errors[i].message;
    std::string first_path = errors.front().field;
    if (all_errors != nullptr) *all_errors = std::move(errors);
    return common::fail(std::move(message), std::move(first_path));
  }
  if (all_errors != nullptr) all_errors->clear();
  return StructuralSchema(std::move(impl));
}

std::vector<std::string> StructuralSchema::prune(nlohmann::json& obj) const {
  std::vector<std::string> removed;
  schema::prune_unknown(obj, impl_->root.get(), /*embedded=*/true, &removed);
  std::sort(removed.begin(), removed.end());
  return removed;
}

void StructuralSchema::apply_defaults(nlohmann::json& obj) const {
  schema::apply_defaults(obj, impl_->root.get());
}

std::vector<Cause> StructuralSchema::validate(const nlohmann::json& obj,
                                              const nlohmann::json* old_obj) const {
  std::vector<Cause> out;
  const schema::Node* root = impl_->root.get();
  schema::validate_openapi(*root, obj, "", out);
  schema::validate_embedded(root, obj, out);
  schema::validate_list_types(root, obj, out);
  if (rules_hook_ && root->subtree_rules) {
    const bool blocked = std::any_of(out.begin(), out.end(), [](const Cause& c) {
      return c.reason == "FieldValueNotSupported" || c.reason == "FieldValueRequired" ||
             c.reason == "FieldValueTooLong" || c.reason == "FieldValueTooMany" ||
             c.reason == "FieldValueTypeInvalid";
    });
    if (blocked) {
      out.push_back(schema::invalid_rendered("<nil>", "null",
                                     "some validation rules were not checked because the object was invalid; "
                                     "correct the existing errors to complete validation"));
    } else {
      schema::run_validation_rules(root, obj, old_obj, rules_hook_, out);
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
