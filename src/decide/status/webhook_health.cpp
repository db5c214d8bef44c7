#include "decide/status/webhook_health.h"

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

namespace {

std::string markers(bool early, bool late) {
  std::string m;
  if (early) m = "automation-webhook.kubex.ai/probe-early";
  if (late) m += (m.empty() ? "" : ", ") + std::string("automation-webhook.kubex.ai/probe-late");
  return m;
}

}  // namespace

std::string probe_failure_message(const ProbeObservation& o) {
  std::string head = "probe pod " + o.pod + ": ";
  if (o.api_failed) {
    if (o.api_code == 0) {
      if (o.api_reason == "Timeout") {
        return head + "timeout: the API server did not answer the dry-run create within " +
               (o.api_timeout.empty() ? std::string("the request timeout") : o.api_timeout) + " (" +
               o.api_message + ")";
      }
      if (o.api_message.find("x509") != std::string::npos || o.api_message.find("SSL") != std::string::npos) {
        return head + "TLS: the engine could not verify the API server (" + o.api_message + ")";
      }
      return head + "connection: the engine cannot reach the API server (" + o.api_message + ")";
    }
    std::string status = std::to_string(o.api_code) + (o.api_reason.empty() ? "" : " " + o.api_reason);
    if (o.api_code == 504 || o.api_reason == "Timeout") {
      return head + "timeout: the API server gave up on the dry-run create (" + status + "): " + o.api_message;
    }
    return head + "API refusal: the API server refused the dry-run create (" + status + "): " + o.api_message +
           " (Pod Security, a quota, RBAC or an admission policy; adjust spec.webhookProbe)";
  }
  if (!o.missing_early && !o.missing_late) return "";
  std::string lacks = "the admitted pod lacks " + markers(o.missing_early, o.missing_late) + ": ";
  // Which missing passes reached the engine's handler at all.
  bool missing_seen = (!o.missing_early || o.seen_early) && (!o.missing_late || o.seen_late);
  bool missing_unseen = (!o.missing_early || !o.seen_early) && (!o.missing_late || !o.seen_late);
  if (missing_seen) {
    return head + lacks +
           "timeout: the engine's webhook answered the review, but the API server did not apply the answer "
           "(it came after the webhook's timeoutSeconds, and failurePolicy Ignore let the pod through)";
  }
  if (missing_unseen && !o.tls_failure.empty()) {
    return head + lacks + "TLS: the API server's TLS handshake with the webhook failed (" + o.tls_failure +
           "); check that the webhook configurations' caBundle signs the engine's serving certificate";
  }
  if (missing_unseen) {
    return head + lacks +
           "connection: the API server did not call the engine's webhook (no matching "
           "MutatingWebhookConfiguration, or its URL or service does not reach the engine's webhook port); "
           "failurePolicy Ignore let the pod through";
  }
  return head + lacks + "marker missing: the engine's webhook saw only some of the passes";
}

}  // namespace kubex::decide
