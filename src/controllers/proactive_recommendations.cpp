#include "controllers/proactive_recommendations.h"

#include "act/status_writer.h"
#include "observe/catalog_view.h"

#include <nlohmann/json.hpp>

#include "act/status.h"
#include "api/keys.h"
#include "common/time_format.h"
#include "decide/gpu_value.h"
#include "decide/policy/match.h"
#include "kube/client/client.h"
#include "kube/runtime/metrics.h"

namespace kubex::controllers {

using nlohmann::json;

namespace {

constexpr const char* kDocumentKey = "recommendations.json";
constexpr const char* kCondition = "RecommendationsLoaded";

kube::ControllerOptions controller_options(kube::Metrics* metrics) {
  kube::ControllerOptions o;
  o.metrics = metrics;
  return o;
}

std::string desired_key(api::Kind k) {
  return std::string(api::annotation_prefix(k)) + api::keys::kDesiredRequestsSuffix;
}

}  // namespace

ProactiveRecommendations::ProactiveRecommendations(
    std::shared_ptr<kube::Client> client, const observe::Caches& caches,
    const observe::CatalogView& catalog, kube::Metrics* metrics,
    kube::EventRecorder* events, ProactiveOptions options)
    : client_(std::move(client)),
      caches_(caches),
      writer_(act::client_annotation_writer(client_, options.dry_run, log_)),
      status_writer_(act::client_status_writer(client_)),
      catalog_(catalog),
      events_(events),
      options_(options),
      controller_(
          "proactivepolicy", [this](const std::string& key) { return reconcile(key); },
          controller_options(metrics)),
      recommendations_total_(metrics) {
  if (!options_.clock) options_.clock = &common::RealClock::instance();
}

ProactiveRecommendations::~ProactiveRecommendations() {
  stop();
}

void ProactiveRecommendations::start() {
  controller_.start();
  controller_.enqueue(kReload);
  stop_ = false;
  watcher_ = std::thread([this] { watch_loop(); });
}

void ProactiveRecommendations::stop() {
  stop_ = true;
  if (watcher_.joinable()) watcher_.join();
  controller_.stop();
}

kube::ReconcileOutcome ProactiveRecommendations::reconcile(const std::string& key) {
  if (key == kReload) return reload();
  return reconcile_workload(key);
}

void ProactiveRecommendations::report(bool ok, const std::string& reason, const std::string& message,
                                      std::size_t count) {
  std::string now = common::format_rfc3339(options_.clock->now());
  act::StatusChange c;
  c.set.push_back({kCondition, ok ? "True" : "False", reason, message});
  c.fields = ok ? json{{"recommendationReload", {{"lastTime", now}, {"lastCount", count}}}}
                : json{{"recommendationReload", {{"lastError", message}, {"lastErrorTime", now}}}};
  auto r = status_writer_->write(api::object_path(api::Kind::kGlobalConfiguration, "", options_.global_config_name),
                                 c, options_.clock->now());
  if (!r) {
    log_.warn("cannot report the recommendations load on global-config", {{"error", r.error().str()}});
    return;
  }
  if (!ok && events_) {
    kube::ObjectReference ref{
        api::kApiVersion, "GlobalConfiguration", "", options_.global_config_name, "", "", ""};
    events_->event(ref, kube::EventType::kWarning, "RecommendationReloadFailed", message);
  }
}

kube::ReconcileOutcome ProactiveRecommendations::reload() {
  auto catalog = catalog_.catalog();
  const api::GlobalConfigSpec& g = catalog->global();
  kube::ReconcileResult again{false, g.recommendation_reload_interval};
  auto enqueue_all = [&] {
    for (const auto& w : observe::list_workloads(caches_)) controller_.enqueue(observe::workload_key(*w));
  };
  if (!g.has_recommendations_config_map) {
    bool had = false;
    {
      std::lock_guard lk(mu_);
      had = set_.has_value() || !location_.empty();
      set_.reset();
      location_.clear();
    }
    if (had) {
      act::StatusChange c;
      c.remove = {kCondition};
      auto r = status_writer_->write(
          api::object_path(api::Kind::kGlobalConfiguration, "", options_.global_config_name), c,
          options_.clock->now());
      if (!r && !r.error().not_found())
        log_.warn("cannot update global-config status", {{"error", r.error().str()}});
      enqueue_all();
    }
    return again;
  }
  std::string location = g.recommendations_config_map_namespace + "/" + g.recommendations_config_map_name;
  {
    std::lock_guard lk(mu_);
    location_ = location;
  }
  auto cm = client_->get(kube::resource_path("", "v1", "configmaps", g.recommendations_config_map_namespace,
                                             g.recommendations_config_map_name));
  if (!cm && !cm.error().not_found()) {
    return std::unexpected("reading ConfigMap " + location + ": " + cm.error().str());
  }
  {
    std::lock_guard lk(mu_);
    loaded_rv_ = cm ? (*cm)["metadata"].value("resourceVersion", "") : "";
  }
  if (!cm) {
    report(false, "ConfigMapNotFound", "ConfigMap " + location + " not found", 0);
    return again;
  }
  const json* data = cm->contains("data") && (*cm)["data"].is_object() ? &(*cm)["data"] : nullptr;
  if (!data || !data->contains(kDocumentKey) || !(*data)[kDocumentKey].is_string()) {
    report(false, "ConfigMapNotFound", std::string("ConfigMap ") + location + " has no key " + kDocumentKey,
           0);
    return again;
  }
  auto parsed = decide::parse_recommendations((*data)[kDocumentKey].get<std::string>());
  if (!parsed) {
    report(false, "InvalidRecommendations",
           std::string("ConfigMap ") + location + " key " + kDocumentKey + ": " + parsed.error().str(), 0);
    return again;
  }
  // PRO-6: lastCount and the message give the same number (accepted entries, repeats included).
  const std::string message = decide::recommendations_loaded_message(*parsed, location);
  const std::size_t accepted = parsed->accepted;
  {
    std::lock_guard lk(mu_);
    set_ = std::move(*parsed);
  }
  report(true, "Loaded", message, accepted);
  enqueue_all();
  return again;
}

kube::ReconcileOutcome ProactiveRecommendations::reconcile_workload(const std::string& key) {
  auto w = observe::find_workload(caches_, key);
  if (!w) return kube::ReconcileResult{};
  auto catalog = catalog_.catalog();
  decide::policy::Workload workload = observe::decision_workload(*w);
  decide::policy::Match match = decide::policy::match_policies(
      workload, catalog->candidates(), catalog->evaluation(), catalog->global().protected_namespace_patterns);
  if (match.on_hold) return kube::ReconcileResult{};  // RBK-4
  std::map<std::string, std::string> set;
  std::vector<std::string> remove;
  if (match.proactive_winner) {
    const decide::policy::MatchedPolicy& winner = match.policies[*match.proactive_winner];
    std::string k = desired_key(winner.policy->kind);
    json desired = json::object();
    {
      std::lock_guard lk(mu_);
      if (set_) {
        for (const auto& c : observe::target_containers_of(caches_, *w)) {
          const decide::Hundredths* v = set_->find({workload.ns, workload.kind, workload.name, c.name});
          if (!v || !winner.strategy) continue;
          decide::ProactiveValue pv = decide::clamp_proactive(*v, winner.strategy->spec, c.name);
          desired[c.name] = {{"gpu", decide::format_gpu(pv.gpu)}};
        }
      }
    }
    auto it = workload.annotations.find(k);
    if (desired.empty()) {
      if (it != workload.annotations.end()) remove.push_back(k);
    } else if (it == workload.annotations.end() || json::parse(it->second, nullptr, false) != desired) {
      set[k] = desired.dump();
    }
  } else {
    for (api::Kind pk : {api::Kind::kProactivePolicy, api::Kind::kClusterProactivePolicy}) {
      if (workload.annotations.count(desired_key(pk))) remove.push_back(desired_key(pk));
    }
  }
  auto written =
      writer_->write(*w, set, remove, "proactive recommendations");
  if (!written) return std::unexpected(written.error());
  if (*written != act::OwnerWrite::kWritten) return kube::ReconcileResult{*written == act::OwnerWrite::kStale};
  recommendations_total_.written(*w, set);  // OBS-5
  return kube::ReconcileResult{};
}

void ProactiveRecommendations::watch_loop() {
  while (!stop_) {
    std::string location;
    {
      std::lock_guard lk(mu_);
      location = location_;
    }
    auto slash = location.find('/');
    if (slash == std::string::npos) {
      for (int i = 0; i < 10 && !stop_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    kube::WatchOptions wo;
    wo.field_selector = "metadata.name=" + location.substr(slash + 1);
    wo.timeout_seconds = 30;  // a location change is picked up within this
    wo.allow_bookmarks = false;
    auto r = client_->watch(
        kube::resource_path("", "v1", "configmaps", location.substr(0, slash)), wo,
        [this](kube::WatchEvent&& ev) {
          // Every (re)connect replays the ConfigMap as ADDED: reload only on a new version.
          std::string rv;
          if (ev.object && ev.object->contains("metadata")) {
            rv = (*ev.object)["metadata"].value("resourceVersion", "");
          }
          bool changed = ev.type == "DELETED";
          if (ev.type == "ADDED" || ev.type == "MODIFIED") {
            std::lock_guard lk(mu_);
            changed = rv != loaded_rv_;
          }
          if (changed) controller_.enqueue(kReload);
          return !stop_;
        },
        &stop_);
    if (!r && !stop_) {
      // Without watch permission the reload interval and global-config changes still reload.
      for (int i = 0; i < 50 && !stop_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
}

}  // namespace kubex::controllers
