// The `gpureactivepolicy` controller (SPEC §6 REA-1…REA-11): one schedule per valid reactive policy — every
// gpuReactiveCheckInterval (--reactive-check-interval overrides it for tests) and at once when the policy's
// spec or the Prometheus settings change. A cycle takes the workloads the policy wins (SEL-7), their eligible
// pods (REA-2) and the four REA-3 queries' samples (observe/signals.h), decides each workload's GPU request
// (decide/reactive) and writes it with the reactive-state under the policy kind's prefix (the other reactive
// prefix is removed), logging one `rightsizing summary` line (phase `reactive`) per workload. A failed query
// changes nothing and sets Ready=False/PrometheusQueryFailed with the error (REA-10) until a cycle succeeds.
// Pods whose samples are copies of their GPU's series (TEL-4, decide/reactive/per_pod.h) leave the cycle, and
// the policy says Ready=False/MetricsNotPerPod (naming the metric and a pair of pods) while any do.
// Counts kubex_gpu_recommendations_total{policy_kind,direction} and kubex_prometheus_queries_total{phase="reactive",result}.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/log.h"
#include "common/result.h"
#include "controllers/summary_log.h"
#include "controllers/prometheus_connector.h"
#include "controllers/recommendations_counter.h"
#include "kube/runtime/controller.h"
#include "kube/runtime/runnable.h"
#include "observe/signals.h"

namespace kubex::kube {
class Metrics;
}
namespace kubex::prom {
class Querier;
struct Options;
}  // namespace kubex::prom
namespace kubex::act {
class AnnotationWriter;
class StatusWriter;
}  // namespace kubex::act
namespace kubex::observe {
class CatalogView;
}
namespace prometheus {
class Counter;
}

namespace kubex::controllers {

struct ReactiveOptions {
  bool dry_run = false;
  std::optional<common::Duration> check_interval;  // --reactive-check-interval; default gpuReactiveCheckInterval
  std::string bearer_token_file, ca_file;          // --prometheus-bearer-token-file, --prometheus-ca-file
  const common::Clock* clock = nullptr;            // default: the real clock
  kube::Metrics* metrics = nullptr;                // may be null
};

struct ReactiveDeps {
  const observe::CatalogView* catalog = nullptr;
  std::unique_ptr<observe::SignalPods> pods;  // the workloads and their eligible pods
  std::shared_ptr<act::AnnotationWriter> annotations;
  std::unique_ptr<act::StatusWriter> status;
  std::unique_ptr<PrometheusConnector> prometheus;
};

class ReactiveRecommender final : public kube::Runnable {
 public:
  static constexpr const char* kName = "gpureactivepolicy";
  ReactiveRecommender(ReactiveDeps deps, ReactiveOptions options = {});
  ~ReactiveRecommender() override;

  const std::string& name() const override { return controller_.name(); }
  void start() override;
  void stop() override;

  // kubex's objects changed: every reactive policy is looked at; a policy whose spec (generation) or
  // Prometheus settings differ from its last cycle is evaluated at once, the others keep their schedule.
  void objects_changed() { controller_.enqueue(kAll); }

  // One reconcile: kAll or a policy key ("GpuReactivePolicy/ml/r", "ClusterGpuReactivePolicy//r").
  kube::ReconcileOutcome reconcile(const std::string& key);

 private:
  static constexpr const char* kAll = "~all";
  struct Schedule {
    std::int64_t generation = -1;
    std::string settings;  // the Prometheus settings and interval of the last cycle
    common::TimePoint next_due{};
  };
  kube::ReconcileOutcome cycle(const std::string& key);

  ReactiveDeps deps_;
  ReactiveOptions options_;
  common::Logger log_{"controller.gpureactivepolicy"};
  SummaryLog summaries_;  // OBS-4: repeated summaries at debug
  kube::Controller controller_;
  GpuRecommendationsCounter recommendations_total_;                  // OBS-5
  prometheus::Counter* queries_ok_ = nullptr;                        // kubex_prometheus_queries_total{success}
  prometheus::Counter* queries_failed_ = nullptr;                    // {error}
  std::mutex mu_;
  std::map<std::string, Schedule> schedules_;  // by policy key
};

}  // namespace kubex::controllers
