#include "engine/controllers.h"

#include "controllers/status_controllers.h"
#include "engine/inventory.h"
#include "kube/runtime/manager.h"

namespace kubex::engine {

namespace {

// What the status controllers of kubex's own objects read (controllers/status_controllers.h).
controllers::StatusSources status_sources(EngineState& s) {
  controllers::StatusSources out;
  out.manager = &s.manager;
  out.client = s.client;
  Inventory* inv = &s.inventory;
  out.catalog = [inv] { return inv->catalog(); };
  out.kubex_informer = [inv](api::Kind k) { return inv->informer(k); };
  const Caches& c = s.caches;
  out.workload_informers = {c.deployments, c.statefulsets, c.daemonsets,     c.jobs,  c.cronjobs,
                            c.rollouts,    c.analysisruns, c.strimzipodsets, c.models};
  out.global_config_name = s.options.global_config_name;
  out.policy_evaluation_name = s.options.policy_evaluation_name;
  return out;
}

}  // namespace

void add_controllers(EngineState& state) {
  // Each controller adds one line here: state.manager.add_runnable(..., /*leader_only=*/true).
  controllers::add_singleton_bootstrap(status_sources(state));  // API-4
  controllers::add_validity_status(status_sources(state));      // "strategy": Valid / Available (OBS-1)
  controllers::add_policy_status(status_sources(state));        // "policystatus": policy conditions (OBS-1)
}

}  // namespace kubex::engine
