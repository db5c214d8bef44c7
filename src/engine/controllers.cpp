#include "engine/controllers.h"

#include <nlohmann/json.hpp>

#include "act/kai_queues.h"
#include "act/owner_annotations.h"
#include "act/probe_pods.h"
#include "act/status_writer.h"
#include "api/kinds.h"
#include "api/views.h"
#include "act/evictor.h"
#include "act/pod_annotations.h"
#include "controllers/actuation.h"
#include "controllers/rollback.h"
#include "controllers/consolidation.h"
#include "act/finalizers.h"
#include "act/tainter.h"
#include "act/write_gate.h"
#include "observe/gpu_inventory.h"
#include "controllers/global_config_status.h"
#include "controllers/kai_queues.h"
#include "controllers/proactive_recommendations.h"
#include "controllers/reactive.h"
#include "controllers/static_owner.h"
#include "controllers/status_controllers.h"
#include "controllers/strategy_hold.h"
#include "controllers/webhook_health.h"
#include "observe/caches.h"
#include "observe/actuation.h"
#include "observe/catalog.h"
#include "observe/config_maps.h"
#include "observe/gpu_history.h"
#include "observe/signals.h"
#include "observe/workloads.h"
#include "kube/runtime/http_endpoints.h"
#include "kube/cache/informer.h"
#include "kube/client/client.h"
#include "kube/runtime/manager.h"

