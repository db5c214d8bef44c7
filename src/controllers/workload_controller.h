// What the `actuation` and `rollback` controllers share around their reconcile: one kube::Controller queue keyed
// by workload (observe::workload_key), fed by owner and pod events and by changes of kubex's own objects (every
// workload, then again every 5 minutes); the reconcile of one key is the subclass's. A subclass calls stop() in
// its destructor, before its own members go.
#pragma once

#include <memory>
#include <string>

#include "common/clock.h"
#include "kube/runtime/controller.h"
#include "kube/runtime/runnable.h"

namespace kubex::api {
struct PodView;
}
namespace kubex::kube {
class Metrics;
}
namespace kubex::observe {
class ActuationFacts;
}

namespace kubex::controllers {

class WorkloadController : public kube::Runnable {
 public:
  WorkloadController(const char* name, std::unique_ptr<observe::ActuationFacts> facts, const common::Clock* clock,
                     kube::Metrics* metrics);
  ~WorkloadController() override;

  const std::string& name() const override { return controller_.name(); }
  void start() override;
  void stop() override;

  // Event hooks (the engine's informers).
  void workload_changed(const std::string& key) { controller_.enqueue(key); }
  void pod_changed(const api::PodView& pod);
  void all_changed() { controller_.enqueue(kAll); }

  kube::ReconcileOutcome reconcile(const std::string& key);

 protected:
  virtual kube::ReconcileOutcome reconcile_workload(const std::string& key) = 0;
  const observe::ActuationFacts& facts() const { return *facts_; }
  common::TimePoint now() const { return clock_->now(); }

 private:
  static constexpr const char* kAll = "~all";
  std::unique_ptr<observe::ActuationFacts> facts_;
  const common::Clock* clock_;
  kube::Controller controller_;
};

}  // namespace kubex::controllers
