#include "kube/runtime/controller.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <nlohmann/json.hpp>

namespace kubex::kube {

namespace {

WorkQueueOptions queue_options(const std::string& name, ControllerOptions& o) {
  WorkQueueOptions q;
  q.name = name;
  q.clock = o.clock;
  q.rate_limiter = std::move(o.rate_limiter);
  if (o.metrics) q.metrics = o.metrics->queue_metrics(name);
  return q;
}

}  // namespace

Controller::Controller(std::string name, Reconciler reconcile, ControllerOptions options)
    : name_(std::move(name)),
      reconcile_(std::move(reconcile)),
      workers_(std::max(1, options.workers)),
      metrics_(options.metrics ? options.metrics->controller_metrics(name_) : nullptr),
      queue_(queue_options(name_, options)),
      log_("controller." + name_) {}

Controller::~Controller() {
  stop();
}

void Controller::start() {
  if (started_) return;
  started_ = true;
  log_.info("starting workers", {{"controller", name_}, {"workers", workers_}});
  for (int i = 0; i < workers_; ++i) {
    threads_.emplace_back([this] {
      while (process_next_work_item()) {
      }
    });
  }
}

void Controller::stop() {
  queue_.shutdown();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  if (!threads_.empty()) log_.info("all workers finished", {{"controller", name_}});
  threads_.clear();
}

bool Controller::process_next_work_item() {
  auto key = queue_.get();
  if (!key) return false;
  reconcile_key(*key);
  queue_.done(*key);
  return true;
}

std::string_view Controller::reconcile_key(const std::string& key) {
  auto t0 = std::chrono::steady_clock::now();
  ReconcileOutcome outcome = std::unexpected(std::string("reconcile did not run"));
  try {
    outcome = reconcile_(key);
  } catch (const std::exception& e) {
    outcome = std::unexpected(std::string("panic: ") + e.what());
  } catch (...) {
    outcome = std::unexpected(std::string("panic: unknown exception"));
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string_view result;
  if (!outcome) {
    queue_.add_rate_limited(key);
    result = "error";
    log_.error("Reconciler error", {{"controller", name_}, {"key", key}, {"error", outcome.error()}});
  } else if (outcome->requeue_after > common::Duration::zero()) {
    queue_.forget(key);
    queue_.add_after(key, outcome->requeue_after);
    result = "requeue_after";
  } else if (outcome->requeue) {
    queue_.add_rate_limited(key);
    result = "requeue";
  } else {
    queue_.forget(key);
    result = "success";
  }
  if (metrics_) metrics_->reconciled(result, seconds);
  return result;
}

}  // namespace kubex::kube
