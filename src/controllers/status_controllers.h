// Wiring of the status controllers of kubex's own objects into a manager (leader-only, ENG-1): the `strategy`
// controller (controllers/validity_status.h), the `policystatus` controller (controllers/policy_status.h) and
// the API-4 singleton bootstrap (controllers/singletons.h). The engine hands over what it has in plain
// terms; handlers are added to the informers here, so call these before the informers start.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "api/kinds.h"
#include "controllers/singletons.h"

namespace kubex::kube {
class Client;
class Informer;
class Manager;
}  // namespace kubex::kube

namespace kubex::decide::policy {
class Catalog;
}

namespace kubex::observe {
class CatalogCache;
class WorkloadViews;
}  // namespace kubex::observe

namespace kubex::controllers {

struct StatusSources {
  kube::Manager* manager = nullptr;
  std::shared_ptr<kube::Client> client;
  // kubex's own objects: the informer of each rightsizing.kubex.ai kind and the catalog built from them.
  const observe::CatalogCache* kubex_objects = nullptr;
  // The workloads (SEL-1 top owners) policystatus counts, and the informers of their kinds (Deployments,
  // StatefulSets, DaemonSets, Jobs, CronJobs, Rollouts, AnalysisRuns, Models, StrimziPodSets) whose events
  // it follows; nulls are skipped.
  std::shared_ptr<const observe::WorkloadViews> workloads;
  std::vector<std::shared_ptr<kube::Informer>> workload_informers;
  std::string global_config_name = "global-config";
  std::string policy_evaluation_name = "policy-evaluation";
};

void add_validity_status(const StatusSources& s);  // controller "strategy"
void add_policy_status(const StatusSources& s);    // controller "policystatus"
void add_singleton_bootstrap(const StatusSources& s);

}  // namespace kubex::controllers
