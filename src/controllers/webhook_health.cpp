#include "controllers/webhook_health.h"

#include <prometheus/family.h>
#include <prometheus/gauge.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "act/status.h"
#include "api/kubex_views.h"
#include "observe/catalog_view.h"
#include "common/hash.h"
#include "common/time_format.h"
#include "kube/runtime/event_recorder.h"

namespace kubex::controllers {

using nlohmann::json;

namespace {

constexpr const char* kKey = "webhook-health";

}  // namespace

WebhookHealthController::WebhookHealthController(std::shared_ptr<act::ProbeRunner> probes,
                                                 std::shared_ptr<GlobalConfigStatus> status,
                                                 const observe::GlobalConfigView& global_config,
                                                 kube::EventRecorder* events,
                                                 std::shared_ptr<WebhookHealthSignal> signal,
                                                 WebhookHealthOptions options)
    : probes_(std::move(probes)),
      status_(std::move(status)),
      global_config_(global_config),
      events_(events),
      signal_(std::move(signal)),
      options_(std::move(options)),
      clock_(options_.clock ? *options_.clock : common::RealClock::instance()),
      controller_(
          kWebhookHealthController, [this](const std::string&) { return reconcile(); },
          kube::ControllerOptions{1, &clock_, nullptr, options_.metrics}) {
  options_.min_interval = std::max<common::Duration>(options_.min_interval, std::chrono::milliseconds(10));
  if (options_.metrics) {
    healthy_family_ = &options_.metrics->gauge_family(
        "kubex_webhook_healthy", "1 while PodAdmissionWebhookHealthy is True, else 0 (leader only).");
  }
}

void WebhookHealthController::publish(decide::WebhookHealth h) {
  if (signal_) signal_->set(h);
  // OBS-5, RPT-6: the series appears with the first verdict, so only the replica that runs this controller (the
  // leader, ENG-1) exports it.
  if (healthy_family_) healthy_family_->Add({}).Set(h == decide::WebhookHealth::kHealthy ? 1 : 0);
}

WebhookHealthController::~WebhookHealthController() {
  stop();
}

void WebhookHealthController::start() {
  controller_.enqueue(kKey);
  controller_.start();
}

void WebhookHealthController::stop() {
  controller_.stop();
}

decide::WebhookHealthState WebhookHealthController::state() const {
  std::lock_guard lk(mu_);
  return state_;
}

WebhookHealthController::Settings WebhookHealthController::settings(
    const api::GlobalConfigObject* cached) const {
  // Invalid objects still give their best-effort values (as the catalog does); the floors keep an invalid
  // interval or threshold from becoming a busy loop or a disabled check (VAL-6).
  api::GlobalConfigSpec defaults;
  const api::GlobalConfigSpec& spec = cached ? cached->parsed.value.spec : defaults;
  return {std::max<common::Duration>(spec.webhook_transition_check_interval, options_.min_interval),
          std::max<std::int64_t>(1, spec.webhook_success_threshold),
          std::max<std::int64_t>(1, spec.webhook_failure_threshold)};
}

kube::ReconcileOutcome WebhookHealthController::reconcile_without_webhooks() {
  bool first = false;
  {
    std::lock_guard lk(mu_);
    first = !started_;
    started_ = true;
  }
  if (first) log_.info("webhooks disabled: no webhook probe; evictions stay paused", {});
  publish(decide::WebhookHealth::kUnknown);
  act::StatusChange change;
  change.set.push_back({kWebhookHealthy, decide::webhook_health_status(decide::WebhookHealth::kUnknown),
                        decide::kWebhooksDisabledReason, decide::kWebhooksDisabledMessage});
  auto w = status_->update(change, clock_.now());
  std::lock_guard lk(mu_);
  status_pending_ = !w;  // global-config missing (or the write failed): written when it comes
  if (!w && !w.error().not_found()) {
    log_.warn("cannot write webhook health status", {{"name", status_->name()}, {"error", w.error().str()}});
  }
  return kube::ReconcileResult{false, status_pending_ ? std::chrono::seconds(30) : common::Duration::zero()};
}

void WebhookHealthController::global_config_changed() {
  if (!options_.webhooks_served) {
    bool pending = false;
    {
      std::lock_guard lk(mu_);
      pending = started_ && status_pending_;
    }
    if (pending) controller_.enqueue(kKey);
    return;
  }
  auto cached = global_config_.global_config();
  if (!cached) return;
  Settings s = settings(cached.get());
  bool probe_now = false;
  {
    std::lock_guard lk(mu_);
    // scheduled_ is 0 while the first probe runs: it schedules the next one itself.
    probe_now =
        started_ && scheduled_ != common::Duration::zero() && (status_pending_ || s.interval != scheduled_);
  }
  if (probe_now) controller_.enqueue(kKey);
}

decide::WebhookProbeResult WebhookHealthController::probe(const api::GlobalConfigObject* cached) {
  api::GlobalConfigSpec defaults;
  const api::GlobalConfigSpec& spec = cached ? cached->parsed.value.spec : defaults;
  json pod = build_probe_pod(spec, options_.ns, common::random_alnum(5), options_.default_image);
  std::string where = options_.ns + "/" + pod["metadata"]["name"].get<std::string>();
  decide::WebhookProbeResult r;
  decide::ProbeObservation o;
  o.pod = where;
  o.api_timeout = options_.api_timeout;
  auto started = std::chrono::steady_clock::now();
  auto admitted = probes_->dry_run_create_pod(options_.ns, pod);
  if (!admitted) {
    const kube::ApiStatus& e = admitted.error();
    o.api_failed = true;
    o.api_code = e.code;
    o.api_reason = e.reason;
    o.api_message = e.message;
  } else {
    auto missing = missing_probe_markers(*admitted, options_.early_enabled);
    o.missing_early = missing.early;
    o.missing_late = missing.late;
    if (missing.any() && options_.witness) {
      auto seen = options_.witness->sighting(pod["metadata"]["name"].get<std::string>(), started);
      o.seen_early = seen.early;
      o.seen_late = seen.late;
      o.tls_failure = seen.tls_failure;
    }
  }
  r.error = decide::probe_failure_message(o);
  r.success = r.error.empty();
  return r;
}

void WebhookHealthController::write_status(const decide::WebhookHealthState& s,
                                           const decide::WebhookProbeResult* result, common::TimePoint now) {
  act::StatusChange change;
  change.set.push_back({kWebhookHealthy, decide::webhook_health_status(s.health),
                        decide::webhook_health_reason(s.health), s.message});
  if (result) {
    // WHH-3: the counters, lastProbeResult and lastProbeTime after every probe. (The start-up write only sets
    // the condition; the first probe follows at once.)
    change.fields["webhookHealth"] = {{"consecutiveFailures", s.consecutive_failures},
                                      {"consecutiveSuccesses", s.consecutive_successes},
                                      {"lastProbeResult", result->success ? "Success" : "Failure"},
                                      {"lastProbeTime", common::format_rfc3339(now)}};
  }
  auto w = status_->update(change, now);
  std::lock_guard lk(mu_);
  if (!w) {
    status_pending_ = w.error().not_found();
    if (status_pending_) {
      log_.debug("global-config does not exist yet; webhook health status not written",
                 {{"name", status_->name()}});
    } else {
      log_.warn("cannot write webhook health status",
                {{"name", status_->name()}, {"error", w.error().str()}});
    }
    return;
  }
  status_pending_ = false;
}

kube::ReconcileOutcome WebhookHealthController::reconcile() {
  if (!options_.webhooks_served) return reconcile_without_webhooks();
  auto cached = global_config_.global_config();
  Settings s = settings(cached.get());
  bool first = false;
  {
    std::lock_guard lk(mu_);
    first = !started_;
    started_ = true;
  }
  if (first) {
    // WHH-3: the condition starts as Unknown/Probing.
    publish(decide::WebhookHealth::kUnknown);
    write_status(decide::WebhookHealthState{}, nullptr, clock_.now());
  }
  if (options_.registration && !options_.registration->registered()) {
    // Issue 34 item 9: a probe sent before the engine's own webhook configurations exist can only fail.
    log_.debug("webhook probe waits for the webhook configurations to be registered");
    return kube::ReconcileResult{false, std::min(options_.registration_poll, s.interval)};
  }
  decide::WebhookProbeResult result = probe(cached.get());
  common::TimePoint now = clock_.now();
  decide::WebhookHealthStep step;
  {
    std::lock_guard lk(mu_);
    step = decide::next_webhook_health(state_, result, s.success_threshold, s.failure_threshold);
    state_ = step.next;
    scheduled_ = s.interval;
  }
  publish(step.next.health);
  if (result.success) {
    log_.debug("webhook probe succeeded", {{"consecutiveSuccesses", step.next.consecutive_successes}});
  } else {
    log_.warn("webhook probe failed",
              {{"error", result.error}, {"consecutiveFailures", step.next.consecutive_failures}});
  }
  if (step.became_unhealthy) {
    log_.error("pod admission webhook is unhealthy", {{"error", result.error}});
    if (events_) {
      events_->event(global_config_ref(status_->name(), cached.get()), kube::EventType::kWarning,
                     "PodAdmissionWebhookUnhealthy", result.error);
    }
  }
  write_status(step.next, &result, now);
  return kube::ReconcileResult{false, s.interval};
}

}  // namespace kubex::controllers
