#include "kube/runtime/workqueue.h"

#include <algorithm>
#include <cmath>

namespace kubex::kube {

using common::Duration;
using common::TimePoint;

Duration ItemExponentialRateLimiter::when(const std::string& key) {
  std::lock_guard lk(mu_);
  int exp = failures_[key]++;
  double backoff = static_cast<double>(base_.count()) * std::pow(2.0, exp);
  if (backoff > static_cast<double>(max_.count())) return max_;
  return Duration(static_cast<Duration::rep>(backoff));
}

void ItemExponentialRateLimiter::forget(const std::string& key) {
  std::lock_guard lk(mu_);
  failures_.erase(key);
}

int ItemExponentialRateLimiter::num_requeues(const std::string& key) {
  std::lock_guard lk(mu_);
  auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

BucketRateLimiter::BucketRateLimiter(double qps, int burst, const common::Clock& clock)
    : qps_(qps), burst_(burst), tokens_(burst), last_(clock.now()), clock_(clock) {}

Duration BucketRateLimiter::when(const std::string&) {
  std::lock_guard lk(mu_);
  if (qps_ <= 0) return Duration::zero();
  TimePoint now = clock_.now();
  if (now > last_) {
    tokens_ = std::min<double>(burst_, tokens_ + std::chrono::duration<double>(now - last_).count() * qps_);
    last_ = now;
  }
  tokens_ -= 1;  // reserve a token, possibly one that only exists in the future
  if (tokens_ >= 0) return Duration::zero();
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(-tokens_ / qps_));
}

Duration MaxOfRateLimiter::when(const std::string& key) {
  Duration out = Duration::zero();
  for (auto& l : limiters_) out = std::max(out, l->when(key));
  return out;
}

void MaxOfRateLimiter::forget(const std::string& key) {
  for (auto& l : limiters_) l->forget(key);
}

int MaxOfRateLimiter::num_requeues(const std::string& key) {
  int out = 0;
  for (auto& l : limiters_) out = std::max(out, l->num_requeues(key));
  return out;
}

std::unique_ptr<QueueRateLimiter> default_controller_rate_limiter(const common::Clock& clock) {
  std::vector<std::unique_ptr<QueueRateLimiter>> v;
  v.push_back(
      std::make_unique<ItemExponentialRateLimiter>(std::chrono::milliseconds(5), std::chrono::seconds(1000)));
  v.push_back(std::make_unique<BucketRateLimiter>(10.0, 100, clock));
  return std::make_unique<MaxOfRateLimiter>(std::move(v));
}

WorkQueue::WorkQueue(WorkQueueOptions options)
    : name_(std::move(options.name)),
      clock_(options.clock ? *options.clock : common::RealClock::instance()),
      limiter_(options.rate_limiter ? std::move(options.rate_limiter)
                                    : default_controller_rate_limiter(clock_)),
      metrics_(std::move(options.metrics)),
      max_wait_(options.max_wait) {
  if (metrics_) metrics_->depth(0);
}

void WorkQueue::report_depth_locked() {
  if (metrics_) metrics_->depth(queue_.size());
}

void WorkQueue::add_locked(const std::string& key) {
  if (shutting_down_ || dirty_.count(key)) return;
  if (metrics_) metrics_->added();
  dirty_.insert(key);
  if (processing_.count(key)) return;  // queued again by done()
  queue_.push_back(key);
  report_depth_locked();
  cv_.notify_one();
}

void WorkQueue::add(const std::string& key) {
  std::lock_guard lk(mu_);
  add_locked(key);
}

void WorkQueue::add_after(const std::string& key, Duration delay) {
  std::lock_guard lk(mu_);
  if (shutting_down_) return;
  if (delay <= Duration::zero()) {
    add_locked(key);
    return;
  }
  TimePoint ready = clock_.now() + std::chrono::duration_cast<TimePoint::duration>(delay);
  auto it = waiting_index_.find(key);
  if (it != waiting_index_.end()) {
    if (std::get<0>(it->second) <= ready) return;  // already due earlier
    waiting_.erase(it->second);
    waiting_index_.erase(it);
  }
  WaitEntry e{ready, seq_++, key};
  waiting_.insert(e);
  waiting_index_.emplace(key, std::move(e));
  cv_.notify_all();  // a waiter may need to wake earlier
}

void WorkQueue::add_rate_limited(const std::string& key) {
  Duration d = limiter_->when(key);
  {
    std::lock_guard lk(mu_);
    if (shutting_down_) return;
    if (metrics_) metrics_->retried();
  }
  add_after(key, d);
}

void WorkQueue::forget(const std::string& key) {
  limiter_->forget(key);
}
int WorkQueue::num_requeues(const std::string& key) {
  return limiter_->num_requeues(key);
}

void WorkQueue::promote_due_locked() {
  TimePoint now = clock_.now();
  while (!waiting_.empty() && std::get<0>(*waiting_.begin()) <= now) {
    std::string key = std::get<2>(*waiting_.begin());
    waiting_.erase(waiting_.begin());
    waiting_index_.erase(key);
    add_locked(key);
  }
}

std::optional<std::string> WorkQueue::pop_locked() {
  if (shutting_down_ || queue_.empty()) return std::nullopt;
  std::string key = std::move(queue_.front());
  queue_.pop_front();
  processing_.insert(key);
  dirty_.erase(key);
  report_depth_locked();
  return key;
}

std::optional<std::string> WorkQueue::get() {
  std::unique_lock lk(mu_);
  while (true) {
    if (shutting_down_) return std::nullopt;
    promote_due_locked();
    if (auto k = pop_locked()) return k;
    auto wait = std::chrono::duration_cast<Duration>(max_wait_);
    if (!waiting_.empty()) {
      wait =
          std::min(wait, std::chrono::duration_cast<Duration>(std::get<0>(*waiting_.begin()) - clock_.now()));
      wait = std::max(wait, Duration(std::chrono::milliseconds(1)));
    }
    cv_.wait_for(lk, wait);
  }
}

std::optional<std::string> WorkQueue::try_get() {
  std::lock_guard lk(mu_);
  promote_due_locked();
  return pop_locked();
}

void WorkQueue::done(const std::string& key) {
  std::lock_guard lk(mu_);
  processing_.erase(key);
  if (shutting_down_) return;
  if (dirty_.count(key)) {
    queue_.push_back(key);
    report_depth_locked();
    cv_.notify_one();
  }
}

void WorkQueue::shutdown() {
  std::lock_guard lk(mu_);
  shutting_down_ = true;
  cv_.notify_all();
}

bool WorkQueue::shutting_down() const {
  std::lock_guard lk(mu_);
  return shutting_down_;
}

std::size_t WorkQueue::len() const {
  std::lock_guard lk(mu_);
  return queue_.size();
}

std::size_t WorkQueue::waiting_len() const {
  std::lock_guard lk(mu_);
  return waiting_.size();
}

bool WorkQueue::is_processing(const std::string& key) const {
  std::lock_guard lk(mu_);
  return processing_.count(key) > 0;
}

}  // namespace kubex::kube
