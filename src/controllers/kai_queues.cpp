#include "controllers/kai_queues.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "act/kai_queues.h"
#include "act/status.h"
#include "api/keys.h"
#include "api/kubex_views.h"
#include "observe/catalog_view.h"
#include "kube/runtime/event_recorder.h"

namespace kubex::controllers {

using nlohmann::json;

namespace {

constexpr const char* kKey = "builtin-queues";
constexpr const char* kGroupVersion = "scheduling.run.ai/v2";

}  // namespace

json kai_queue_object(const std::string& name, const std::string& parent) {
  json unlimited = {{"quota", -1}, {"limit", -1}, {"overQuotaWeight", 1}};
  json spec = {{"resources", {{"cpu", unlimited}, {"gpu", unlimited}, {"memory", unlimited}}}};
  if (!parent.empty()) spec["parentQueue"] = parent;
  return {
      {"apiVersion", kGroupVersion},
      {"kind", "Queue"},
      {"metadata", {{"name", name}, {"labels", {{api::keys::kManagedByLabel, api::keys::kManagedByValue}}}}},
      {"spec", std::move(spec)}};
}

const std::vector<std::pair<std::string, std::string>>& builtin_kai_queues() {
  static const std::vector<std::pair<std::string, std::string>> v = {
      {api::keys::kParentKaiQueue, ""}, {api::keys::kDefaultKaiQueue, api::keys::kParentKaiQueue}};
  return v;
}

KaiQueuesController::KaiQueuesController(std::shared_ptr<act::QueueWriter> api,
                                         std::shared_ptr<GlobalConfigStatus> status,
                                         const observe::GlobalConfigView& global_config,
                                         kube::EventRecorder* events, KaiQueuesOptions options)
    : api_(std::move(api)),
      status_(std::move(status)),
      global_config_(global_config),
      events_(events),
      options_(std::move(options)),
      clock_(options_.clock ? *options_.clock : common::RealClock::instance()),
      controller_(
          kKaiQueuesController, [this](const std::string&) { return reconcile(); },
          kube::ControllerOptions{1, &clock_, nullptr, options_.metrics}) {
  // VAL-6 spirit: a zero or negative interval must never turn into a busy loop.
  options_.check_interval = std::max<common::Duration>(options_.check_interval, std::chrono::seconds(1));
  options_.status_retry = std::max<common::Duration>(options_.status_retry, std::chrono::milliseconds(100));
}

KaiQueuesController::~KaiQueuesController() {
  stop();
}

void KaiQueuesController::start() {
  controller_.enqueue(kKey);
  controller_.start();
}

void KaiQueuesController::stop() {
  controller_.stop();
}

void KaiQueuesController::global_config_changed() {
  auto cached = global_config_.global_config();
  bool check = false;
  {
    std::lock_guard lk(mu_);
    if (!cached) return;  // deleted: the next write finds it missing and waits for it
    std::string current;
    for (const auto& c : cached->parsed.value.conditions) {
      if (c.type == kKaiQueuesReady) current = c.status + "/" + c.reason;
    }
    // A new object, a status someone else rewrote, or a write waiting for the object.
    check = status_pending_ || !written_ || *written_ != current;
  }
  if (check) controller_.enqueue(kKey);
}

kube::KResult<KaiQueuesController::Outcome> KaiQueuesController::ensure_queues() {
  auto served = api_->queues_served();
  if (!served) return std::unexpected(served.error());
  if (!*served) {
    return Outcome{"False", "QueueAPINotInstalled",
                   "the API server does not serve scheduling.run.ai/v2 queues (is KAI-Scheduler installed?); "
                   "checking again"};
  }
  for (const auto& [name, parent] : builtin_kai_queues()) {
    auto exists = api_->queue_exists(name);
    if (!exists) return std::unexpected(exists.error());
    if (*exists) continue;  // QUE-1: an existing queue is never modified
    auto made = api_->create_queue(kai_queue_object(name, parent));
    if (!made && !made.error().already_exists()) {
      log_.warn("cannot create KAI queue", {{"queue", name}, {"error", made.error().str()}});
      return Outcome{"False", "QueueCreateFailed", "cannot create Queue " + name + ": " + made.error().str()};
    }
    if (made) {
      log_.info("created KAI queue", {{"queue", name}, {"parentQueue", parent}});
      if (events_) {
        auto cached = global_config_.global_config();
        events_->event(global_config_ref(status_->name(), cached.get()), kube::EventType::kNormal,
                       "QueueCreated",
                       "created Queue " + name +
                           (parent.empty() ? std::string(" (top level)") : " (parent " + parent + ")"));
      }
    }
  }
  std::string names;
  for (const auto& [name, parent] : builtin_kai_queues()) names += (names.empty() ? "" : ", ") + name;
  return Outcome{"True", "QueuesReady", "the built-in KAI queues exist: " + names};
}

void KaiQueuesController::queue_deleted(const std::string& name) {
  if (!options_.enabled) return;
  for (const auto& [builtin, parent] : builtin_kai_queues()) {
    if (builtin == name) {
      log_.info("a built-in KAI queue was deleted; checking the queues now", {{"queue", name}});
      controller_.enqueue(kKey);
      return;
    }
  }
}

kube::ReconcileOutcome KaiQueuesController::reconcile() {
  act::StatusChange change;
  std::string written;
  common::Duration next = options_.check_interval;
  if (!options_.enabled) {
    // QUE-2: the feature is off, the condition goes away (queues are left alone).
    auto cached = global_config_.global_config();
    bool present = false;
    if (cached) {
      for (const auto& c : cached->parsed.value.conditions) present = present || c.type == kKaiQueuesReady;
    }
    {
      std::lock_guard lk(mu_);
      if (cached && !present) {
        written_ = "";
        status_pending_ = false;
        return kube::ReconcileResult{};
      }
    }
    change.remove.push_back(kKaiQueuesReady);
    next = common::Duration::zero();
  } else {
    auto outcome = ensure_queues();
    if (!outcome) {
      // An API error (not "not installed"): the condition keeps its last value; rate-limited retry.
      return std::unexpected("checking KAI queues: " + outcome.error().str());
    }
    change.set.push_back({kKaiQueuesReady, outcome->status, outcome->reason, outcome->message});
    written = outcome->status + "/" + outcome->reason;
    // "Keeps checking": a missing API or a failed create is looked at again within a minute.
    if (outcome->status != "True") next = std::min<common::Duration>(next, std::chrono::minutes(1));
  }
  auto w = status_->update(change, clock_.now());
  std::lock_guard lk(mu_);
  if (!w) {
    if (w.error().not_found()) {
      // global-config does not exist yet (API-4 creates it): retry soon, and at once when it appears.
      status_pending_ = true;
      log_.debug("global-config does not exist yet; status write postponed", {{"name", status_->name()}});
      // With the feature off there is nothing to remove from a missing object.
      if (!options_.enabled) return kube::ReconcileResult{};
      return kube::ReconcileResult{false, std::min(next, options_.status_retry)};
    }
    return std::unexpected("writing " + status_->name() + " status: " + w.error().str());
  }
  status_pending_ = false;
  written_ = written;
  return kube::ReconcileResult{false, next};
}

}  // namespace kubex::controllers
