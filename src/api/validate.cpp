// The validator's entry points: envelope (apiVersion, kind, metadata, spec) and dispatch to the per-kind
// checks.
#include "api/validate.h"

#include <exception>
#include <nlohmann/json.hpp>

#include "api/defaults.h"
#include "api/validate_util.h"

namespace kubex::api {

namespace {

using detail::Checker;
using nlohmann::json;

bool spec_required(Kind k) {
  return is_policy(k) || k == Kind::kGpuConsolidationPolicy;
}

void validate_object(Checker& c, Kind k, const json& object, const ValidationContext& ctx) {
  if (const json* av = Checker::find(object, "apiVersion"); av && *av != kApiVersion) {
    c.error("apiVersion", std::string("must be \"") + kApiVersion + "\"");
  }
  if (const json* kind = Checker::find(object, "kind"); kind && *kind != info(k).name) {
    c.error("kind", std::string("must be \"") + info(k).name + "\"");
  }
  detail::check_metadata(c, object, info(k).singleton);
  const json* spec = c.object(object, "spec", "spec");
  if (!spec) {
    if (spec_required(k) && !c.has_error_at("spec")) c.error("spec", "required");
    if (spec_required(k) || c.has_error_at("spec")) return;
  }
  static const json kEmpty = json::object();
  const json& s = spec ? *spec : kEmpty;
  switch (k) {
    case Kind::kAutomationStrategy:
    case Kind::kClusterAutomationStrategy:
      detail::validate_strategy_spec(c, s, ctx);
      break;
    case Kind::kProactivePolicy:
    case Kind::kClusterProactivePolicy:
    case Kind::kStaticPolicy:
    case Kind::kClusterStaticPolicy:
    case Kind::kGpuReactivePolicy:
    case Kind::kClusterGpuReactivePolicy:
      detail::validate_policy_spec(c, k, s, ctx);
      break;
    case Kind::kGpuConsolidationPolicy:
      detail::validate_consolidation_spec(c, s);
      break;
    case Kind::kGlobalConfiguration:
      detail::validate_global_config_spec(c, s);
      break;
    case Kind::kPolicyEvaluation:
      detail::validate_policy_evaluation_spec(c, s);
      break;
  }
  // The schemas' bounds (gen-crds.py BOUNDS), where no check above already reported the field.
  for (const auto& [path, message] : bound_violations(k, object)) {
    if (!c.has_error_at(path)) c.error(path, message);
  }
}

}  // namespace

ValidationReport validate(Kind k, const nlohmann::json& object, const ValidationContext& ctx) {
  ValidationReport report;
  Checker c(report);
  if (!object.is_object()) {
    c.error("", "the object must be a JSON object");
    return report;
  }
  if (detail::exceeds_depth(object)) {
    c.error("", "the object is nested more than " + std::to_string(detail::kMaxObjectDepth) + " levels deep");
    return report;
  }
  try {
    json defaulted = object;
    apply_defaults(k, defaulted);
    validate_object(c, k, defaulted, ctx);
  } catch (const std::exception& e) {  // a safety net: nothing above is expected to throw
    c.error("", std::string("internal validation error: ") + e.what());
  }
  return report;
}

ValidationReport validate_any(const nlohmann::json& object, const ValidationContext& ctx) {
  ValidationReport report;
  Checker c(report);
  if (!object.is_object()) {
    c.error("kind", "required");
    return report;
  }
  const json* kind = Checker::find(object, "kind");
  if (!kind || (kind->is_string() && kind->get_ref<const std::string&>().empty())) {
    c.error("kind", "required");
    return report;
  }
  if (!kind->is_string()) {
    c.error("kind", "must be a string");
    return report;
  }
  auto k = kind_from_name(kind->get_ref<const std::string&>());
  if (!k) {
    std::vector<std::string> names;
    for (const auto& i : all_kinds()) names.emplace_back(i.name);
    c.error("kind", detail::unsupported(kind->get_ref<const std::string&>(), names));
    return report;
  }
  if (!Checker::find(object, "apiVersion")) c.error("apiVersion", "required");
  ValidationReport rest = validate(*k, object, ctx);
  report.errors.append(rest.errors);
  report.warnings.insert(report.warnings.end(), rest.warnings.begin(), rest.warnings.end());
  report.contract = report.contract || rest.contract;
  return report;
}

}  // namespace kubex::api
