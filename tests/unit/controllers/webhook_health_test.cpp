// WHH-1..3: the globalconfiguration probe loop against a fake dry-run API that plays the webhooks (it adds
// the markers of the passes that "run"), the real status logic and EventRecorder, and a fake clock.
#include "controllers/webhook_health.h"

#include <gtest/gtest.h>

#include "act/probe_pods.h"

#include <set>

#include "global_config_fakes.h"

namespace kubex::controllers {
namespace {

using namespace std::chrono_literals;
using namespace test;

class FakeProbeApi final : public act::ProbeRunner {
 public:
  bool early = true, late = true;        // which passes mark the pod
  std::optional<kube::ApiStatus> error;  // the API call fails
  std::vector<json> sent;
  std::vector<std::string> namespaces;

  kube::KResult<json> dry_run_create_pod(const std::string& ns, const json& pod) override {
    sent.push_back(pod);
    namespaces.push_back(ns);
    if (error) return std::unexpected(*error);
    json out = pod;
    if (early) out["metadata"]["annotations"]["automation-webhook.kubex.ai/probe-early"] = "ok";
    if (late) out["metadata"]["annotations"]["automation-webhook.kubex.ai/probe-late"] = "ok";
    return out;
  }
};

// What the engine's webhook server "saw" of each probe pod: `seen_*` passes received its review, and a TLS
// handshake failure.
class FakeWitness final : public WebhookProbeWitness {
 public:
  bool seen_early = false, seen_late = false;
  std::string tls_failure;
  mutable std::vector<std::string> asked;
  ProbeSighting sighting(const std::string& pod, std::chrono::steady_clock::time_point) const override {
    asked.push_back(pod);
    return {seen_early, seen_late, tls_failure};
  }
};

struct Fixture {
  common::FakeClock clock{kT0};
  std::shared_ptr<FakeWitness> witness = std::make_shared<FakeWitness>();
  std::shared_ptr<FakeProbeApi> api = std::make_shared<FakeProbeApi>();
  std::shared_ptr<FakeStatus> status = std::make_shared<FakeStatus>();
  std::shared_ptr<WebhookHealthSignal> signal = std::make_shared<WebhookHealthSignal>();
  FakeGlobalConfig gc;
  std::vector<RecordedEvent> events;
  std::unique_ptr<kube::EventRecorder> recorder = test::recorder(&events, &clock);
  std::unique_ptr<WebhookHealthController> ctrl;