namespace kubex::engine {

namespace {

// ENG-1, ACT-9: only the Lease holder writes. Every eviction, node taint and owner annotation write goes through a
// guard that asks the manager right before sending it (a replica that lost its Lease stops at once).
std::shared_ptr<act::LeaseGuard> lease_guard(EngineState& state, const std::string& logger) {
  kube::Manager* manager = &state.manager;
  return std::make_shared<act::LeaseGuard>(act::write_gate([manager] { return manager->holds_lease(); }),
                                           &state.manager.metrics(), common::Logger(logger));
}

// The owner annotation writer of a controller, behind the lease check.
std::shared_ptr<act::AnnotationWriter> owner_writer(EngineState& state, bool dry_run, const common::Logger& log) {
  return act::gated_annotation_writer(act::client_annotation_writer(state.client, dry_run, log),
                                      lease_guard(state, log.name()));
}

// What the engine-wide controllers share: global-config from the inventory's cache and its status writer.
struct GlobalConfigAccess {
  const observe::GlobalConfigView& get;
  std::shared_ptr<controllers::GlobalConfigStatus> status;
};

GlobalConfigAccess global_config_access(EngineState& state) {
  return {state.inventory,
          controllers::client_global_config_status(state.client, state.options.global_config_name)};
}

// Adds a leader-only controller (ENG-1) that re-checks when global-config changes (HLM-3).
template <class C>
void add_global_config_controller(EngineState& state, std::shared_ptr<C> c) {
  state.inventory.on_change([c](api::Kind k, const common::ObjectPtr&) {
    if (k == api::Kind::kGlobalConfiguration) c->global_config_changed();
  });
  state.manager.add_runnable(std::move(c), /*leader_only=*/true);
}

// QUE-1, QUE-2.
std::shared_ptr<controllers::KaiQueuesController> kai_queues(EngineState& state,
                                                             const GlobalConfigAccess& gc) {
  controllers::KaiQueuesOptions o;
  o.enabled = state.options.kai_queues;
  o.check_interval = state.options.kai_queues_check_interval;
  o.metrics = &state.manager.metrics();
  auto ctrl = std::make_shared<controllers::KaiQueuesController>(act::client_queue_writer(state.client),
                                                                 gc.status, gc.get, &state.manager.events(), o);
  if (o.enabled && state.caches.queues) {
    // QUE-1: a deleted built-in queue is recreated at once (the caches' Queue informer; absent API = empty).
    kube::InformerHandlers h;
    h.on_delete = [c = ctrl.get()](const kube::ObjectPtr& q) {
      if (q) c->queue_deleted(q->name);
    };
    state.caches.queues->add_handlers(std::move(h));
  }
  return ctrl;
}

// WHH-1..3. The probe has its own client: a bounded timeout (above the webhooks' 10 s) and no retries, since
// a slow or failing API call is a failed probe.
std::shared_ptr<controllers::WebhookHealthController> webhook_health(
    EngineState& state, const GlobalConfigAccess& gc,
    std::shared_ptr<controllers::WebhookHealthSignal> signal) {
  kube::ClientOptions co;
  co.timeout = std::chrono::milliseconds(15000);
  co.max_retries = 0;
  co.max_retry_after_retries = 0;  // a failed probe is a verdict (WHH-2); the next probe comes soon
  auto probe_client = kube::Client::create(state.client->config(), co);
  std::shared_ptr<kube::Client> client = probe_client ? *probe_client : state.client;
  if (probe_client) client->set_observer(state.manager.metrics().request_observer());
  controllers::WebhookHealthOptions o;
  o.ns = state.ns;
  o.early_enabled = state.options.early_webhook_enabled;
  o.default_image = state.options.webhook_probe_image;
  o.metrics = &state.manager.metrics();
  o.witness = state.probe_witness;
  o.registration = state.webhook_registration;
  o.api_timeout = std::to_string(co.timeout.count() / 1000) + "s";
  auto bind = kube::parse_bind_address(state.options.webhook_bind);
  o.webhooks_served = !(bind && bind->disabled);
  return std::make_shared<controllers::WebhookHealthController>(act::client_probe_runner(client),
                                                                gc.status, gc.get, &state.manager.events(),
                                                                std::move(signal), o);
}

// What the status controllers of kubex's own objects read (controllers/status_controllers.h).
controllers::StatusSources status_sources(EngineState& s) {
  controllers::StatusSources out;
  out.manager = &s.manager;
  out.client = s.client;
  out.kubex_objects = &s.inventory;
  const observe::Caches& c = s.caches;
  out.workloads = observe::cached_workload_views(c);
  out.workload_informers = {c.deployments, c.statefulsets, c.daemonsets,     c.jobs,  c.cronjobs,
                            c.rollouts,    c.analysisruns, c.strimzipodsets, c.models};
  out.global_config_name = s.options.global_config_name;
  out.policy_evaluation_name = s.options.policy_evaluation_name;
  return out;
}

// REA-1…REA-11: the reactive recommender, re-checking its policies whenever kubex's objects change.
std::shared_ptr<controllers::ReactiveRecommender> reactive_recommender(EngineState& state, const observe::CatalogView& catalog) {
  controllers::ReactiveDeps d;
  d.catalog = &catalog;
  d.pods = observe::cached_signal_pods(state.caches);
  controllers::ReactiveOptions o;
  o.dry_run = state.options.dry_run;
  d.annotations = owner_writer(state, o.dry_run, common::Logger("controller.gpureactivepolicy"));
  d.status = act::client_status_writer(state.client);
  d.prometheus = controllers::prometheus_connector();
  if (state.options.reactive_check_interval.count() > 0) {
    o.check_interval = std::chrono::duration_cast<common::Duration>(state.options.reactive_check_interval);
  }
  o.bearer_token_file = state.options.prometheus_bearer_token_file;
  o.ca_file = state.options.prometheus_ca_file;
  o.metrics = &state.manager.metrics();
  auto r = std::make_shared<controllers::ReactiveRecommender>(std::move(d), o);
  state.inventory.on_change([c = r.get()](api::Kind k, const kube::ObjectPtr&) {
    if (api::is_reactive(k) || api::is_strategy(k) || k == api::Kind::kGlobalConfiguration ||
        k == api::Kind::kPolicyEvaluation || api::is_policy(k)) {
      c->objects_changed();
    }
  });
  return r;
}

// Evictions go through their own client that does not retry: a 429 is a PDB's answer (ACT-5), or the API server's
// throttling (ENG-4), which the evictor tells apart; a failed or throttled eviction is tried again after
// resizeRetryInterval, not at once, and never blocks a reconcile worker for a Retry-After.
std::shared_ptr<act::Evictor> evictor(EngineState& state, const char* logger) {
  kube::ClientOptions co;
  co.max_retries = 0;
  co.max_retry_after_retries = 0;
  auto evict_client = kube::Client::create(state.client->config(), co);
  std::shared_ptr<kube::Client> client = evict_client ? *evict_client : state.client;
  if (evict_client) client->set_observer(state.manager.metrics().request_observer());
  return act::gated_evictor(
      act::client_evictor(client, &state.manager.metrics(), state.options.dry_run, common::Logger(logger)),
      lease_guard(state, logger));
}

// Reconciles a controller's workloads on owner and pod events and when kubex's own objects change.
template <typename C>
void follow_workloads(EngineState& state, C* c) {
  observe::on_workload_changes(state.caches, [c](const api::WorkloadView& w) {
    c->workload_changed(observe::workload_key(w));
  });
  if (state.caches.pods) {
    kube::InformerHandlers h;
    auto changed = [c](const kube::ObjectPtr& o) {
      if (auto p = kube::as<api::PodView>(o)) c->pod_changed(*p);
    };
    h.on_add = changed;
    h.on_update = [changed](const kube::ObjectPtr&, const kube::ObjectPtr& o) { changed(o); };
    h.on_delete = changed;
    state.caches.pods->add_handlers(std::move(h));
  }
  state.inventory.on_change([c](api::Kind k, const kube::ObjectPtr&) {
    if (api::is_policy(k) || api::is_strategy(k) || k == api::Kind::kGlobalConfiguration ||
        k == api::Kind::kPolicyEvaluation) {
      c->all_changed();
    }
  });
}

// Issue 27 item 4: when PodAdmissionWebhookHealthy turns True (after a restart, a leader change or an outage), every
// workload is looked at again at once, so the evictions ACT-2 held back go now, not at the next periodic resync.
void resume_when_webhook_healthy(const std::shared_ptr<controllers::WorkloadController>& c,
                                 const std::shared_ptr<const controllers::WebhookHealthSignal>& webhook) {
  if (!webhook) return;
  webhook->on_healthy([w = std::weak_ptr<controllers::WorkloadController>(c)] {
    if (auto live = w.lock()) live->all_changed();
  });
}

// ACT-1…ACT-8.
std::shared_ptr<controllers::ActuationController> actuation(EngineState& state, const observe::CatalogView& catalog,
                                                            std::shared_ptr<const controllers::WebhookHealthSignal> webhook) {
  controllers::ActuationDeps d;
  d.catalog = &catalog;
  d.facts = observe::cached_actuation_facts(state.caches);
  d.evictor = evictor(state, "controller.actuation");
  d.pod_annotations = act::client_pod_annotation_writer(state.client, common::Logger("controller.actuation"));
  d.owner_annotations =  // ACT-9 actuation-state
      owner_writer(state, state.options.dry_run, common::Logger("controller.actuation"));
  d.events = &state.manager.events();
  d.webhook = webhook;
  controllers::ActuationOptions o;
  o.dry_run = state.options.dry_run;
  o.metrics = &state.manager.metrics();
  auto c = std::make_shared<controllers::ActuationController>(std::move(d), o);
  follow_workloads(state, c.get());
  resume_when_webhook_healthy(c, webhook);
  return c;
}

// RBK-1…RBK-4.
std::shared_ptr<controllers::RollbackController> rollback(EngineState& state, const observe::CatalogView& catalog,
                                                          std::shared_ptr<const controllers::WebhookHealthSignal> webhook) {
  controllers::RollbackDeps d;
  d.catalog = &catalog;
  d.facts = observe::cached_actuation_facts(state.caches);
  d.evictor = evictor(state, "controller.rollback");
  d.pod_annotations = act::client_pod_annotation_writer(state.client, common::Logger("controller.rollback"));
  d.owner_annotations =
      owner_writer(state, state.options.dry_run, common::Logger("controller.rollback"));
  d.events = &state.manager.events();
  d.webhook = webhook;
  controllers::RollbackOptions o;
  o.dry_run = state.options.dry_run;
  o.metrics = &state.manager.metrics();
  auto c = std::make_shared<controllers::RollbackController>(std::move(d), o);
  follow_workloads(state, c.get());
  resume_when_webhook_healthy(c, webhook);
  return c;
}

// The GpuConsolidationPolicies in the catalog's informer.
class CachedConsolidationPolicies final : public controllers::ConsolidationPolicies {
 public:
  explicit CachedConsolidationPolicies(std::shared_ptr<kube::Informer> informer) : informer_(std::move(informer)) {}
  std::vector<std::shared_ptr<const api::ConsolidationObject>> list() const override {
    std::vector<std::shared_ptr<const api::ConsolidationObject>> out;
    if (!informer_) return out;
    for (const auto& o : informer_->list()) {
      if (auto p = kube::as<api::ConsolidationObject>(o)) out.push_back(std::move(p));
    }
    return out;
  }

