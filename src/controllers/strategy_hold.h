// The `strategyhold` controller (VAL-4 "strategy DELETE"): a strategy that policies reference carries the
// finalizer `rightsizing.kubex.ai/referenced`, so that deleting it is allowed and completes once its last
// referencing policy is gone; while it is held its status says `Terminating=True/StillReferenced` ("still
// referenced by <Kind>/<name>"). The finalizer is added to referenced strategies and removed from
// unreferenced ones (decide/status/strategy_hold.h), through the lease-gated writer (ENG-1, ACT-9). Strategies
// are looked at when they change (add, spec change, deletion mark) and whenever a policy is added, changed or
// deleted (catalog notifications). Leader-only.
#pragma once

#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "api/kinds.h"
#include "common/cached_object.h"
#include "common/clock.h"
#include "kube/runtime/controller.h"
#include "kube/runtime/runnable.h"

namespace kubex::kube {
class EventRecorder;
class Informer;
class Metrics;
}  // namespace kubex::kube

namespace kubex::act {
class FinalizerWriter;
class StatusWriter;
}  // namespace kubex::act
namespace kubex::observe {
class CatalogView;
class KubexObjects;
}  // namespace kubex::observe

namespace kubex::controllers {

struct StrategyHoldDeps {
  std::shared_ptr<act::FinalizerWriter> finalizers;  // the lease-gated writer in the engine
  std::unique_ptr<act::StatusWriter> writer;
  kube::EventRecorder* events = nullptr;  // may be null
  const observe::CatalogView* catalog = nullptr;   // who references a strategy
  const observe::KubexObjects* objects = nullptr;  // the cached strategies
  const common::Clock* clock = nullptr;            // default: the real clock
  kube::Metrics* metrics = nullptr;                // may be null
};

class StrategyHoldController final : public kube::Runnable,
                                     public std::enable_shared_from_this<StrategyHoldController> {
 public:
  static constexpr const char* kName = "strategyhold";

  explicit StrategyHoldController(StrategyHoldDeps deps);
  ~StrategyHoldController() override;

  // Call before the informers start, on a shared_ptr-owned instance.
  void watch_strategies(api::Kind k, kube::Informer& informer);
  // A strategy was added, changed or deleted.
  void strategy_changed(api::Kind k, const std::string& ns, const std::string& name, bool gone);
  // A policy was added, changed or deleted: every known strategy is looked at again.
  void policies_changed();

  // One reconcile of a "<Kind>/<ns>/<name>" key (controllers/status_support.h). Never throws.
  kube::ReconcileOutcome reconcile(const std::string& key);

  kube::Controller& controller() { return *controller_; }
  const std::string& name() const override { return controller_->name(); }
  void start() override { controller_->start(); }
  void stop() override { controller_->stop(); }

 private:
  kube::ReconcileOutcome reconcile_object(const std::string& key);

  StrategyHoldDeps deps_;
  const common::Clock& clock_;
  std::unique_ptr<kube::Controller> controller_;
  std::mutex mu_;
  std::set<std::string> known_;  // the keys of the strategies the informers hold
};

}  // namespace kubex::controllers
