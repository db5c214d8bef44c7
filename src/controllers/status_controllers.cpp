#include "controllers/status_controllers.h"

#include "act/singletons.h"

#include "controllers/policy_status.h"
#include "act/status_writer.h"
#include "observe/catalog.h"
#include "controllers/validity_status.h"
#include "kube/cache/informer.h"
#include "kube/runtime/manager.h"

namespace kubex::controllers {

void add_validity_status(const StatusSources& s) {
  ValidityStatusDeps d;
  d.writer = act::client_status_writer(s.client);
  d.events = &s.manager->events();
  d.metrics = &s.manager->metrics();
  d.objects = s.kubex_objects;
  d.global_config_name = s.global_config_name;
  d.policy_evaluation_name = s.policy_evaluation_name;
  auto c = std::make_shared<ValidityStatusController>(std::move(d));
  for (const auto& ki : api::all_kinds()) {
    if (!ValidityStatusController::handles(ki.kind)) continue;
    if (auto inf = s.kubex_objects->informer(ki.kind)) c->watch(ki.kind, *inf);
  }
  s.manager->add_runnable(c, /*leader_only=*/true);
}

void add_policy_status(const StatusSources& s) {
  PolicyStatusDeps d;
  d.writer = act::client_status_writer(s.client);
  d.events = &s.manager->events();
  d.metrics = &s.manager->metrics();
  d.catalog = s.kubex_objects;
  d.workloads = s.workloads;
  d.global_config_name = s.global_config_name;
  auto c = std::make_shared<PolicyStatusController>(std::move(d));
  for (const auto& ki : api::all_kinds()) {
    auto inf = s.kubex_objects->informer(ki.kind);
    if (!inf) continue;
    if (api::is_policy(ki.kind)) c->watch_policies(ki.kind, *inf);
    if (api::is_strategy(ki.kind)) c->watch_strategies(ki.kind, *inf);
    if (ki.kind == api::Kind::kGlobalConfiguration) c->watch_global_config(*inf);
  }
  for (const auto& inf : s.workload_informers) {
    if (inf) c->watch_workloads(*inf);
  }
  s.manager->add_runnable(c, /*leader_only=*/true);
}

void add_singleton_bootstrap(const StatusSources& s) {
  SingletonOptions o;
  o.global_config_name = s.global_config_name;
  o.policy_evaluation_name = s.policy_evaluation_name;
  auto bootstrap = std::make_shared<SingletonBootstrap>(act::client_singleton_writer(s.client), o);
  // API-4: a deleted singleton is created again with its defaults (and the recreation logged).
  for (api::Kind k : {api::Kind::kGlobalConfiguration, api::Kind::kPolicyEvaluation}) {
    if (auto inf = s.kubex_objects->informer(k)) {
      kube::InformerHandlers h;
      h.on_delete = [b = bootstrap.get()](const kube::ObjectPtr& obj) {
        if (obj) b->singleton_deleted(obj->name);
      };
      inf->add_handlers(std::move(h));
    }
  }
  s.manager->add_runnable(bootstrap, /*leader_only=*/true);
}

}  // namespace kubex::controllers
