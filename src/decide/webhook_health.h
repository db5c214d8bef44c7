// The webhook health state machine (WHH-3), pure: consecutive probe counters and the
// PodAdmissionWebhookHealthy condition with its two thresholds. The condition starts Unknown/Probing, becomes
// True/ProbeSucceeded once the consecutive successes reach successThreshold and False/ProbeFailed (message:
// the last error) once the consecutive failures reach failureThreshold; in between it keeps its status.
#pragma once

#include <cstdint>
#include <string>

namespace kubex::decide {

// PodAdmissionWebhookHealthy: Unknown, True or False.
enum class WebhookHealth { kUnknown, kHealthy, kUnhealthy };

struct WebhookHealthState {
  std::int64_t consecutive_successes = 0, consecutive_failures = 0;
  WebhookHealth health = WebhookHealth::kUnknown;
  std::string message = "probing the pod admission webhook";  // the condition message
};

struct WebhookProbeResult {
  bool success = false;
  std::string error;  // why a failed probe failed
};

struct WebhookHealthStep {
  WebhookHealthState next;
  bool became_unhealthy = false;  // the transition to False (Warning event PodAdmissionWebhookUnhealthy)
};

// One probe result applied to `state`. Thresholds below 1 count as 1 (VAL-6: an invalid object never
// disables the check).
WebhookHealthStep next_webhook_health(const WebhookHealthState& state, const WebhookProbeResult& result,
                                      std::int64_t success_threshold, std::int64_t failure_threshold);

// The condition fields of a health value: "True"/"ProbeSucceeded", "False"/"ProbeFailed",
// "Unknown"/"Probing".
const char* webhook_health_status(WebhookHealth h);
const char* webhook_health_reason(WebhookHealth h);

}  // namespace kubex::decide
