// The `strategy` controller (OBS-1, OBS-2, VAL-1, VAL-6, API-4): the validity of kubex's objects that are not
// managing policies. AutomationStrategy, ClusterAutomationStrategy and PolicyEvaluation get `Valid`;
// GlobalConfiguration gets `Valid` too (a kubex addition: OBS-1 has no validity condition for it); a
// GlobalConfiguration or PolicyEvaluation with another name than the engine's singleton is ignored by the
// engine and reports `Valid=False/InvalidSpec` (`metadata.name: must be "global-config"`); an invalid
// GpuConsolidationPolicy gets `Available=False/InvalidContract|InvalidSpec` (a valid one is left to the
// consolidation controller). Objects that become invalid get a Warning event InvalidSpec/InvalidContract.
// The verdict is the one validator's (api/validate.h), computed from the object's current version when the
// informer cached it; invalid objects are requeued after 5m, and nothing else is done with them.
#pragma once

#include <memory>
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
class StatusWriter;
}
namespace kubex::observe {
class KubexObjects;
}

namespace kubex::api {
struct StrategyObject;
}

namespace kubex::controllers {

struct ObjectId;

struct ValidityStatusDeps {
  std::unique_ptr<act::StatusWriter> writer;
  kube::EventRecorder* events = nullptr;  // may be null (no events)
  // kubex's cached objects, read by kind and informer key (observe::CatalogCache in the engine).
  const observe::KubexObjects* objects = nullptr;
  std::string global_config_name = "global-config";          // --global-config-name
  std::string policy_evaluation_name = "policy-evaluation";  // --policy-evaluation-name
  const common::Clock* clock = nullptr;                      // default: the real clock
  kube::Metrics* metrics = nullptr;  // controller_runtime_* and workqueue_*; may be null
};

class ValidityStatusController final : public kube::Runnable,
                                       public std::enable_shared_from_this<ValidityStatusController> {
 public:
  static constexpr const char* kName = "strategy";  // OBS-5 controller label

  explicit ValidityStatusController(ValidityStatusDeps deps);
  ~ValidityStatusController() override;

  // Both strategy kinds, GpuConsolidationPolicy, GlobalConfiguration and PolicyEvaluation.
  static bool handles(api::Kind k);

  // Enqueues the informer's objects on add and on spec changes (metadata.generation); the controller's own
  // status writes do not come back as work. Call before the informer starts, on a shared_ptr-owned instance.
  void watch(api::Kind k, kube::Informer& informer);
  void enqueue(api::Kind k, const common::CachedObject& o);

  // One reconcile of a "<Kind>/<ns>/<name>" key (controllers/status_support.h). Never throws.
  kube::ReconcileOutcome reconcile(const std::string& key);

  kube::Controller& controller() { return *controller_; }
  const std::string& name() const override { return controller_->name(); }
  void start() override { controller_->start(); }
  void stop() override { controller_->stop(); }

 private:
  kube::ReconcileOutcome reconcile_object(const std::string& key);
  void warn_hard_caps(const ObjectId& id, const api::StrategyObject& strategy);

  ValidityStatusDeps deps_;
  const common::Clock& clock_;
  std::unique_ptr<kube::Controller> controller_;
};

}  // namespace kubex::controllers
