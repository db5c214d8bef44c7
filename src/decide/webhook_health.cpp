#include "decide/webhook_health.h"

#include <algorithm>

namespace kubex::decide {

WebhookHealthStep next_webhook_health(const WebhookHealthState& state, const WebhookProbeResult& result,
                                      std::int64_t success_threshold, std::int64_t failure_threshold) {
  success_threshold = std::max<std::int64_t>(1, success_threshold);
  failure_threshold = std::max<std::int64_t>(1, failure_threshold);
  WebhookHealthStep step;
  WebhookHealthState& s = step.next;
  s = state;
  if (result.success) {
    ++s.consecutive_successes;
    s.consecutive_failures = 0;
    if (s.consecutive_successes >= success_threshold) {
      s.health = WebhookHealth::kHealthy;
      s.message = "the pod admission webhook marked the last " + std::to_string(success_threshold) +
                  " dry-run probe pod(s)";
    }
  } else {
    ++s.consecutive_failures;
    s.consecutive_successes = 0;
    if (s.consecutive_failures >= failure_threshold) {
      step.became_unhealthy = state.health != WebhookHealth::kUnhealthy;
      s.health = WebhookHealth::kUnhealthy;
      s.message = result.error.empty() ? "the webhook probe failed" : result.error;
    }
  }
  return step;
}

const char* webhook_health_status(WebhookHealth h) {
  switch (h) {
    case WebhookHealth::kHealthy:
      return "True";
    case WebhookHealth::kUnhealthy:
      return "False";
    case WebhookHealth::kUnknown:
      break;
  }
  return "Unknown";
}

const char* webhook_health_reason(WebhookHealth h) {
  switch (h) {
    case WebhookHealth::kHealthy:
      return "ProbeSucceeded";
    case WebhookHealth::kUnhealthy:
      return "ProbeFailed";
    case WebhookHealth::kUnknown:
      break;
  }
  return "Probing";
}

}  // namespace kubex::decide
