// The `proactivepolicy` controller's ConfigMap part (PRO-6, PRO-1, PRO-5): loads the recommendations document
// named by GlobalConfiguration spec.proactive.recommendationsConfigMap (key `recommendations.json`) every
// recommendationReloadInterval, when global-config or kubex's policies change, and when the ConfigMap
// changes; reports the load on global-config (RecommendationsLoaded, status.recommendationReload) with a
// RecommendationReloadFailed event on failure, keeping the last good set; and writes each workload's values,
// clamped by the strategy, under the winning proactive policy's prefix in `desired-resource-requests`
// (`{"<container>":{"gpu":"0.4"}}`). The annotation is removed when the workload is no longer matched by a
// valid proactive policy or has no value any more. Nothing is written before the first load has an answer (issue 24
// item 4: no flapping at engine start). History-based values (PRO-2) come with the Prometheus recommender. Counts kubex_gpu_recommendations_total{policy_kind,direction} when a written value changes.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/clock.h"
#include "common/log.h"
#include "controllers/recommendations_counter.h"
#include "decide/proactive/proactive.h"
#include "kube/runtime/controller.h"
#include "kube/runtime/event_recorder.h"
#include "kube/runtime/runnable.h"
#include "observe/workloads.h"

namespace kubex::kube {
class Metrics;
}

namespace kubex::act {
class AnnotationWriter;
class StatusWriter;
}  // namespace kubex::act
namespace kubex::observe {
class CatalogView;
class ConfigMapSource;
struct ConfigMapEvent;
}  // namespace kubex::observe

namespace kubex::controllers {

struct ProactiveDeps {
  const observe::CatalogView* catalog = nullptr;
  std::shared_ptr<const observe::WorkloadViews> workloads;
  std::shared_ptr<act::AnnotationWriter> annotations;  // the owner annotations (dry-run aware)
  std::unique_ptr<act::StatusWriter> status;           // global-config status (RecommendationsLoaded, PRO-6)
  std::unique_ptr<observe::ConfigMapSource> config_maps;  // the recommendations ConfigMap
  kube::EventRecorder* events = nullptr;                  // may be null (no events)
};

struct ProactiveOptions {
  std::string global_config_name = "global-config";
  bool dry_run = false;                  // --dry-run: copied to the summary lines (the writer writes nothing)
  const common::Clock* clock = nullptr;  // default: the real clock
  kube::Metrics* metrics = nullptr;      // may be null
};

class ProactiveRecommendations final : public kube::Runnable {
 public:
  static constexpr const char* kName = "proactivepolicy";
  static constexpr const char* kLogger = "controller.proactivepolicy";  // also the annotation writer's

  ProactiveRecommendations(ProactiveDeps deps, ProactiveOptions options = {});
  ~ProactiveRecommendations() override;

  const std::string& name() const override { return controller_.name(); }
  void start() override;
  void stop() override;

  void workload_changed(const api::WorkloadView& w) { controller_.enqueue(observe::workload_key(w)); }
  // Policies or global-config changed: reload (the location or interval may have changed) and re-evaluate.
  void policies_changed() { controller_.enqueue(kReload); }
  // An event of the followed ConfigMap (the source's watch): reloads unless it replays the version last read.
  void config_map_changed(const observe::ConfigMapEvent& event);

  // One reconcile: kReload or a workload key (tests call it directly).
  kube::ReconcileOutcome reconcile(const std::string& key);
  kube::WorkQueue& queue() { return controller_.queue(); }

  static constexpr const char* kReload = "~reload";

 private:
  kube::ReconcileOutcome reload();
  kube::ReconcileOutcome reconcile_workload(const std::string& key);
  void report(bool ok, const std::string& reason, const std::string& message, std::size_t count);
  void follow(const std::string& ns, const std::string& name);

  ProactiveDeps deps_;
  ProactiveOptions options_;
  common::Logger log_{kLogger};
  kube::Controller controller_;
  GpuRecommendationsCounter recommendations_total_;  // OBS-5

  std::mutex mu_;
  std::optional<decide::RecommendationSet> set_;  // the last good document
  std::string location_;                          // "ns/name" it came from
  std::string loaded_rv_;                         // resourceVersion of the ConfigMap last read
  std::string followed_;                          // "ns/name" the source follows, "" for none
  // The first load attempt has an answer (a set, or a definitive failure). Until then no workload is written: a
  // starting engine (restart, new leader) never removes a value and writes it again a second later.
  bool sources_loaded_ = false;
};

}  // namespace kubex::controllers
