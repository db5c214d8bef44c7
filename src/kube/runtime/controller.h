// A controller (controller-runtime's model, DESIGN §7): N workers take keys from a rate-limited work queue
// and run a level-triggered reconcile(key) that recomputes everything from the caches. The outcome decides
// what happens to the key next:
//   error            -> add_rate_limited (per-key exponential back-off)   result="error"
//   requeue_after>0  -> forget + add_after(requeue_after)                 result="requeue_after"
//   requeue          -> add_rate_limited                                   result="requeue"
//   success          -> forget                                             result="success"
// An exception thrown by reconcile is caught, logged and counted as an error.
#pragma once

#include <expected>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/log.h"
#include "kube/runtime/metrics.h"
#include "kube/runtime/runnable.h"
#include "kube/runtime/workqueue.h"

namespace kubex::kube {

struct ReconcileResult {
  bool requeue = false;
  common::Duration requeue_after{0};
};
using ReconcileOutcome = std::expected<ReconcileResult, std::string>;
using Reconciler = std::function<ReconcileOutcome(const std::string& key)>;

struct ControllerOptions {
  int workers = 1;
  const common::Clock* clock = nullptr;            // default: the real clock
  std::unique_ptr<QueueRateLimiter> rate_limiter;  // default: default_controller_rate_limiter(clock)
  Metrics* metrics = nullptr;                      // may be null
};

class Controller final : public Runnable {
 public:
  Controller(std::string name, Reconciler reconcile, ControllerOptions options = {});
  ~Controller() override;
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  const std::string& name() const override { return name_; }
  void start() override;
  void stop() override;

  // Event handlers call this (before or after start; keys wait in the queue until the workers run).
  void enqueue(const std::string& key) { queue_.add(key); }
  WorkQueue& queue() { return queue_; }

  // Takes one key (blocking) and reconciles it; false once the queue has shut down. Workers loop on this.
  bool process_next_work_item();
  // Reconciles `key` (already taken from the queue) and applies the outcome; returns the result label.
  std::string_view reconcile_key(const std::string& key);

 private:
  std::string name_;
  Reconciler reconcile_;
  int workers_;
  std::shared_ptr<ControllerMetrics> metrics_;
  WorkQueue queue_;
  std::vector<std::thread> threads_;
  bool started_ = false;
  common::Logger log_;
};

}  // namespace kubex::kube
