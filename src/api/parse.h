// JSON -> typed objects (api/objects.h). Parsing defaults absent fields in memory (API-2), runs the validator
// and always yields a best-effort typed value next to the report, because an invalid policy whose scope
// still evaluates puts the workloads it matches on hold (RBK-4). Never throws, whatever the JSON.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "api/objects.h"
#include "api/validate.h"

namespace kubex::api {

template <class T>
struct Parsed {
  T value;
  ValidationReport report;
  bool valid() const { return report.ok(); }
};

// AutomationStrategy or ClusterAutomationStrategy (from the object's kind).
Parsed<Strategy> parse_strategy(const nlohmann::json& obj, const ValidationContext& ctx = {});
// Any of the six managing policy kinds. `scope_evaluates` is false when the scope itself is unusable.
struct PolicyParse : Parsed<Policy> {
  bool scope_evaluates = true;
};
PolicyParse parse_policy(const nlohmann::json& obj, const ValidationContext& ctx = {});
Parsed<ConsolidationPolicy> parse_consolidation_policy(const nlohmann::json& obj);
Parsed<GlobalConfig> parse_global_config(const nlohmann::json& obj);
Parsed<PolicyEvaluation> parse_policy_evaluation(const nlohmann::json& obj);

// metadata -> ObjectMeta; status.conditions -> conditions (tolerant: bad entries skipped).
ObjectMeta parse_meta(const nlohmann::json& obj);
std::vector<Condition> parse_conditions(const nlohmann::json& obj);

}  // namespace kubex::api
