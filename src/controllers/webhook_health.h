// The webhook health probe loop (WHH-1..3), leader-only, controller name `globalconfiguration`. Every
// spec.webhookHealth.transitionCheckInterval of global-config (read live from the cache, HLM-3) it makes one
// dry-run probe (controllers/webhook_probe.h), steps the WHH-3 state machine (decide/status/webhook_health.h),
// writes global-config's status.webhookHealth and PodAdmissionWebhookHealthy, emits the Warning event
// PodAdmissionWebhookUnhealthy on the transition to False, and publishes the verdict to a WebhookHealthSignal
// (ACT-2). A leader starts from Unknown/Probing with zero counters: it trusts no earlier leader's verdict.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "common/clock.h"
#include "common/log.h"
#include "controllers/global_config_status.h"
#include "controllers/webhook_health_signal.h"
#include "act/probe_pods.h"
#include "controllers/webhook_probe.h"
#include "decide/status/webhook_health.h"
#include "kube/runtime/controller.h"

namespace prometheus {
class Gauge;
template <typename T>
class Family;
}  // namespace prometheus
namespace kubex::kube {
class EventRecorder;
class Metrics;
}  // namespace kubex::kube

namespace kubex::controllers {

inline constexpr const char* kWebhookHealthController = "globalconfiguration";
inline constexpr const char* kWebhookHealthy = "PodAdmissionWebhookHealthy";

struct WebhookHealthOptions {
  std::string ns;              // the engine namespace: where probe pods are dry-run created
  bool early_enabled = false;  // --early-webhook-enabled: the early marker is required too
  std::string default_image = kDefaultProbeImage;
  common::Duration min_interval = std::chrono::seconds(1);  // floor for an invalid transitionCheckInterval
  const common::Clock* clock = nullptr;                     // default: the real clock
  kube::Metrics* metrics = nullptr;  // controller_runtime_* {controller="globalconfiguration"}
  // What the engine's webhook server saw of each probe (names the cause of a failure); may be null.
  std::shared_ptr<const WebhookProbeWitness> witness;
  std::string api_timeout = "15s";  // the probe client's request timeout, for messages
  // False with --webhook-bind-address=0: no probe pod is created; the condition says Unknown/WebhooksDisabled and
  // the signal stays Unknown, so evictions stay paused (ACT-2; issue 27 item 7).
  bool webhooks_served = true;
  // The engine's own registration of its webhook configurations; null: nothing to wait for (the chart renders
  // them). No probe is sent until it is in place: the condition stays Unknown/Probing meanwhile.
  std::shared_ptr<const WebhookRegistrationState> registration;
  common::Duration registration_poll = std::chrono::seconds(1);  // how often to look again meanwhile
};

class WebhookHealthController final : public kube::Runnable {
 public:
  // `events` may be null; `signal` may be null (nobody listens).
  WebhookHealthController(std::shared_ptr<act::ProbeRunner> probes, std::shared_ptr<GlobalConfigStatus> status,
                          const observe::GlobalConfigView& global_config, kube::EventRecorder* events,
                          std::shared_ptr<WebhookHealthSignal> signal, WebhookHealthOptions options);
  ~WebhookHealthController() override;

  const std::string& name() const override { return controller_.name(); }
  // Probes at once, then every interval.
  void start() override;
  void stop() override;

  // global-config was added, changed or deleted: probes at once when the interval changed (so a shorter one
  // applies now) or when the object appeared while its status was waiting for it.
  void global_config_changed();

  // One probe (what the worker runs); public for tests.
  kube::ReconcileOutcome reconcile();
  decide::WebhookHealthState state() const;
  kube::WorkQueue& queue() { return controller_.queue(); }

 private:
  struct Settings {
    common::Duration interval;
    std::int64_t success_threshold, failure_threshold;
  };
  Settings settings(const api::GlobalConfigObject* cached) const;
  // --webhook-bind-address=0: the condition says why nothing is probed (Unknown/WebhooksDisabled).
  kube::ReconcileOutcome reconcile_without_webhooks();
  // The verdict to the signal (ACT-2) and to kubex_webhook_healthy.
  void publish(decide::WebhookHealth h);
  decide::WebhookProbeResult probe(const api::GlobalConfigObject* cached);
  // `result` is null for the start-up write. A missing global-config is retried with the next probe.
  void write_status(const decide::WebhookHealthState& s, const decide::WebhookProbeResult* result,
                    common::TimePoint now);

  std::shared_ptr<act::ProbeRunner> probes_;
  std::shared_ptr<GlobalConfigStatus> status_;
  const observe::GlobalConfigView& global_config_;
  kube::EventRecorder* events_;
  prometheus::Family<prometheus::Gauge>* healthy_family_ = nullptr;
  std::shared_ptr<WebhookHealthSignal> signal_;
  WebhookHealthOptions options_;
  const common::Clock& clock_;
  kube::Controller controller_;

  mutable std::mutex mu_;
  decide::WebhookHealthState state_;
  bool started_ = false;           // the Unknown/Probing start-up write was attempted
  bool status_pending_ = false;    // the last write found no global-config
  common::Duration scheduled_{0};  // the interval the next probe was scheduled with
  common::Logger log_{"controller.globalconfiguration"};
};

}  // namespace kubex::controllers
