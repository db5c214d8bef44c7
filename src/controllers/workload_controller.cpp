#include "controllers/workload_controller.h"

#include "api/views.h"
#include "observe/actuation.h"
#include "observe/workloads.h"

namespace kubex::controllers {

namespace {

kube::ControllerOptions controller_options(const common::Clock* clock, kube::Metrics* metrics) {
  kube::ControllerOptions c;
  c.metrics = metrics;
  c.clock = clock;
  return c;
}

}  // namespace

WorkloadController::WorkloadController(const char* name, std::unique_ptr<observe::ActuationFacts> facts,
                                       const common::Clock* clock, kube::Metrics* metrics)
    : facts_(std::move(facts)),
      clock_(clock ? clock : &common::RealClock::instance()),
      controller_(
          name, [this](const std::string& key) { return reconcile(key); }, controller_options(clock, metrics)) {}

WorkloadController::~WorkloadController() {
  stop();
}

void WorkloadController::start() {
  controller_.start();
  controller_.enqueue(kAll);
}

void WorkloadController::stop() {
  controller_.stop();
}

void WorkloadController::pod_changed(const api::PodView& pod) {
  std::string key = facts_->workload_key_of(pod);
  if (!key.empty()) controller_.enqueue(key);
}

kube::ReconcileOutcome WorkloadController::reconcile(const std::string& key) {
  if (key != kAll) return reconcile_workload(key);
  for (const auto& w : facts_->workloads()) controller_.enqueue(observe::workload_key(*w));
  return kube::ReconcileResult{false, std::chrono::minutes(5)};
}

}  // namespace kubex::controllers
