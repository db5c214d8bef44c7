#include "controllers/proactive_recommendations.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "act/owner_annotations.h"
#include "act/status.h"
#include "act/status_writer.h"
#include "api/keys.h"
#include "common/time_format.h"
#include "decide/admission/summary.h"
#include "decide/gpu_value.h"
#include "decide/policy/catalog.h"
#include "decide/policy/match.h"
#include "kube/runtime/metrics.h"
#include "observe/catalog_view.h"
#include "observe/config_maps.h"

namespace kubex::controllers {

using nlohmann::json;

namespace {

constexpr const char* kDocumentKey = "recommendations.json";
constexpr const char* kCondition = "RecommendationsLoaded";

kube::ControllerOptions controller_options(const ProactiveOptions& options) {
  kube::ControllerOptions o;
  o.metrics = options.metrics;
  return o;
}

std::string desired_key(api::Kind k) {
  return std::string(api::annotation_prefix(k)) + api::keys::kDesiredRequestsSuffix;
}

// OBS-4 for one workload the proactive winner governs: RECOMMENDED when the owner's recommendation changes (with
// each container's change from the stored value), UNCHANGED when it already says so, NO_DATA when the ConfigMap
// has no value for any of its containers. A clamped value lists `floor-clamped`/`ceiling-clamped`.
decide::Summary proactive_summary(const decide::policy::Workload& workload, const decide::policy::MatchedPolicy& winner,
                                  const std::map<std::string, std::string>& before, const json& desired, bool written,
                                  const std::vector<std::string>& clamps, bool dry_run) {
  decide::Summary s;
  s.phase = "proactive";
  s.ns = workload.ns;
  s.owner = workload.ref();
  s.policies["requests.gpu"] = winner.ref;
  s.strategy = winner.strategy_ref;
  if (winner.strategy) s.mode = winner.strategy->spec.kai_mode() ? "kai" : "vanilla";
  s.result_text = desired.empty() ? "NO_DATA" : written ? "RECOMMENDED" : "UNCHANGED";
  s.applied_filters = clamps;
  s.dry_run = dry_run;
  if (written) {
    std::map<std::string, std::string> after;
    for (const auto& [c, v] : desired.items()) after[c] = v.value("gpu", "");
    s.changes = decide::recommendation_changes(before, after, winner.ref);
  }
  s.text = decide::summary_text(s.changes);
  return s;
}

// container -> gpu of a stored desired-resource-requests value (unreadable: empty).
std::map<std::string, std::string> stored_gpus(const std::map<std::string, std::string>& annotations,
                                               const std::string& key) {
  std::map<std::string, std::string> out;
  auto it = annotations.find(key);
  if (it == annotations.end()) return out;
  json v = json::parse(it->second, nullptr, false);
  if (!v.is_object()) return out;
  for (const auto& [c, r] : v.items()) {
    if (r.is_object() && r.contains("gpu") && r["gpu"].is_string()) out[c] = r["gpu"].get<std::string>();
  }
  return out;
}

}  // namespace

ProactiveRecommendations::ProactiveRecommendations(ProactiveDeps deps, ProactiveOptions options)
    : deps_(std::move(deps)),
      options_(std::move(options)),
      controller_(
          kName, [this](const std::string& key) { return reconcile(key); }, controller_options(options_)),
      recommendations_total_(options_.metrics) {
  if (!options_.clock) options_.clock = &common::RealClock::instance();
}

ProactiveRecommendations::~ProactiveRecommendations() {
  stop();
}

void ProactiveRecommendations::start() {
  controller_.start();
  controller_.enqueue(kReload);
}

void ProactiveRecommendations::stop() {
  if (deps_.config_maps) deps_.config_maps->stop();
  {
    std::lock_guard lk(mu_);
    followed_.clear();  // a new start follows the ConfigMap again
  }
  controller_.stop();
}

void ProactiveRecommendations::follow(const std::string& ns, const std::string& name) {
  std::string location = name.empty() ? "" : ns + "/" + name;
  {
    std::lock_guard lk(mu_);
    if (followed_ == location) return;
    followed_ = location;
  }
  if (!deps_.config_maps) return;
  if (location.empty()) {
    deps_.config_maps->follow("", "", nullptr);
  } else {
    deps_.config_maps->follow(ns, name, [this](const observe::ConfigMapEvent& e) { config_map_changed(e); });
  }
}

void ProactiveRecommendations::config_map_changed(const observe::ConfigMapEvent& e) {
  // Every (re)connect of the watch replays the ConfigMap as added: reload only on a new version.
  bool changed = e.type == observe::ConfigMapEvent::Type::kDeleted;
  if (!changed) {
    std::lock_guard lk(mu_);
    changed = e.resource_version != loaded_rv_;
  }
  if (changed) controller_.enqueue(kReload);
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
  auto r = deps_.status->write(
      api::object_path(api::Kind::kGlobalConfiguration, "", options_.global_config_name), c,
      options_.clock->now());
  if (!r) {
    log_.warn("cannot report the recommendations load on global-config", {{"error", r.error().str()}});
    return;
  }
  if (!ok && deps_.events) {
    kube::ObjectReference ref{
        api::kApiVersion, "GlobalConfiguration", "", options_.global_config_name, "", "", ""};
    deps_.events->event(ref, kube::EventType::kWarning, "RecommendationReloadFailed", message);
  }
}

kube::ReconcileOutcome ProactiveRecommendations::reload() {
  auto catalog = deps_.catalog->catalog();
  const api::GlobalConfigSpec& g = catalog->global();
  kube::ReconcileResult again{false, g.recommendation_reload_interval};
  auto enqueue_all = [&] {
    for (const auto& w : deps_.workloads->list()) controller_.enqueue(observe::workload_key(*w));
  };
  // The first answer (a set or a definitive failure) lets the workloads be written; they were held back until now.
  auto answered = [&] {
    bool first = false;
    {
      std::lock_guard lk(mu_);
      first = !sources_loaded_;
      sources_loaded_ = true;
    }
    if (first) enqueue_all();
  };
  if (!g.has_recommendations_config_map) {
    bool had = false;
    {
      std::lock_guard lk(mu_);
      had = set_.has_value() || !location_.empty();
      set_.reset();
      location_.clear();
    }
    follow("", "");
    if (had) {
      act::StatusChange c;
      c.remove = {kCondition};
      auto r = deps_.status->write(
          api::object_path(api::Kind::kGlobalConfiguration, "", options_.global_config_name), c,
          options_.clock->now());
      if (!r && !r.error().not_found())
        log_.warn("cannot update global-config status", {{"error", r.error().str()}});
      enqueue_all();
    }
    answered();
    return again;
  }
  std::string location = g.recommendations_config_map_namespace + "/" + g.recommendations_config_map_name;
  {
    std::lock_guard lk(mu_);
    location_ = location;
  }
  auto cm = deps_.config_maps->get(g.recommendations_config_map_namespace, g.recommendations_config_map_name);
  if (cm) {
    std::lock_guard lk(mu_);
    loaded_rv_ = cm->resource_version;
  }
  // Changes of the ConfigMap reload too (config_map_changed); followed once its version is known.
  follow(g.recommendations_config_map_namespace, g.recommendations_config_map_name);
  if (!cm) return std::unexpected("reading ConfigMap " + location + ": " + cm.error().str());
  if (!cm->found) {
    report(false, "ConfigMapNotFound", "ConfigMap " + location + " not found", 0);
    answered();
    return again;
  }
  auto document = cm->data.find(kDocumentKey);
  if (document == cm->data.end()) {
    report(false, "ConfigMapNotFound", std::string("ConfigMap ") + location + " has no key " + kDocumentKey,
           0);
    answered();
    return again;
  }
  auto parsed = decide::parse_recommendations(document->second);
  if (!parsed) {
    report(false, "InvalidRecommendations",
           std::string("ConfigMap ") + location + " key " + kDocumentKey + ": " + parsed.error().str(), 0);
    answered();
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
  {
    std::lock_guard lk(mu_);
    sources_loaded_ = true;
  }
  enqueue_all();
  return again;
}

kube::ReconcileOutcome ProactiveRecommendations::reconcile_workload(const std::string& key) {
  {
    std::lock_guard lk(mu_);
    if (!sources_loaded_) return kube::ReconcileResult{};  // the first load enqueues every workload
  }
  auto w = deps_.workloads->find(key);
  if (!w) return kube::ReconcileResult{};
  auto catalog = deps_.catalog->catalog();
  decide::policy::Workload workload = observe::decision_workload(*w);
  decide::policy::Match match = decide::policy::match_policies(
      workload, catalog->candidates(), catalog->evaluation(), catalog->global().protected_namespace_patterns);
  if (match.on_hold) return kube::ReconcileResult{};  // RBK-4
  std::map<std::string, std::string> set;
  std::vector<std::string> remove;
  std::optional<decide::Summary> summary;
  if (match.proactive_winner) {
    const decide::policy::MatchedPolicy& winner = match.policies[*match.proactive_winner];
    std::string k = desired_key(winner.policy->kind);
    json desired = json::object();
    std::vector<std::string> clamps;
    {
      std::lock_guard lk(mu_);
      if (set_) {
        for (const auto& c : deps_.workloads->target_containers(*w)) {
          const decide::Hundredths* v = set_->find({workload.ns, workload.kind, workload.name, c.name});
          if (!v || !winner.strategy) continue;
          decide::ProactiveValue pv = decide::clamp_proactive(*v, winner.strategy->spec, c.name);
          desired[c.name] = {{"gpu", decide::format_gpu(pv.gpu)}};
          if (pv.clamp != decide::Clamp::kNone) {
            const char* reason = pv.clamp == decide::Clamp::kFloor ? "floor-clamped" : "ceiling-clamped";
            if (std::find(clamps.begin(), clamps.end(), reason) == clamps.end()) clamps.emplace_back(reason);
          }
        }
      }
    }
    auto it = workload.annotations.find(k);
    if (desired.empty()) {
      if (it != workload.annotations.end()) remove.push_back(k);
    } else if (it == workload.annotations.end() || json::parse(it->second, nullptr, false) != desired) {
      set[k] = desired.dump();
    }
    std::sort(clamps.begin(), clamps.end());
    summary = proactive_summary(workload, winner, stored_gpus(workload.annotations, k), desired, !set.empty(), clamps,
                                options_.dry_run);
  } else {
    for (api::Kind pk : {api::Kind::kProactivePolicy, api::Kind::kClusterProactivePolicy}) {
      if (workload.annotations.count(desired_key(pk))) remove.push_back(desired_key(pk));
    }
  }
  auto written = deps_.annotations->write(*w, set, remove, "proactive recommendations");
  if (!written) return std::unexpected(written.error());
  if (summary && log_.enabled(common::LogLevel::kInfo)) {  // OBS-4: one line per reconcile of a governed workload
    log_.log_members(common::LogLevel::kInfo, "rightsizing summary", decide::summary_members(*summary));
  }
  if (*written != act::OwnerWrite::kWritten) return kube::ReconcileResult{*written == act::OwnerWrite::kStale};
  recommendations_total_.written(*w, set);  // OBS-5
  return kube::ReconcileResult{};
}

}  // namespace kubex::controllers
