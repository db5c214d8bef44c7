// The `proactivepolicy` controller (SPEC §7 PRO-1…PRO-8). Its two sources: the recommendations document named by
// GlobalConfiguration spec.proactive.recommendationsConfigMap (key `recommendations.json`, PRO-6), loaded every
// recommendationReloadInterval, when global-config or kubex's policies change and when the ConfigMap changes, and
// reported on global-config (RecommendationsLoaded, status.recommendationReload, RecommendationReloadFailed events;
// the last good set is kept); and each workload's own GPU history in Prometheus (PRO-2, controllers/
// proactive_history.h, read off the reconcile workers). Each workload the winning proactive policy governs gets, under
// that policy's prefix, `desired-resource-requests` (`{"<container>":{"gpu":"0.36"}}`), the memory peak as
// `desired-resource-limits` gpu and `proactive-state` (decide/proactive/owner_values.h: ConfigMap over history, a
// history value kept while it cannot be refreshed). They are removed when the workload leaves the policy.
// Nothing is written before the sources are loaded (the ConfigMap read and the policy's history attempted): a
// starting engine (restart, new leader) never removes a value and writes it again a second later. One
// `rightsizing summary` line (phase `proactive`, with `source`) per reconcile; kubex_gpu_recommendations_total when a
// written value changes.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/clock.h"
#include "common/log.h"
#include "controllers/summary_log.h"
#include "controllers/proactive_history.h"
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
class HistorySubjects;
struct ConfigMapEvent;
}  // namespace kubex::observe
namespace kubex::decide {
struct OwnerValues;
}
namespace kubex::decide::policy {
struct Match;
struct Workload;
}  // namespace kubex::decide::policy

namespace kubex::controllers {

struct ProactiveDeps {
  const observe::CatalogView* catalog = nullptr;
  std::shared_ptr<const observe::WorkloadViews> workloads;
  std::shared_ptr<act::AnnotationWriter> annotations;  // the owner annotations (dry-run aware)
  std::unique_ptr<act::StatusWriter> status;           // global-config status (RecommendationsLoaded, PRO-6)
  std::unique_ptr<observe::ConfigMapSource> config_maps;  // the recommendations ConfigMap
  kube::EventRecorder* events = nullptr;                  // may be null (no events)
  // The history source (PRO-2). Without a connector (ConfigMap-only controller tests) no history is read and
  // nothing waits for it.
  std::unique_ptr<PrometheusConnector> prometheus;
  std::unique_ptr<observe::HistorySubjects> subjects;  // current allocations (PRO-4)
  std::unique_ptr<act::StatusWriter> policy_status;    // the proactive policies' status (PRO-8)
};

struct ProactiveOptions {
  std::string global_config_name = "global-config";
  bool dry_run = false;                  // --dry-run: copied to the summary lines (the writer writes nothing)
  const common::Clock* clock = nullptr;  // default: the real clock
  kube::Metrics* metrics = nullptr;      // may be null
  std::string bearer_token_file, ca_file;  // --prometheus-bearer-token-file, --prometheus-ca-file
  // Per-batch back-off of a failed history query (HistoryEvaluationOptions); controller tests set none.
  std::vector<common::Duration> history_retry_after = {std::chrono::seconds(1), std::chrono::seconds(2)};
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
  void policies_changed() {
    controller_.enqueue(kReload);
    if (history_) history_->wake();
  }
  // An event of the followed ConfigMap (the source's watch): reloads unless it replays the version last read.
  void config_map_changed(const observe::ConfigMapEvent& event);

  // One reconcile: kReload or a workload key (tests call it directly).
  kube::ReconcileOutcome reconcile(const std::string& key);
  kube::WorkQueue& queue() { return controller_.queue(); }
  // The history part (null without a Prometheus connector); tests run its evaluations with run_due().
  HistoryEvaluations* history() { return history_.get(); }

  static constexpr const char* kReload = "~reload";

 private:
  kube::ReconcileOutcome reload();
  kube::ReconcileOutcome reconcile_workload(const std::string& key);
  void report(bool ok, const std::string& reason, const std::string& message, std::size_t count);
  void follow(const std::string& ns, const std::string& name);
  // What the owner should hold under the winner's prefix; nullopt while the winner's history was never attempted.
  std::optional<decide::OwnerValues> owner_values(const api::WorkloadView& w, const decide::policy::Workload& workload,
                                                  const decide::policy::Match& match, bool note_first_match);
  std::int64_t recommended_workloads(const std::string& policy);  // PRO-8 recommendedWorkloads

  ProactiveDeps deps_;
  ProactiveOptions options_;
  common::Logger log_{kLogger};
  SummaryLog summaries_;  // OBS-4: repeated summaries at debug
  kube::Controller controller_;
  GpuRecommendationsCounter recommendations_total_;  // OBS-5
  std::unique_ptr<HistoryEvaluations> history_;

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
