// The `rollback` controller (SPEC §8 RBK-1…RBK-4): keeps each managed workload's owner annotation
// `rightsizing.kubex.ai/rollback-state` (what it looked like before kubex, what kubex last applied, the resize
// history), and puts a workload back the way it was when it leaves management: phase RollingBack, the
// desired-resource-* and reactive-state annotations removed, every pod carrying pod-rightsizing-info evicted
// through ACT-2…ACT-5 with the recorded strategy's settings (its replacement is admitted unmutated), then the
// state removed. A workload matched again during a rollback goes back to Managed (RBK-3); one on hold (RBK-4)
// is left alone. Per workload, on owner and pod events, on changes of kubex's objects and at least every minute.
// The decisions are decide::actuation's (rollback.h, decide()); this composes observe → decide → act.
#pragma once

#include <memory>
#include <string>

#include "common/clock.h"
#include "common/log.h"
#include "controllers/summary_log.h"
#include "controllers/workload_evictions.h"
#include "controllers/workload_controller.h"
#include "observe/actuation.h"

namespace kubex::kube {
class EventRecorder;
class Metrics;
}  // namespace kubex::kube
namespace kubex::act {
class AnnotationWriter;
class Evictor;
class PodAnnotationWriter;
}  // namespace kubex::act

namespace kubex::controllers {

class WebhookHealthSignal;

struct RollbackDeps {
  const observe::CatalogView* catalog = nullptr;
  std::unique_ptr<observe::ActuationFacts> facts;
  std::shared_ptr<act::Evictor> evictor;
  std::shared_ptr<act::PodAnnotationWriter> pod_annotations;
  std::shared_ptr<act::AnnotationWriter> owner_annotations;
  kube::EventRecorder* events = nullptr;               // may be null
  std::shared_ptr<const WebhookHealthSignal> webhook;  // PodAdmissionWebhookHealthy (ACT-2); null = healthy
};

struct RollbackOptions {
  bool dry_run = false;                  // --dry-run: no rollback-state is written, nothing is evicted
  const common::Clock* clock = nullptr;  // default: the real clock
  kube::Metrics* metrics = nullptr;      // may be null
};

class RollbackController final : public WorkloadController {
 public:
  static constexpr const char* kName = "rollback";
  RollbackController(RollbackDeps deps, RollbackOptions options = {});
  ~RollbackController() override;

 private:
  kube::ReconcileOutcome reconcile_workload(const std::string& key) override;
  // RBK-2 (2): the pods still carrying pod-rightsizing-info go through ACT-2…ACT-5.
  decide::actuation::Result roll_pods(const std::string& key, const WorkloadContext& w, const std::string& strategy,
                                      common::TimePoint now, common::Duration& requeue);
  void owner_event(const WorkloadContext& w, const char* reason, const std::string& message);

  RollbackDeps deps_;
  RollbackOptions options_;
  common::Logger log_{"controller.rollback"};
  SummaryLog summaries_;  // OBS-4: repeated summaries at debug
  EvictionMemories memory_;  // ACT-5 memory of the rollback evictions, by workload key
};

}  // namespace kubex::controllers
