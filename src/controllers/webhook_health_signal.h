// The current PodAdmissionWebhookHealthy value for other engine code (ACT-2 pauses evictions while it is not
// True). The webhook health controller writes it after every probe; readers on any thread see the latest
// value. It starts Unknown, so nothing is evicted before the first verdict. Listeners hear each turn to True, so
// that evictions held back while it was not (after a restart or a leader change) go at once rather than at the
// next periodic resync (issue 27 item 4).
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <vector>

#include "decide/status/webhook_health.h"

namespace kubex::controllers {

class WebhookHealthSignal {
 public:
  decide::WebhookHealth get() const { return value_.load(std::memory_order_acquire); }
  // PodAdmissionWebhookHealthy=True.
  bool healthy() const { return get() == decide::WebhookHealth::kHealthy; }
  void set(decide::WebhookHealth h) {
    const decide::WebhookHealth before = value_.exchange(h, std::memory_order_acq_rel);
    if (h != decide::WebhookHealth::kHealthy || before == decide::WebhookHealth::kHealthy) return;
    std::vector<std::function<void()>> call;
    {
      std::lock_guard lk(mu_);
      call = listeners_;
    }
    for (const auto& fn : call) fn();
  }
  // `fn` runs on the writer's thread each time the value turns True; it must be quick (enqueue work).
  void on_healthy(std::function<void()> fn) const {
    std::lock_guard lk(mu_);
    listeners_.push_back(std::move(fn));
  }

 private:
  std::atomic<decide::WebhookHealth> value_{decide::WebhookHealth::kUnknown};
  mutable std::mutex mu_;
  mutable std::vector<std::function<void()>> listeners_;
};

}  // namespace kubex::controllers
