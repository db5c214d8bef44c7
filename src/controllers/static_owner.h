// The `staticpolicy` controller: keeps every workload's static owner annotations (SEL-7, SPEC §2:
// `static.`/`cwstatic.rightsizing.kubex.ai/desired-resource-requests|limits`) equal to the merged static
// result of the policies matching it, so users and admission read the same desired state; also drops the
// owner annotations SEL-7 says belong to no recommender any more. Level-triggered per workload; all workloads
// are re-evaluated when kubex's objects change and every resync period. With --dry-run nothing is written.
// Counts kubex_gpu_recommendations_total{policy_kind="StaticPolicy|ClusterStaticPolicy",direction} when a
// written GPU value changes (OBS-5).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "common/log.h"
#include "act/owner_annotations.h"
#include "controllers/recommendations_counter.h"
#include "observe/workloads.h"
#include "decide/policy/catalog.h"
#include "kube/runtime/controller.h"
#include "kube/runtime/runnable.h"

namespace kubex::kube {
class Client;
class Metrics;
}  // namespace kubex::kube

namespace kubex::observe {
struct Caches;
class CatalogView;
}

namespace kubex::controllers {

struct StaticOwnerOptions {
  bool dry_run = false;
  common::Duration resync = std::chrono::minutes(5);
};

class StaticOwnerController final : public kube::Runnable {
 public:
  StaticOwnerController(std::shared_ptr<kube::Client> client, const observe::Caches& caches,
                        const observe::CatalogView& catalog,
                        kube::Metrics* metrics, StaticOwnerOptions options = {});
  ~StaticOwnerController() override;

  const std::string& name() const override { return controller_.name(); }
  void start() override;
  void stop() override;

  // Event hooks.
  void workload_changed(const api::WorkloadView& w) { controller_.enqueue(observe::workload_key(w)); }
  void policies_changed() { controller_.enqueue(kAll); }

  // One reconcile (tests call it directly).
  kube::ReconcileOutcome reconcile(const std::string& key);

 private:
  static constexpr const char* kAll = "~all";

  std::shared_ptr<kube::Client> client_;
  common::Logger log_{"controller.staticpolicy"};  // before writer_, which logs with it
  const observe::Caches& caches_;
  std::shared_ptr<act::AnnotationWriter> writer_;  // the owner annotations (dry-run aware)
  const observe::CatalogView& catalog_;
  StaticOwnerOptions options_;
  kube::Controller controller_;
  GpuRecommendationsCounter recommendations_total_;  // OBS-5: the static GPU values written
};

}  // namespace kubex::controllers
