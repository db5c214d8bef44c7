#include "observe/kubex_meta.h"

#include "api/kubex_views.h"
#include "kube/runtime/predicates.h"

namespace kubex::observe {

namespace {

template <class T>
const T* typed(const common::CachedObject& o) {
  return dynamic_cast<const T*>(&o);
}

}  // namespace

const api::ObjectMeta* meta_of(api::Kind k, const common::CachedObject& o) {
  if (api::is_strategy(k)) {
    auto* s = typed<api::StrategyObject>(o);
    return s ? &s->parsed.value.meta : nullptr;
  }
  if (api::is_policy(k)) {
    auto* p = typed<api::PolicyObject>(o);
    return p ? &p->parsed.value.meta : nullptr;
  }
  switch (k) {
    case api::Kind::kGpuConsolidationPolicy: {
      auto* c = typed<api::ConsolidationObject>(o);
      return c ? &c->parsed.value.meta : nullptr;
    }
    case api::Kind::kGlobalConfiguration: {
      auto* g = typed<api::GlobalConfigObject>(o);
      return g ? &g->parsed.value.meta : nullptr;
    }
    case api::Kind::kPolicyEvaluation: {
      auto* e = typed<api::PolicyEvaluationObject>(o);
      return e ? &e->parsed.value.meta : nullptr;
    }
    default:
      return nullptr;
  }
}

bool generation_changed(api::Kind k, const common::CachedObject* before, const common::CachedObject* after) {
  return kube::generation_changed(before ? meta_of(k, *before) : nullptr,
                                  after ? meta_of(k, *after) : nullptr);
}

}  // namespace kubex::observe
