#include "engine/controllers.h"

#include "api/views.h"
#include "controllers/proactive_recommendations.h"
#include "controllers/static_owner.h"
#include "controllers/workloads.h"
#include "engine/inventory.h"
#include "kube/cache/informer.h"
#include "kube/runtime/manager.h"

namespace kubex::engine {

namespace {

controllers::WorkloadCaches workload_caches(const Caches& c) {
  controllers::WorkloadCaches w;
  w.workloads = {c.deployments, c.statefulsets, c.daemonsets, c.cronjobs, c.jobs,
                 c.rollouts,    c.analysisruns, c.models,     c.strimzipodsets};
  w.pods = c.pods;
  w.namespaces = c.namespaces;
  w.pod_owner_index = kIndexOwnerUid;
  return w;
}

// Calls `fn(view)` for every added or updated workload of the caches (not for deletions: a deleted workload
// has no annotations to keep).
template <class F>
void on_workload_events(const controllers::WorkloadCaches& w, F fn) {
  for (const auto& inf : w.workloads) {
    kube::InformerHandlers h;
    h.on_add = [fn](const kube::ObjectPtr& o) { fn(*kube::as<api::WorkloadView>(o)); };
    h.on_update = [fn](const kube::ObjectPtr&, const kube::ObjectPtr& o) { fn(*kube::as<api::WorkloadView>(o)); };
    inf->add_handlers(std::move(h));
  }
}

}  // namespace

void add_controllers(EngineState& state) {
  controllers::WorkloadCaches wc = workload_caches(state.caches);
  Inventory* inventory = &state.inventory;
  auto catalog = [inventory] { return inventory->catalog(); };

  // Owner annotations: static values (SEL-7) and the proactive ConfigMap (PRO-6).
  controllers::StaticOwnerOptions so;
  so.dry_run = state.options.dry_run;
  auto static_owner = std::make_shared<controllers::StaticOwnerController>(state.client, wc, catalog,
                                                                           &state.manager.metrics(), so);
  controllers::ProactiveOptions po;
  po.dry_run = state.options.dry_run;
  po.global_config_name = state.options.global_config_name;
  auto proactive = std::make_shared<controllers::ProactiveRecommendations>(
      state.client, wc, catalog, &state.manager.metrics(), &state.manager.events(), po);
  on_workload_events(wc, [s = static_owner.get(), p = proactive.get()](const api::WorkloadView& w) {
    s->workload_changed(w);
    p->workload_changed(w);
  });
  state.inventory.on_change([s = static_owner.get(), p = proactive.get()](api::Kind k, const kube::ObjectPtr&) {
    if (api::is_policy(k) || api::is_strategy(k) || k == api::Kind::kGlobalConfiguration ||
        k == api::Kind::kPolicyEvaluation) {
      s->policies_changed();
      p->policies_changed();
    }
  });
  state.manager.add_runnable(static_owner, /*leader_only=*/true);
  state.manager.add_runnable(proactive, /*leader_only=*/true);
}

}  // namespace kubex::engine
