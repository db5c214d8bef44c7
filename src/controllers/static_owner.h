// The `staticpolicy` controller: keeps every workload's static owner annotations (SEL-7, SPEC §2:
// `static.`/`cwstatic.rightsizing.kubex.ai/desired-resource-requests|limits`) equal to the merged static
// result of the policies matching it, so users and admission read the same desired state; also drops the
// owner annotations SEL-7 says belong to no recommender any more. Level-triggered per workload; all workloads
// are re-evaluated when kubex's objects change and every resync period. With --dry-run nothing is written
// (the annotation writer only logs). Counts kubex_gpu_recommendations_total{policy_kind="StaticPolicy|
// ClusterStaticPolicy",direction} when a written GPU value changes (OBS-5).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "controllers/recommendations_counter.h"
#include "kube/runtime/controller.h"
#include "kube/runtime/runnable.h"
#include "observe/workloads.h"

namespace kubex::kube {
class Metrics;
}
namespace kubex::act {
class AnnotationWriter;
}
namespace kubex::observe {
class CatalogView;
}

namespace kubex::controllers {

struct StaticOwnerDeps {
  const observe::CatalogView* catalog = nullptr;
  std::shared_ptr<const observe::WorkloadViews> workloads;
  std::shared_ptr<act::AnnotationWriter> annotations;  // the owner annotations (dry-run aware)
};

struct StaticOwnerOptions {
  common::Duration resync = std::chrono::minutes(5);
  kube::Metrics* metrics = nullptr;  // may be null
};

class StaticOwnerController final : public kube::Runnable {
 public:
  static constexpr const char* kName = "staticpolicy";
  static constexpr const char* kLogger = "controller.staticpolicy";  // the annotation writer's

  explicit StaticOwnerController(StaticOwnerDeps deps, StaticOwnerOptions options = {});
  ~StaticOwnerController() override;

  const std::string& name() const override { return controller_.name(); }
  void start() override;
  void stop() override;

  // Event hooks.
  void workload_changed(const api::WorkloadView& w) { controller_.enqueue(observe::workload_key(w)); }
  void policies_changed() { controller_.enqueue(kAll); }

  // One reconcile: kAll or a workload key (tests call it directly).
  kube::ReconcileOutcome reconcile(const std::string& key);
  kube::WorkQueue& queue() { return controller_.queue(); }

  static constexpr const char* kAll = "~all";

 private:
  StaticOwnerDeps deps_;
  StaticOwnerOptions options_;
  kube::Controller controller_;
  GpuRecommendationsCounter recommendations_total_;  // OBS-5: the static GPU values written
};

}  // namespace kubex::controllers
