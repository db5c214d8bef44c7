#include "api/kubex_views.h"

#include <nlohmann/json.hpp>

namespace kubex::api {

namespace {

template <class T, class P>
std::shared_ptr<const common::CachedObject> make(const nlohmann::json& obj, P parsed) {
  auto o = std::make_shared<T>();
  common::fill_meta(*o, obj);
  o->parsed = std::move(parsed);
  return o;
}

}  // namespace

std::shared_ptr<const common::CachedObject> project_kubex_object(Kind k, const nlohmann::json& obj,
                                                                 const ValidationContext& ctx) {
  if (!obj.is_object() || obj.value("kind", "") != info(k).name) return nullptr;
  if (is_strategy(k)) return make<StrategyObject>(obj, parse_strategy(obj, ctx));
  if (is_policy(k)) return make<PolicyObject>(obj, parse_policy(obj, ctx));
  switch (k) {
    case Kind::kGpuConsolidationPolicy:
      return make<ConsolidationObject>(obj, parse_consolidation_policy(obj));
    case Kind::kGlobalConfiguration:
      return make<GlobalConfigObject>(obj, parse_global_config(obj));
    case Kind::kPolicyEvaluation:
      return make<PolicyEvaluationObject>(obj, parse_policy_evaluation(obj));
    default:
      return nullptr;
  }
}

}  // namespace kubex::api