 private:
  std::shared_ptr<kube::Informer> informer_;
};

// CON-1…CON-11: one worker; evictions through a client that does not retry (a 429 is retried on the next
// reconcile, CON-7).
std::shared_ptr<controllers::ConsolidationController> consolidation(EngineState& state) {
  common::Logger log("controller.consolidation");
  auto informer = state.inventory.informer(api::Kind::kGpuConsolidationPolicy);
  controllers::ConsolidationDeps d;
  d.policies = std::make_shared<CachedConsolidationPolicies>(informer);
  d.global = &state.inventory;
  d.inventory = observe::cached_gpu_inventory(state.caches);
  d.tainter = act::gated_tainter(act::client_tainter(state.client, log), lease_guard(state, log.name()));
  d.evictor = evictor(state, "controller.consolidation");
  d.status = act::client_status_writer(state.client);
  d.finalizers = act::gated_finalizer_writer(act::client_finalizer_writer(state.client), lease_guard(state, log.name()));
  d.events = &state.manager.events();
  controllers::ConsolidationOptions o;
  o.dry_run = state.options.dry_run;
  o.drain_timeout = std::chrono::duration_cast<common::Duration>(state.options.consolidation_drain_timeout);
  o.metrics = &state.manager.metrics();
  auto c = std::make_shared<controllers::ConsolidationController>(std::move(d), o);
  if (informer) {
    kube::InformerHandlers h;
    h.on_add = [a = c.get()](const kube::ObjectPtr& o) {
      if (o) a->policy_changed(o->name);
    };
    // Spec changes and deletion marks (metadata.generation does not move when deletionTimestamp is set).
    h.on_update = [a = c.get()](const kube::ObjectPtr& old_obj, const kube::ObjectPtr& o) {
      auto before = kube::as<api::ConsolidationObject>(old_obj);
      auto after = kube::as<api::ConsolidationObject>(o);
      if (!after) return;
      if (!before || before->parsed.value.meta.generation != after->parsed.value.meta.generation ||
          before->parsed.value.meta.deleting != after->parsed.value.meta.deleting) {
        a->policy_changed(after->name);
      }
    };
    h.on_delete = [a = c.get()](const kube::ObjectPtr& o) {
      if (o) a->policy_deleted(o->name);
    };
    informer->add_handlers(std::move(h));
  }
  return c;
}

// VAL-4 "strategy DELETE": the finalizer rightsizing.kubex.ai/referenced on referenced strategies, written behind
// the lease check (ENG-1, ACT-9); strategies are looked at again whenever a policy changes.
void add_strategy_hold(EngineState& state) {
  common::Logger log("controller.strategyhold");
  controllers::StrategyHoldDeps d;
  d.finalizers = act::gated_finalizer_writer(act::client_finalizer_writer(state.client), lease_guard(state, log.name()));
  d.writer = act::client_status_writer(state.client);
  d.events = &state.manager.events();
  d.metrics = &state.manager.metrics();
  d.catalog = &state.inventory;
  d.objects = &state.inventory;
  auto c = std::make_shared<controllers::StrategyHoldController>(std::move(d));
  for (api::Kind k : {api::Kind::kAutomationStrategy, api::Kind::kClusterAutomationStrategy}) {
    if (auto inf = state.inventory.informer(k)) c->watch_strategies(k, *inf);
  }
  state.inventory.on_change([c = c.get()](api::Kind k, const common::ObjectPtr&) {
    if (api::is_policy(k)) c->policies_changed();
  });
  state.manager.add_runnable(std::move(c), /*leader_only=*/true);
}

}  // namespace

void add_controllers(EngineState& state) {
  controllers::add_singleton_bootstrap(status_sources(state));  // API-4
  controllers::add_validity_status(status_sources(state));      // "strategy": Valid / Available (OBS-1)
  controllers::add_policy_status(status_sources(state));        // "policystatus": policy conditions (OBS-1)
  add_strategy_hold(state);                                     // "strategyhold": VAL-4 strategy DELETE

  // Each controller adds one line here (leader-only unless it says otherwise, ENG-1).
  GlobalConfigAccess gc = global_config_access(state);
  // PodAdmissionWebhookHealthy as other controllers read it (ACT-2 pauses evictions while it is not True).
  auto webhook_healthy = std::make_shared<controllers::WebhookHealthSignal>();
  add_global_config_controller(state, kai_queues(state, gc));
  add_global_config_controller(state, webhook_health(state, gc, webhook_healthy));

  const observe::CatalogView& catalog = state.inventory;

  // Owner annotations: static values (SEL-7) and the proactive ConfigMap (PRO-6).
  auto workloads = observe::cached_workload_views(state.caches);
  const bool dry_run = state.options.dry_run;
  controllers::StaticOwnerDeps sd;
  sd.catalog = &catalog;
  sd.workloads = workloads;
  sd.annotations = owner_writer(state, dry_run,
                                                 common::Logger(controllers::StaticOwnerController::kLogger));
  controllers::StaticOwnerOptions so;
  so.metrics = &state.manager.metrics();
  auto static_owner = std::make_shared<controllers::StaticOwnerController>(std::move(sd), so);
  controllers::ProactiveDeps pd;
  pd.catalog = &catalog;
  pd.workloads = workloads;
  pd.annotations = owner_writer(state, dry_run,
                                                 common::Logger(controllers::ProactiveRecommendations::kLogger));
  pd.status = act::client_status_writer(state.client);
  pd.config_maps = observe::client_config_maps(state.client);
  pd.events = &state.manager.events();
  pd.prometheus = controllers::prometheus_connector();  // PRO-2 history
  pd.subjects = observe::cached_history_subjects(state.caches);
  pd.policy_status = act::client_status_writer(state.client);
  controllers::ProactiveOptions po;
  po.global_config_name = state.options.global_config_name;
  po.dry_run = dry_run;
  po.metrics = &state.manager.metrics();
  po.bearer_token_file = state.options.prometheus_bearer_token_file;
  po.ca_file = state.options.prometheus_ca_file;
  auto proactive = std::make_shared<controllers::ProactiveRecommendations>(std::move(pd), po);
  observe::on_workload_changes(state.caches, [s = static_owner.get(), p = proactive.get()](const api::WorkloadView& w) {
    s->workload_changed(w);
    p->workload_changed(w);
  });
  state.inventory.on_change(
      [s = static_owner.get(), p = proactive.get()](api::Kind k, const kube::ObjectPtr&) {
        if (api::is_policy(k) || api::is_strategy(k) || k == api::Kind::kGlobalConfiguration ||
            k == api::Kind::kPolicyEvaluation) {
          s->policies_changed();
          p->policies_changed();
        }
      });
  state.manager.add_runnable(static_owner, /*leader_only=*/true);
  state.manager.add_runnable(proactive, /*leader_only=*/true);
  state.manager.add_runnable(reactive_recommender(state, catalog), /*leader_only=*/true);
  state.manager.add_runnable(actuation(state, catalog, webhook_healthy), /*leader_only=*/true);
  state.manager.add_runnable(rollback(state, catalog, webhook_healthy), /*leader_only=*/true);
  state.manager.add_runnable(consolidation(state), /*leader_only=*/true);
}

}  // namespace kubex::engine
