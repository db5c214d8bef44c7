// The `policystatus` controller (OBS-1 §1.2–1.4, OBS-2, SEL-3, SEL-4, VAL-6): the status of the six managing
// policy kinds. It writes `AutomationStrategyResolved` and `Ready` (decide/status/policy_status.h) from the linked
// catalog's verdict and strategy resolution, `matchedWorkloads` (the SEL-1 top owners the scope matches now)
// and `lastEvaluationTime`, and records StrategyResolved / StrategyNotFound / InvalidSpec / InvalidContract
// events on transitions. A Ready=False/PrometheusQueryFailed set by the reactive recommender is left alone
// while the policy is valid. Policies are reconciled when they change, when a strategy they reference
// changes (so creating a missing strategy flips them to Resolved), when global-config changes (protected
// namespaces), and when a workload their scope matches appears, goes or changes labels. Invalid policies are
// requeued after 5m (VAL-6).
//
// It is not the `staticpolicy` / `proactivepolicy` / `gpureactivepolicy` recommenders: those own the
// recommendation work and their metric names.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "api/kinds.h"
#include "api/views.h"
#include "common/cached_object.h"
#include "common/clock.h"
#include "kube/runtime/controller.h"
#include "kube/runtime/runnable.h"

namespace kubex::kube {
class EventRecorder;
class Informer;
class Metrics;
}  // namespace kubex::kube

namespace kubex::decide::policy {
class Catalog;
}

namespace kubex::observe {
class CatalogView;
class WorkloadViews;
}  // namespace kubex::observe
namespace kubex::act {
class StatusWriter;
}

namespace kubex::controllers {

struct PolicyStatusDeps {
  std::unique_ptr<act::StatusWriter> writer;
  kube::EventRecorder* events = nullptr;  // may be null (no events)
  // The current linked catalog (policies, strategies, global-config).
  const observe::CatalogView* catalog = nullptr;
  // The workloads (SEL-1 top owners) whose scope match matchedWorkloads counts; null: none.
  std::shared_ptr<const observe::WorkloadViews> workloads;
  std::string global_config_name = "global-config";  // --global-config-name
  const common::Clock* clock = nullptr;              // default: the real clock
  kube::Metrics* metrics = nullptr;                  // may be null
};

class PolicyStatusController final : public kube::Runnable,
                                     public std::enable_shared_from_this<PolicyStatusController> {
 public:
  static constexpr const char* kName = "policystatus";
  // Workload events are coalesced: a burst of Deployments created or relabelled costs one reconcile (and one
  // status write) per policy and second, not one per workload.
  static constexpr std::chrono::seconds kWorkloadCoalesce{1};

  explicit PolicyStatusController(PolicyStatusDeps deps);
  ~PolicyStatusController() override;

  // Informer wiring; call before the informers start, on a shared_ptr-owned instance.
  void watch_policies(api::Kind k, kube::Informer& informer);    // add, spec change
  void watch_strategies(api::Kind k, kube::Informer& informer);  // add, spec change, delete
  void watch_global_config(kube::Informer& informer);            // the engine's singleton only
  void watch_workloads(kube::Informer& informer);                // add, delete, label change

  // What the handlers do (tests call them directly).
  void policy_changed(api::Kind k, const std::string& ns, const std::string& name);
  void strategy_changed(api::Kind strategy_kind, const std::string& ns, const std::string& name);
  void all_changed();
  // `before`/`after` may be null (added / deleted). The policies are enqueued after kWorkloadCoalesce.
  void workload_changed(const api::WorkloadView* before, const api::WorkloadView* after);

  // One reconcile of a "<Kind>/<ns>/<name>" key. Never throws.
  kube::ReconcileOutcome reconcile(const std::string& key);

  kube::Controller& controller() { return *controller_; }
  const std::string& name() const override { return controller_->name(); }
  void start() override { controller_->start(); }
  void stop() override { controller_->stop(); }

 private:
  kube::ReconcileOutcome reconcile_policy(const std::string& key);

  PolicyStatusDeps deps_;
  const common::Clock& clock_;
  std::unique_ptr<kube::Controller> controller_;
};

}  // namespace kubex::controllers
