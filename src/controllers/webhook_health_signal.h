// The current PodAdmissionWebhookHealthy value for other engine code (ACT-2 pauses evictions while it is not
// True). The webhook health controller writes it after every probe; readers on any thread see the latest
// value. It starts Unknown, so nothing is evicted before the first verdict.
#pragma once

#include <atomic>

#include "decide/status/webhook_health.h"

namespace kubex::controllers {

class WebhookHealthSignal {
 public:
  decide::WebhookHealth get() const { return value_.load(std::memory_order_acquire); }
  // PodAdmissionWebhookHealthy=True.
  bool healthy() const { return get() == decide::WebhookHealth::kHealthy; }
  void set(decide::WebhookHealth h) { value_.store(h, std::memory_order_release); }

 private:
  std::atomic<decide::WebhookHealth> value_{decide::WebhookHealth::kUnknown};
};

}  // namespace kubex::controllers
