#include "controllers/static_owner.h"

#include "observe/catalog_view.h"

#include <nlohmann/json.hpp>

#include "decide/policy/match.h"
#include "decide/policy/static_owner.h"

namespace kubex::controllers {

namespace {

kube::ControllerOptions controller_options(kube::Metrics* metrics) {
  kube::ControllerOptions o;
  o.metrics = metrics;
  return o;
}

}  // namespace

StaticOwnerController::StaticOwnerController(
    std::shared_ptr<kube::Client> client, const observe::Caches& caches,
    const observe::CatalogView& catalog, kube::Metrics* metrics,
    StaticOwnerOptions options)
    : client_(std::move(client)),
      caches_(caches),
      writer_(act::client_annotation_writer(client_, options.dry_run, log_)),
      catalog_(catalog),
      options_(options),
      controller_(
          "staticpolicy", [this](const std::string& key) { return reconcile(key); },
          controller_options(metrics)),
      recommendations_total_(metrics) {}

StaticOwnerController::~StaticOwnerController() {
  stop();
}

void StaticOwnerController::start() {
  controller_.start();
  controller_.enqueue(kAll);
}

void StaticOwnerController::stop() {
  controller_.stop();
}

kube::ReconcileOutcome StaticOwnerController::reconcile(const std::string& key) {
  if (key == kAll) {
    for (const auto& w : observe::list_workloads(caches_)) controller_.enqueue(observe::workload_key(*w));
    return kube::ReconcileResult{false, options_.resync};
  }
  auto w = observe::find_workload(caches_, key);
  if (!w) return kube::ReconcileResult{};  // gone
  auto catalog = catalog_.catalog();
  decide::policy::Workload workload = observe::decision_workload(*w);
  decide::policy::Match match = decide::policy::match_policies(
      workload, catalog->candidates(), catalog->evaluation(), catalog->global().protected_namespace_patterns);
  auto targets = observe::target_containers_of(caches_, *w);
  decide::OwnerAnnotationPlan plan = decide::static_owner_annotations(match, workload, targets);
  if (plan.hold) return kube::ReconcileResult{};  // RBK-4: every matching policy is invalid
  std::vector<std::string> remove = plan.remove;
  for (const auto& k : match.stale_annotations) {
    if (!plan.desired.count(k) && workload.annotations.count(k)) remove.push_back(k);
  }
  std::map<std::string, std::string> set;
  for (const auto& [k, v] : plan.desired) {
    auto it = workload.annotations.find(k);
    if (it == workload.annotations.end() || it->second != v) set[k] = v;
  }
  std::erase_if(remove, [&](const std::string& k) { return !workload.annotations.count(k); });
  auto written =
      writer_->write(*w, set, remove, "owner annotations");
  if (!written) return std::unexpected(written.error());
  if (*written == act::OwnerWrite::kWritten) recommendations_total_.written(*w, set);  // OBS-5
  return kube::ReconcileResult{*written == act::OwnerWrite::kStale};
}

}  // namespace kubex::controllers
