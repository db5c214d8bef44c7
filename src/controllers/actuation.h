// The `actuation` controller (SPEC §8 ACT-1…ACT-8): applies a workload's new GPU size to its running pods by
// eviction, safely. Per workload, on owner and pod events and at least every minute: run the admission
// decision on the pod template (ACT-1; a live pod for Models and StrimziPodSets), compare it with each
// controller-owned pod's live GPU allocation, and let decide::actuation choose which differing pod may go now
// (ACT-2 preconditions, ACT-3 budget and order, ACT-5 PDB memory, ACT-7 loop guard). Evictions go through
// act::Evictor (policy/v1 Eviction; a PDB refusal is a 429); the replacement pod passes admission and gets
// the new value. Records PolicyEvaluationEvictResize / EvictionBlocked / WouldEvict / ReplacementNotMutated
// events, the pods' automation-constraints when their set of reasons changes (OBS-3), and one
// `rightsizing summary` line per reconcile (phase `actuation`). --dry-run evicts nothing (ACT-8).
//
// A workload that is not managed, or on hold (RBK-4), is left alone here: rollback-state and rolling back a
// workload that leaves management (RBK-1…3) are the `rollback` controller's (controllers/rollback.h).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common/clock.h"
#include "common/log.h"
#include "controllers/summary_log.h"
#include "controllers/workload_evictions.h"
#include "controllers/workload_controller.h"
#include "controllers/workload_gpus_gauge.h"
#include "decide/actuation/actuation.h"
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
namespace kubex::observe {
class CatalogView;
}

namespace kubex::controllers {

class WebhookHealthSignal;

struct ActuationDeps {
  const observe::CatalogView* catalog = nullptr;
  std::unique_ptr<observe::ActuationFacts> facts;
  std::shared_ptr<act::Evictor> evictor;
  std::shared_ptr<act::PodAnnotationWriter> pod_annotations;
  std::shared_ptr<act::AnnotationWriter> owner_annotations;  // ACT-9 actuation-state; null = in process only
  kube::EventRecorder* events = nullptr;                 // may be null
  std::shared_ptr<const WebhookHealthSignal> webhook;    // PodAdmissionWebhookHealthy (ACT-2); null = healthy
};

struct ActuationOptions {
  bool dry_run = false;                  // --dry-run (ACT-8)
  const common::Clock* clock = nullptr;  // default: the real clock
  kube::Metrics* metrics = nullptr;      // may be null
};

class ActuationController final : public WorkloadController {
 public:
  static constexpr const char* kName = "actuation";
  ActuationController(ActuationDeps deps, ActuationOptions options = {});
  ~ActuationController() override;

 private:
  kube::ReconcileOutcome reconcile_workload(const std::string& key) override;
  void publish_gpus(const std::string& key, const WorkloadContext& w,
                    const std::vector<decide::actuation::PodFacts>& pods);

  ActuationDeps deps_;
  ActuationOptions options_;
  common::Logger log_{"controller.actuation"};
  SummaryLog summaries_;  // OBS-4: repeated summaries at debug
  EvictionMemories memory_;  // ACT-5/ACT-7 memory by workload key (a cache of actuation-state, ACT-9)
  WorkloadGpusGauge gpus_;   // kubex_workload_gpus (RPT-5)
};

}  // namespace kubex::controllers
