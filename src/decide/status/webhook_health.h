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

// What one dry-run probe showed, for its failure message (WHH-2). `api_*` describe the dry-run CREATE's
// answer; `missing` the pass markers the admitted pod lacks; `seen_*` and `tls_failure` what the engine's own
// webhook server saw of this probe pod while it ran (its pod admission handler and its TLS listener).
struct ProbeObservation {
  std::string pod;  // "<ns>/<name>"
  // The CREATE failed: api_code 0 = it never completed (transport), else the API server's HTTP status.
  bool api_failed = false;
  int api_code = 0;
  std::string api_reason, api_message;  // ApiStatus reason (Timeout, Transport, Forbidden, ...) and text
  std::string api_timeout;              // the client's timeout, for the message ("15s")
  bool missing_early = false, missing_late = false;
  bool seen_early = false, seen_late = false;
  std::string tls_failure;  // a failed TLS handshake on the webhook listener during the probe
};

// The condition message of a failed probe, naming the cause: the API server unreachable or too slow, the
// API refusing the pod, the webhook never called (connection), a TLS failure between the API server and the
// webhook, a webhook answer that arrived too late, or a marker missing although the webhook answered.
// "" when the observation is a success.
std::string probe_failure_message(const ProbeObservation& o);

// One probe result applied to `state`. Thresholds below 1 count as 1 (VAL-6: an invalid object never
// disables the check).
WebhookHealthStep next_webhook_health(const WebhookHealthState& state, const WebhookProbeResult& result,
                                      std::int64_t success_threshold, std::int64_t failure_threshold);

// The condition fields of a health value: "True"/"ProbeSucceeded", "False"/"ProbeFailed",
// "Unknown"/"Probing".
const char* webhook_health_status(WebhookHealth h);
const char* webhook_health_reason(WebhookHealth h);

// An engine run without its webhooks (--webhook-bind-address=0) probes nothing: the condition is
// Unknown/WebhooksDisabled with this message, and evictions stay paused (ACT-2), since a replacement pod would not be
// mutated.
inline constexpr const char* kWebhooksDisabledReason = "WebhooksDisabled";
inline constexpr const char* kWebhooksDisabledMessage =
    "this engine runs without its admission webhooks (--webhook-bind-address=0): nothing is probed, no pod is "
    "converted, and evictions stay paused because a replacement pod would not be mutated";

}  // namespace kubex::decide
