// The `proactivepolicy` controller's ConfigMap part (PRO-6, PRO-1, PRO-5): loads the recommendations document
// named by GlobalConfiguration spec.proactive.recommendationsConfigMap (key `recommendations.json`) every
// recommendationReloadInterval, when global-config or kubex's policies change, and when the ConfigMap
// changes; reports the load on global-config (RecommendationsLoaded, status.recommendationReload) with a
// RecommendationReloadFailed event on failure, keeping the last good set; and writes each workload's values,
// clamped by the strategy, under the winning proactive policy's prefix in `desired-resource-requests`
// (`{"<container>":{"gpu":"0.4"}}`). The annotation is removed when the workload is no longer matched by a
// valid proactive policy or has no value any more. History-based values (PRO-2) come with the Prometheus
// recommender. Counts kubex_gpu_recommendations_total{policy_kind,direction} when a written value changes.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/log.h"
#include "act/owner_annotations.h"
#include "controllers/recommendations_counter.h"
#include "observe/workloads.h"
#include "decide/policy/catalog.h"
#include "decide/proactive/proactive.h"
#include "kube/runtime/controller.h"
#include "kube/runtime/event_recorder.h"
#include "kube/runtime/runnable.h"

namespace kubex::kube {
class Client;
class Metrics;
}  // namespace kubex::kube

namespace kubex::act {
class StatusWriter;
}
namespace kubex::observe {
struct Caches;
class CatalogView;
}

namespace kubex::controllers {

struct ProactiveOptions {
  bool dry_run = false;
  std::string global_config_name = "global-config";
  const common::Clock* clock = nullptr;  // default: the real clock
};

class ProactiveRecommendations final : public kube::Runnable {
 public:
  ProactiveRecommendations(std::shared_ptr<kube::Client> client, const observe::Caches& caches,
                           const observe::CatalogView& catalog,
                           kube::Metrics* metrics, kube::EventRecorder* events,
                           ProactiveOptions options = {});
  ~ProactiveRecommendations() override;

  const std::string& name() const override { return controller_.name(); }
  void start() override;
  void stop() override;

  void workload_changed(const api::WorkloadView& w) { controller_.enqueue(observe::workload_key(w)); }
  // Policies or global-config changed: reload (the location or interval may have changed) and re-evaluate.
  void policies_changed() { controller_.enqueue(kReload); }

  kube::ReconcileOutcome reconcile(const std::string& key);

 private:
  static constexpr const char* kReload = "~reload";
  kube::ReconcileOutcome reload();
  kube::ReconcileOutcome reconcile_workload(const std::string& key);
  void watch_loop();
  void report(bool ok, const std::string& reason, const std::string& message, std::size_t count);

  std::shared_ptr<kube::Client> client_;
  common::Logger log_{"controller.proactivepolicy"};  // before writer_, which logs with it
  const observe::Caches& caches_;
  std::shared_ptr<act::AnnotationWriter> writer_;  // the owner annotations (dry-run aware)
  std::unique_ptr<act::StatusWriter> status_writer_;  // global-config status (RecommendationsLoaded, PRO-6)
  const observe::CatalogView& catalog_;
  kube::EventRecorder* events_;
  ProactiveOptions options_;
  kube::Controller controller_;
  GpuRecommendationsCounter recommendations_total_;  // OBS-5

  std::mutex mu_;
  std::optional<decide::RecommendationSet> set_;  // the last good document
  std::string location_;                          // "ns/name" it came from
  std::string loaded_rv_;                         // resourceVersion of the ConfigMap last read
  std::atomic<bool> stop_{false};
  std::thread watcher_;
};

}  // namespace kubex::controllers