  explicit Fixture(bool early_enabled = true, const json& spec = json::object()) {
    gc.set(spec);
    WebhookHealthOptions o;
    o.ns = "kubex";
    o.early_enabled = early_enabled;
    o.clock = &clock;
    o.witness = witness;
    ctrl = std::make_unique<WebhookHealthController>(api, status, gc, recorder.get(), signal, o);
  }
  kube::ReconcileResult probe() {
    clock.advance(10s);
    auto r = ctrl->reconcile();
    EXPECT_TRUE(r.has_value());
    recorder->flush();
    return r ? *r : kube::ReconcileResult{};
  }
  std::string condition() const { return status->condition_text("PodAdmissionWebhookHealthy"); }
  json health() const { return status->status.value("webhookHealth", json()); }
};

TEST(WebhookHealthController, UnknownThenTrueAfterSuccessThreshold) {  // WHH-1, WHH-3
  Fixture f;
  auto r = f.probe();
  EXPECT_EQ(r.requeue_after, std::chrono::duration_cast<common::Duration>(10s));  // default interval
  EXPECT_EQ(f.condition(), "Unknown/Probing");
  EXPECT_EQ(f.health(), json({{"consecutiveFailures", 0},
                              {"consecutiveSuccesses", 1},
                              {"lastProbeResult", "Success"},
                              {"lastProbeTime", "2027-01-15T08:00:10Z"}}));
  EXPECT_EQ(f.signal->get(), decide::WebhookHealth::kUnknown);
  f.probe();
  EXPECT_EQ(f.condition(), "Unknown/Probing");
  f.probe();  // successThreshold 3
  EXPECT_EQ(f.condition(), "True/ProbeSucceeded");
  EXPECT_TRUE(f.signal->healthy());
  EXPECT_EQ(f.health()["consecutiveSuccesses"], 3);
  EXPECT_EQ(f.health()["lastProbeTime"], "2027-01-15T08:00:30Z");
  EXPECT_TRUE(f.events.empty());

  // The probe pods: a fresh random name each time, the probe annotation, in the engine namespace.
  ASSERT_EQ(f.api->sent.size(), 3u);
  std::set<std::string> names;
  for (const auto& p : f.api->sent) {
    std::string name = p["metadata"]["name"];
    EXPECT_EQ(name.rfind("kubex-webhook-probe-", 0), 0u) << name;
    EXPECT_EQ(name.size(), std::string("kubex-webhook-probe-").size() + 5);
    names.insert(name);
    EXPECT_EQ(p["metadata"]["annotations"]["rightsizing.kubex.ai/webhook-probe"], "true");
  }
  EXPECT_EQ(names.size(), 3u);
  EXPECT_EQ(f.api->namespaces, (std::vector<std::string>(3, "kubex")));
}

class FakeRegistration final : public WebhookRegistrationState {
 public:
  bool done = false;
  bool registered() const override { return done; }
};

// Issue 34 item 9: every engine start logged one `webhook probe failed` warning for a probe sent before its own
// --register-webhooks registration; no probe is sent until the registration is in place.
TEST(WebhookHealthController, NoProbeBeforeTheEnginesOwnWebhookRegistration) {  // WHH-1, WHH-3
  Fixture f;
  auto reg = std::make_shared<FakeRegistration>();
  WebhookHealthOptions o;
  o.ns = "kubex";
  o.early_enabled = true;
  o.clock = &f.clock;
  o.witness = f.witness;
  o.registration = reg;
  f.ctrl = std::make_unique<WebhookHealthController>(f.api, f.status, f.gc, f.recorder.get(), f.signal, o);
  auto r = f.probe();
  EXPECT_TRUE(f.api->sent.empty());
  EXPECT_EQ(f.condition(), "Unknown/Probing");
  EXPECT_EQ(f.health(), json());                                                  // no probe result yet
  EXPECT_EQ(r.requeue_after, std::chrono::duration_cast<common::Duration>(1s));  // looks again soon
  reg->done = true;
  f.probe();
  EXPECT_EQ(f.api->sent.size(), 1u);
  EXPECT_EQ(f.health()["lastProbeResult"], "Success");
}

TEST(WebhookHealthController, StartsUnknownWhateverAnEarlierLeaderWrote) {  // WHH-3: starts Unknown/Probing
  Fixture f;
  f.status->status = {{"conditions", json::array({{{"type", "PodAdmissionWebhookHealthy"},
                                                   {"status", "True"},
                                                   {"reason", "ProbeSucceeded"},
                                                   {"message", "old leader"}}})},
                      {"webhookHealth", {{"consecutiveSuccesses", 40}, {"consecutiveFailures", 0}}}};
  f.probe();
  EXPECT_EQ(f.condition(), "Unknown/Probing");
  EXPECT_EQ(f.health()["consecutiveSuccesses"], 1);
  EXPECT_FALSE(f.signal->healthy());
}

TEST(WebhookHealthController, MissingMarkerFailsAndFalseEmitsOneWarning) {  // WHH-2, WHH-3, OBS-2
  Fixture f;
  for (int i = 0; i < 3; ++i) f.probe();
  ASSERT_EQ(f.condition(), "True/ProbeSucceeded");
  f.api->early = false;  // the early webhook configuration is gone
  f.probe();
  EXPECT_EQ(f.condition(), "True/ProbeSucceeded");  // below failureThreshold 2
  EXPECT_EQ(f.health()["lastProbeResult"], "Failure");
  EXPECT_EQ(f.health()["consecutiveFailures"], 1);
  EXPECT_EQ(f.health()["consecutiveSuccesses"], 0);
  EXPECT_TRUE(f.signal->healthy());
  f.probe();
  EXPECT_EQ(f.condition(), "False/ProbeFailed");
  EXPECT_FALSE(f.signal->healthy());
  EXPECT_EQ(f.signal->get(), decide::WebhookHealth::kUnhealthy);
  std::string msg = (*f.status->condition("PodAdmissionWebhookHealthy"))["message"];
  EXPECT_NE(msg.find("automation-webhook.kubex.ai/probe-early"), std::string::npos) << msg;
  EXPECT_NE(msg.find("kubex/kubex-webhook-probe-"), std::string::npos) << msg;
  ASSERT_EQ(f.events.size(), 1u);
  EXPECT_EQ(f.events[0].type, "Warning");
  EXPECT_EQ(f.events[0].reason, "PodAdmissionWebhookUnhealthy");
  EXPECT_EQ(f.events[0].kind, "GlobalConfiguration");
  EXPECT_EQ(f.events[0].name, "global-config");
  EXPECT_EQ(f.events[0].message, msg);
  f.probe();  // still False: no second event
  EXPECT_EQ(f.events.size(), 1u);
  EXPECT_EQ(f.health()["consecutiveFailures"], 3);

  // Restored: True again after successThreshold successes.
  f.api->early = true;
  f.probe();
  f.probe();
  EXPECT_EQ(f.condition(), "False/ProbeFailed");
  f.probe();
  EXPECT_EQ(f.condition(), "True/ProbeSucceeded");
  EXPECT_TRUE(f.signal->healthy());
}

TEST(WebhookHealthController, EarlyMarkerRequiredOnlyWhenEarlyIsEnabled) {  // WHH-2
  Fixture f(/*early_enabled=*/false, {{"webhookHealth", {{"successThreshold", 1}}}});
  f.api->early = false;
  f.probe();
  EXPECT_EQ(f.condition(), "True/ProbeSucceeded");
  f.api->late = false;
  f.probe();
  f.probe();
  EXPECT_EQ(f.condition(), "False/ProbeFailed");
}

// WHH-2 / issue 12 item 2: the message names the cause an operator acts on, never a misleading one.
TEST(WebhookHealthController, ApiErrorsAndTimeoutsAreFailuresNamedByCause) {
  Fixture f(true, {{"webhookHealth", {{"failureThreshold", 1}}}});
  auto message = [&] { return (*f.status->condition("PodAdmissionWebhookHealthy"))["message"].get<std::string>(); };
  f.api->error = kube::ApiStatus{403, "Forbidden", "pods is forbidden: violates PodSecurity \"restricted\""};
  f.probe();
  EXPECT_EQ(f.condition(), "False/ProbeFailed");
  std::string msg = message();
  EXPECT_NE(msg.find("API refusal: the API server refused the dry-run create (403 Forbidden): pods is forbidden: "
                     "violates PodSecurity"),
            std::string::npos)
      << msg;
  EXPECT_EQ(msg.rfind("probe pod kubex/kubex-webhook-probe-", 0), 0u) << msg;

  f.api->error = kube::ApiStatus{0, "Timeout", "POST https://api/api/v1/namespaces/kubex/pods: Read"};
  f.probe();
  msg = message();
  EXPECT_NE(msg.find("timeout: the API server did not answer the dry-run create within 15s"), std::string::npos) << msg;

  // A transport error between the engine and the API server is a connection problem, not Pod Security.
  f.api->error = kube::ApiStatus{0, "Transport", "POST https://api/api/v1/namespaces/kubex/pods: Write"};
  f.probe();
  msg = message();
  EXPECT_NE(msg.find("connection: the engine cannot reach the API server (POST https://api/"), std::string::npos)
      << msg;
  EXPECT_EQ(msg.find("refused"), std::string::npos) << msg;

  f.api->error = kube::ApiStatus{0, "Transport", "POST https://api/: SSL server verification failed: x509: unknown ca"};
  f.probe();
  EXPECT_NE(message().find("TLS: the engine could not verify the API server"), std::string::npos) << message();
  EXPECT_EQ(f.events.size(), 1u);  // only the transition to False is an event
}

TEST(WebhookHealthController, MissingMarkerSaysWhetherTheWebhookWasCalled) {  // WHH-2
  Fixture f(true, {{"webhookHealth", {{"failureThreshold", 1}}}});
  auto message = [&] { return (*f.status->condition("PodAdmissionWebhookHealthy"))["message"].get<std::string>(); };
  f.api->early = f.api->late = false;

  // The engine's webhook never received the review: the API server did not call it.
  f.probe();
  std::string msg = message();
  EXPECT_NE(msg.find("lacks automation-webhook.kubex.ai/probe-early, automation-webhook.kubex.ai/probe-late: "
                     "connection: the API server did not call the engine's webhook"),
            std::string::npos)
      << msg;
  ASSERT_EQ(f.witness->asked.size(), 1u);
  EXPECT_EQ(f.witness->asked[0], f.api->sent.back()["metadata"]["name"]);  // asked about this probe's pod

  // ... and a handshake failed on the webhook listener meanwhile: a TLS problem (caBundle).
  f.witness->tls_failure = "tlsv1 alert unknown ca";
  f.probe();
  msg = message();
  EXPECT_NE(msg.find("TLS: the API server's TLS handshake with the webhook failed (tlsv1 alert unknown ca)"),
            std::string::npos)
      << msg;

  // The webhook answered both passes, yet the markers are missing: its answer came too late.
  f.witness->tls_failure.clear();
  f.witness->seen_early = f.witness->seen_late = true;
  f.probe();
  msg = message();
  EXPECT_NE(msg.find("timeout: the engine's webhook answered the review, but the API server did not apply the answer"),
            std::string::npos)
      << msg;

  // Success: the witness is not asked.
  f.api->early = f.api->late = true;
  std::size_t asked = f.witness->asked.size();
  f.probe();
  EXPECT_EQ(f.witness->asked.size(), asked);
}

TEST(WebhookHealthController, SettingsAreReadLiveFromGlobalConfig) {  // WHH-1, HLM-3
  Fixture f(true, {{"webhookHealth", {{"transitionCheckInterval", "1s"}, {"successThreshold", 1}}},
                   {"webhookProbe", {{"image", "img:1"}, {"labels", {{"probe", "yes"}}}}}});
  auto r = f.probe();
  EXPECT_EQ(r.requeue_after, std::chrono::duration_cast<common::Duration>(1s));
  EXPECT_EQ(f.condition(), "True/ProbeSucceeded");
  EXPECT_EQ(f.api->sent.back()["spec"]["containers"][0]["image"], "img:1");
  EXPECT_EQ(f.api->sent.back()["metadata"]["labels"]["probe"], "yes");

  // Our own status write comes back through the informer: same interval, no extra probe.
  f.gc.set({{"webhookHealth", {{"transitionCheckInterval", "1s"}, {"successThreshold", 1}}}},
           f.status->status);
  f.ctrl->global_config_changed();
  EXPECT_EQ(f.ctrl->queue().len(), 0u);
  // The interval changes at runtime: probe at once, then at the new interval; the template too.
  f.gc.set({{"webhookHealth", {{"transitionCheckInterval", "2m"}, {"failureThreshold", 1}}},
            {"webhookProbe", {{"image", "img:2"}}}});
  f.ctrl->global_config_changed();
  EXPECT_EQ(f.ctrl->queue().len(), 1u);
  f.api->late = false;
  r = f.probe();
  EXPECT_EQ(r.requeue_after, std::chrono::duration_cast<common::Duration>(2min));
  EXPECT_EQ(f.api->sent.back()["spec"]["containers"][0]["image"], "img:2");
  EXPECT_EQ(f.condition(), "False/ProbeFailed");  // failureThreshold 1 applied
}

TEST(WebhookHealthController, InvalidIntervalNeverBusyLoops) {  // VAL-6
  Fixture f;
  // An object that got past validation (the webhook was down): interval 0s.
  f.gc.set({{"webhookHealth", {{"transitionCheckInterval", "0s"}}}});
  auto r = f.probe();
  EXPECT_GE(r.requeue_after, std::chrono::duration_cast<common::Duration>(1s));
}

TEST(WebhookHealthController, MissingGlobalConfigStillProbesAndPublishes) {  // WHH-3 with API-4 pending
  Fixture f(true, {{"webhookHealth", {{"successThreshold", 1}}}});
  f.status->exists = false;
  f.gc.remove();
  auto r = f.probe();
  EXPECT_EQ(r.requeue_after, std::chrono::duration_cast<common::Duration>(10s));  // defaults
  // Defaults apply (successThreshold 3): still Unknown, but the probe ran and is counted in memory.
  EXPECT_EQ(f.ctrl->state().consecutive_successes, 1);
  EXPECT_EQ(f.api->sent.size(), 1u);
  // The object appears: the status is written by a probe at once.
  f.status->exists = true;
  f.gc.set({{"webhookHealth", {{"successThreshold", 1}}}});
  f.ctrl->global_config_changed();
  EXPECT_EQ(f.ctrl->queue().len(), 1u);
  f.probe();
  EXPECT_EQ(f.condition(), "True/ProbeSucceeded");
  EXPECT_EQ(f.health()["consecutiveSuccesses"], 2);
}

TEST(WebhookHealthSignal, StartsUnknownAndIsShared) {  // ACT-2 reads it
  WebhookHealthSignal s;
  EXPECT_EQ(s.get(), decide::WebhookHealth::kUnknown);
  EXPECT_FALSE(s.healthy());
  s.set(decide::WebhookHealth::kHealthy);
  EXPECT_TRUE(s.healthy());
  s.set(decide::WebhookHealth::kUnhealthy);
  EXPECT_FALSE(s.healthy());
}

}  // namespace
}  // namespace kubex::controllers
