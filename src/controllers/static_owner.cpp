#include "controllers/static_owner.h"

#include <nlohmann/json.hpp>

#include "act/owner_annotations.h"
#include "decide/policy/catalog.h"
#include "decide/policy/match.h"
#include "decide/policy/static_owner.h"
#include "observe/catalog_view.h"

namespace kubex::controllers {

namespace {

kube::ControllerOptions controller_options(kube::Metrics* metrics) {
  kube::ControllerOptions o;
  o.metrics = metrics;
  return o;
}

}  // namespace

StaticOwnerController::StaticOwnerController(StaticOwnerDeps deps, StaticOwnerOptions options)
    : deps_(std::move(deps)),
      options_(options),
      controller_(
          kName, [this](const std::string& key) { return reconcile(key); },
          controller_options(options_.metrics)),
      recommendations_total_(options_.metrics) {}

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
    for (const auto& w : deps_.workloads->list()) controller_.enqueue(observe::workload_key(*w));
    return kube::ReconcileResult{false, options_.resync};
  }
  auto w = deps_.workloads->find(key);
  if (!w) return kube::ReconcileResult{};  // gone
  auto catalog = deps_.catalog->catalog();
  decide::policy::Workload workload = observe::decision_workload(*w);
  decide::policy::Match match = decide::policy::match_policies(
      workload, catalog->candidates(), catalog->evaluation(), catalog->global().protected_namespace_patterns);
  auto targets = deps_.workloads->target_containers(*w);
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
  auto written = deps_.annotations->write(*w, set, remove, "owner annotations");
  if (!written) return std::unexpected(written.error());
  if (*written == act::OwnerWrite::kWritten) recommendations_total_.written(*w, set);  // OBS-5
  return kube::ReconcileResult{*written == act::OwnerWrite::kStale};
}

}  // namespace kubex::controllers
