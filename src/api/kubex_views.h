// Cached projections of kubex's own objects (DESIGN §2.3 "typed kubex objects"): each informer entry holds
// the parsed, defaulted object together with its validation report, so every reader (webhooks, controllers)
// sees the same verdict without re-validating.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>

#include "api/parse.h"
#include "common/cached_object.h"

namespace kubex::api {

struct StrategyObject : common::CachedObject {
  Parsed<Strategy> parsed;
};
struct PolicyObject : common::CachedObject {
  PolicyParse parsed;
};
struct ConsolidationObject : common::CachedObject {
  Parsed<ConsolidationPolicy> parsed;
};
struct GlobalConfigObject : common::CachedObject {
  Parsed<GlobalConfig> parsed;
};
struct PolicyEvaluationObject : common::CachedObject {
  Parsed<PolicyEvaluation> parsed;
};

// A projector for kind `k` (nullptr for objects of another kind). `ctx` feeds the VAL-2 warnings; the
// verdict (errors) never depends on it.
std::shared_ptr<const common::CachedObject> project_kubex_object(Kind k, const nlohmann::json& obj,
                                                                 const ValidationContext& ctx = {});

}  // namespace kubex::api
