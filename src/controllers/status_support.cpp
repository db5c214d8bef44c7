#include "controllers/status_support.h"

#include "api/kubex_views.h"
#include "act/status_writer.h"
#include "kube/runtime/event_recorder.h"

namespace kubex::controllers {

// "Kind/ns/name", or "Kind/name" for a cluster-scoped object (issue 34: logs said "ClusterGpuReactivePolicy//x").
std::string ObjectId::key() const {
  return std::string(api::info(kind).name) + "/" + (ns.empty() ? "" : ns + "/") + name;
}

std::optional<ObjectId> parse_object_key(const std::string& key) {
  auto a = key.find('/');
  if (a == std::string::npos) return std::nullopt;
  auto b = key.find('/', a + 1);
  const bool cluster = b == std::string::npos;  // "Kind/name": cluster-scoped
  auto kind = api::kind_from_name(std::string_view(key).substr(0, a));
  if (!kind) return std::nullopt;
  ObjectId id;
  id.kind = *kind;
  id.ns = cluster ? "" : key.substr(a + 1, b - a - 1);
  id.name = key.substr(cluster ? a + 1 : b + 1);
  if (id.name.empty() || id.name.find('/') != std::string::npos) return std::nullopt;
  if (api::info(id.kind).namespaced == id.ns.empty()) return std::nullopt;
  return id;
}

ObjectId object_id(api::Kind kind, const common::CachedObject& o) {
  return ObjectId{kind, o.ns.str(), o.name};
}

namespace {

template <class T>
const T* typed(const common::CachedObject& o) {
  return dynamic_cast<const T*>(&o);
}

}  // namespace

std::vector<decide::ConditionState> cached_conditions(api::Kind k, const common::CachedObject& o) {
  const std::vector<api::Condition>* cs = nullptr;
  if (api::is_strategy(k)) {
    if (auto* s = typed<api::StrategyObject>(o)) cs = &s->parsed.value.conditions;
  } else if (api::is_policy(k)) {
    if (auto* p = typed<api::PolicyObject>(o)) cs = &p->parsed.value.conditions;
  } else if (k == api::Kind::kGpuConsolidationPolicy) {
    if (auto* c = typed<api::ConsolidationObject>(o)) cs = &c->parsed.value.conditions;
  } else if (k == api::Kind::kGlobalConfiguration) {
    if (auto* g = typed<api::GlobalConfigObject>(o)) cs = &g->parsed.value.conditions;
  } else if (k == api::Kind::kPolicyEvaluation) {
    if (auto* e = typed<api::PolicyEvaluationObject>(o)) cs = &e->parsed.value.conditions;
  }
  std::vector<decide::ConditionState> out;
  if (cs) {
    for (const auto& c : *cs) out.push_back({c.type, c.status, c.reason, c.message});
  }
  return out;
}

act::ConditionUpdate to_update(const decide::ConditionState& c) {
  return {c.type, c.status, c.reason, c.message};
}

std::vector<decide::ConditionState> to_states(const std::vector<act::ConditionUpdate>& cs) {
  std::vector<decide::ConditionState> out;
  out.reserve(cs.size());
  for (const auto& c : cs) out.push_back({c.type, c.status, c.reason, c.message});
  return out;
}

kube::ReconcileOutcome write_status(act::StatusWriter& writer, kube::EventRecorder* events, const ObjectId& id,
                                    const api::ObjectMeta& meta, act::StatusChange change,
                                    common::TimePoint now, common::Duration requeue_after) {
  kube::ReconcileResult ok;
  ok.requeue_after = requeue_after;
  // The conditions were decided from the cached version: observedGeneration may only claim that one.
  if (meta.generation > 0) change.generation = meta.generation;
  auto res = writer.write(id.path(), change, now);
  if (!res) {
    if (res.error().not_found()) return kube::ReconcileResult{};  // deleted meanwhile: nothing to report
    return std::unexpected("status update of " + id.key() + ": " + res.error().str());
  }
  if (res->stale) {
    // The cache has not seen the newest spec yet; its update enqueues the object again. Until then, retry
    // with the rate limiter's back-off.
    kube::ReconcileResult again;
    again.requeue = true;
    return again;
  }
  if (!res->written || !events) return ok;
  // Conditions that a keep_reasons entry left alone were not written: they call for no event.
  std::vector<decide::ConditionState> after;
  for (const auto& c : change.set) {
    auto keep = change.keep_reasons.find(c.type);
    bool kept = false;
    if (keep != change.keep_reasons.end()) {
      for (const auto& p : res->previous) {
        if (p.type != c.type) continue;
        for (const auto& r : keep->second) kept = kept || p.reason == r;
      }
    }
    if (!kept) after.push_back({c.type, c.status, c.reason, c.message});
  }
  auto plans = decide::condition_events(to_states(res->previous), after);
  if (plans.empty()) return ok;
  kube::ObjectReference ref;
  ref.api_version = api::kApiVersion;
  ref.kind = api::info(id.kind).name;
  ref.ns = id.ns;
  ref.name = id.name;
  ref.uid = meta.uid;
  ref.resource_version = meta.resource_version;
  for (const auto& p : plans) {
    events->event(ref, p.warning ? kube::EventType::kWarning : kube::EventType::kNormal, p.reason, p.message);
  }
  return ok;
}

}  // namespace kubex::controllers
