// WHH-3: the webhook health state machine as a table of probe sequences: consecutive counters, the
// PodAdmissionWebhookHealthy condition with its thresholds and hysteresis, and the transition to False.
#include "decide/status/webhook_health.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace kubex::decide;

namespace {

struct Row {
  const char* name;
  int success_threshold, failure_threshold;
  std::string probes;                // 'S' success, 'F' failure (error "e<i>" with i = its position)
  std::string statuses;              // the condition status after each probe: U(nknown) T(rue) F(alse)
  std::vector<int> unhealthy_at;     // probes that are the transition to False (Warning event)
  std::int64_t successes, failures;  // the counters after the last probe
};

char letter(WebhookHealth h) {
  return h == WebhookHealth::kHealthy ? 'T' : h == WebhookHealth::kUnhealthy ? 'F' : 'U';
}

const std::vector<Row> kRows = {
    // Defaults (success 3, failure 2): Unknown until 3 successes in a row.
    {"defaults-become-healthy", 3, 2, "SSS", "UUT", {}, 3, 0},
    {"successes-keep-counting", 3, 2, "SSSSS", "UUTTT", {}, 5, 0},
    // A failure resets the successes; below failureThreshold the status stays Unknown.
    {"failure-resets-successes", 3, 2, "SSFSSS", "UUUUUT", {}, 3, 0},
    // Two failures in a row: False, with one transition.
    {"unknown-to-false", 3, 2, "FF", "UF", {1}, 0, 2},
    {"false-stays-false-one-event", 3, 2, "FFFF", "UFFF", {1}, 0, 4},
    // Hysteresis: True survives one failure (below failureThreshold) and False survives two successes.
    {"true-survives-one-failure", 3, 2, "SSSFS", "UUTTT", {}, 1, 0},
    {"true-to-false", 3, 2, "SSSFF", "UUTTF", {4}, 0, 2},
    {"false-needs-three-successes", 3, 2, "FFSSS", "UFFFT", {1}, 3, 0},
    {"flapping-false-true-false", 1, 1, "FSF", "FTF", {0, 2}, 0, 1},
    // Thresholds of 1: every probe decides.
    {"threshold-one", 1, 1, "SFS", "TFT", {1}, 1, 0},
    // Thresholds below 1 (an invalid object that got in, VAL-6) count as 1.
    {"threshold-zero-counts-as-one", 0, -3, "FS", "FT", {0}, 1, 0},
    {"high-failure-threshold", 1, 4, "SFFFF", "TTTTF", {4}, 0, 4},
};

}  // namespace

TEST(WebhookHealthStateMachine, Table) {  // WHH-3
  for (const auto& row : kRows) {
    SCOPED_TRACE(row.name);
    WebhookHealthState s;
    EXPECT_EQ(s.health, WebhookHealth::kUnknown);  // starts Unknown/Probing
    std::string statuses;
    std::vector<int> unhealthy_at;
    for (std::size_t i = 0; i < row.probes.size(); ++i) {
      WebhookProbeResult r{row.probes[i] == 'S', row.probes[i] == 'S' ? "" : "e" + std::to_string(i)};
      auto step = next_webhook_health(s, r, row.success_threshold, row.failure_threshold);
      if (step.became_unhealthy) unhealthy_at.push_back(static_cast<int>(i));
      // Each success resets the failures and each failure the successes.
      if (r.success) {
        EXPECT_EQ(step.next.consecutive_failures, 0);
        EXPECT_EQ(step.next.consecutive_successes, s.consecutive_successes + 1);
      } else {
        EXPECT_EQ(step.next.consecutive_successes, 0);
        EXPECT_EQ(step.next.consecutive_failures, s.consecutive_failures + 1);
      }
      s = step.next;
      statuses += letter(s.health);
    }
    EXPECT_EQ(statuses, row.statuses);
    EXPECT_EQ(unhealthy_at, row.unhealthy_at);
    EXPECT_EQ(s.consecutive_successes, row.successes);
    EXPECT_EQ(s.consecutive_failures, row.failures);
  }
}

TEST(WebhookHealthStateMachine, FalseCarriesTheLastError) {  // WHH-3: message = the last error
  WebhookHealthState s;
  s = next_webhook_health(s, {false, "connection refused"}, 3, 2).next;
  EXPECT_EQ(s.health, WebhookHealth::kUnknown);
  EXPECT_EQ(s.message, "probing the pod admission webhook");
  s = next_webhook_health(s, {false, "marker missing"}, 3, 2).next;
  EXPECT_EQ(s.health, WebhookHealth::kUnhealthy);
  EXPECT_EQ(s.message, "marker missing");
  s = next_webhook_health(s, {false, "timed out"}, 3, 2).next;
  EXPECT_EQ(s.message, "timed out");
  // A success below the threshold leaves the False condition and its message alone.
  s = next_webhook_health(s, {true, ""}, 3, 2).next;
  EXPECT_EQ(s.health, WebhookHealth::kUnhealthy);
  EXPECT_EQ(s.message, "timed out");
  // An empty error still gives a message (the condition message is never empty on False).
  WebhookHealthState t;
  t = next_webhook_health(t, {false, ""}, 1, 1).next;
  EXPECT_EQ(t.message, "the webhook probe failed");
}

TEST(WebhookHealthStateMachine, ConditionFields) {  // OBS-1 catalogue: GlobalConfiguration
  EXPECT_STREQ(webhook_health_status(WebhookHealth::kUnknown), "Unknown");
  EXPECT_STREQ(webhook_health_reason(WebhookHealth::kUnknown), "Probing");
  EXPECT_STREQ(webhook_health_status(WebhookHealth::kHealthy), "True");
  EXPECT_STREQ(webhook_health_reason(WebhookHealth::kHealthy), "ProbeSucceeded");
  EXPECT_STREQ(webhook_health_status(WebhookHealth::kUnhealthy), "False");
  EXPECT_STREQ(webhook_health_reason(WebhookHealth::kUnhealthy), "ProbeFailed");
}
