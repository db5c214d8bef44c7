// A rate-limited, delaying, de-duplicating work queue of string keys (DESIGN §3 kube/runtime), modelled on
// client-go's workqueue: a key is queued at most once; a key added while it is being processed is queued
// again after done(); add_after() holds keys until their time; add_rate_limited() delays by the rate
// limiter (per-item exponential back-off combined with an overall token bucket).
//
// Time comes from an injected common::Clock. get() blocks in real time; tests drive the queue with a
// FakeClock and the non-blocking try_get().
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/clock.h"
#include "kube/runtime/metrics.h"

namespace kubex::kube {

using Millis = std::chrono::milliseconds;

// How long a key waits before its next attempt.
class QueueRateLimiter {
 public:
  virtual ~QueueRateLimiter() = default;
  virtual common::Duration when(const std::string& key) = 0;  // records one more failure of `key`
  virtual void forget(const std::string& key) = 0;            // `key` succeeded: reset its history
  virtual int num_requeues(const std::string& key) = 0;
};

// base * 2^failures, capped at `max` (client-go ItemExponentialFailureRateLimiter).
class ItemExponentialRateLimiter final : public QueueRateLimiter {
 public:
  ItemExponentialRateLimiter(common::Duration base, common::Duration max) : base_(base), max_(max) {}
  common::Duration when(const std::string& key) override;
  void forget(const std::string& key) override;
  int num_requeues(const std::string& key) override;

 private:
  std::mutex mu_;
  common::Duration base_, max_;
  std::unordered_map<std::string, int> failures_;
};

// An overall token bucket: `qps` tokens per second, `burst` stored (client-go BucketRateLimiter). Every
// call reserves one token; the delay is how long until that token exists.
class BucketRateLimiter final : public QueueRateLimiter {
 public:
  BucketRateLimiter(double qps, int burst, const common::Clock& clock);
  common::Duration when(const std::string& key) override;
  void forget(const std::string&) override {}
  int num_requeues(const std::string&) override { return 0; }

 private:
  std::mutex mu_;
  double qps_;
  int burst_;
  double tokens_;
  common::TimePoint last_;
  const common::Clock& clock_;
};

// The longest delay of several limiters.
class MaxOfRateLimiter final : public QueueRateLimiter {
 public:
  explicit MaxOfRateLimiter(std::vector<std::unique_ptr<QueueRateLimiter>> limiters)
      : limiters_(std::move(limiters)) {}
  common::Duration when(const std::string& key) override;
  void forget(const std::string& key) override;
  int num_requeues(const std::string& key) override;

 private:
  std::vector<std::unique_ptr<QueueRateLimiter>> limiters_;
};

// controller-runtime's default: max(per-item 5 ms -> 1000 s, overall 10 qps / burst 100).
std::unique_ptr<QueueRateLimiter> default_controller_rate_limiter(
    const common::Clock& clock = common::RealClock::instance());

struct WorkQueueOptions {
  std::string name;
  const common::Clock* clock = nullptr;            // default: the real clock
  std::unique_ptr<QueueRateLimiter> rate_limiter;  // default: default_controller_rate_limiter(clock)
  std::shared_ptr<QueueMetrics> metrics;           // may be null
  Millis max_wait{1000};  // get() re-checks delayed keys at least this often (bounds clock-jump effects)
};

class WorkQueue {
 public:
  explicit WorkQueue(WorkQueueOptions options = {});
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // Queues `key` unless it is already queued; a key being processed is queued again after done().
  void add(const std::string& key);
  // Queues `key` once `delay` has passed (at once when delay <= 0). A key already waiting keeps the earlier
  // time.
  void add_after(const std::string& key, common::Duration delay);
  // add_after(key, rate_limiter.when(key)); counts a retry.
  void add_rate_limited(const std::string& key);
  // Clears the key's back-off history (call after a success).
  void forget(const std::string& key);
  int num_requeues(const std::string& key);

  // Blocks until a key is ready or the queue shuts down (nullopt). The caller must call done(key).
  std::optional<std::string> get();
  // Non-blocking get(): moves keys whose time has come into the queue, then returns the first, if any.
  std::optional<std::string> try_get();
  void done(const std::string& key);

  // Stops handing out keys at once (get() returns nullopt, even with keys queued) and ignores later adds.
  void shutdown();
  bool shutting_down() const;

  std::size_t len() const;          // keys ready to be handed out
  std::size_t waiting_len() const;  // keys held by add_after / add_rate_limited
  bool is_processing(const std::string& key) const;
  const std::string& name() const { return name_; }

 private:
  void add_locked(const std::string& key);
  void promote_due_locked();
  std::optional<std::string> pop_locked();
  void report_depth_locked();

  std::string name_;
  const common::Clock& clock_;
  std::unique_ptr<QueueRateLimiter> limiter_;
  std::shared_ptr<QueueMetrics> metrics_;
  Millis max_wait_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  std::unordered_set<std::string> dirty_, processing_;
  // Delayed keys ordered by (ready time, insertion sequence); `waiting_index_` finds a key's entry.
  using WaitEntry = std::tuple<common::TimePoint, std::uint64_t, std::string>;
  std::set<WaitEntry> waiting_;
  std::unordered_map<std::string, WaitEntry> waiting_index_;
  std::uint64_t seq_ = 0;
  bool shutting_down_ = false;
};

}  // namespace kubex::kube
