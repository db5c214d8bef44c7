#include "controllers/proactive_recommendations.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "act/owner_annotations.h"
#include "act/status.h"
#include "act/status_writer.h"
#include "api/keys.h"
#include "common/time_format.h"
#include "controllers/status_support.h"
#include "decide/admission/summary.h"
#include "decide/desired_annotations.h"
#include "decide/gpu_value.h"
#include "decide/policy/catalog.h"
#include "decide/policy/match.h"
#include "decide/proactive/owner_values.h"
#include "kube/runtime/metrics.h"
#include "observe/catalog_view.h"
#include "observe/config_maps.h"
#include "observe/gpu_history.h"

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

// OBS-4 for one workload the proactive winner governs: RECOMMENDED when a container's GPU value changes (with
// each change from the stored value), UNCHANGED when the owner already holds it, NO_DATA when no container has a
// value; `source` says where each value came from, and clamps list `floor-clamped`/`ceiling-clamped`.
decide::Summary proactive_summary(const decide::policy::Workload& workload, const decide::policy::MatchedPolicy& winner,
                                  const std::map<std::string, std::string>& before, const decide::OwnerValues& values,
                                  bool dry_run) {
  decide::Summary s;
  s.phase = "proactive";
  s.ns = workload.ns;
  s.owner = workload.ref();
  s.policies["requests.gpu"] = winner.ref;
  s.strategy = winner.strategy_ref;
  if (winner.strategy) s.mode = winner.strategy->spec.kai_mode() ? "kai" : "vanilla";
  s.result_text = values.result;
  s.applied_filters = values.clamps;
  s.sources = values.sources;
  s.dry_run = dry_run;
  if (values.requests_changed) s.changes = decide::recommendation_changes(before, values.after, winner.ref);
  s.text = decide::summary_text(s.changes);
  return s;
}

std::optional<std::string> annotation_of(const decide::policy::Workload& w, const std::string& key) {
  auto it = w.annotations.find(key);
  return it == w.annotations.end() ? std::nullopt : std::optional<std::string>(it->second);
}

// The proactive prefixes' keys (requests, limits, state) of `policy_kind`.
std::vector<std::string> proactive_keys(api::Kind policy_kind) {
  return {decide::desired_requests_key(policy_kind), decide::desired_limits_key(policy_kind),
          decide::proactive_state_key(policy_kind)};
}

// container -> gpu of a stored desired-resource-requests value (unreadable: empty).
std::map<std::string, std::string> stored_gpus(const std::map<std::string, std::string>& annotations,
                                               const std::string& key) {
  std::map<std::string, std::string> out;
  auto it = annotations.find(key);
  if (it == annotations.end()) return out;
  auto gpus = decide::parse_desired_gpu(it->second);
  if (!gpus) return out;
  for (const auto& [c, v] : *gpus) out[c] = decide::format_gpu(v);
  return out;
}

std::string policy_key_of(const api::Policy& p) {
  return ObjectId{p.kind, p.meta.ns, p.meta.name}.key();
}

}  // namespace

ProactiveRecommendations::ProactiveRecommendations(ProactiveDeps deps, ProactiveOptions options)
    : deps_(std::move(deps)),
      options_(std::move(options)),
      controller_(
          kName, [this](const std::string& key) { return reconcile(key); }, controller_options(options_)),
      recommendations_total_(options_.metrics) {
  if (!options_.clock) options_.clock = &common::RealClock::instance();
  if (deps_.prometheus) {
    HistoryEvaluationDeps hd;
    hd.catalog = deps_.catalog;
    hd.workloads = deps_.workloads;
    hd.subjects = std::move(deps_.subjects);
    hd.prometheus = std::move(deps_.prometheus);
    hd.status = std::move(deps_.policy_status);
    HistoryEvaluationOptions ho;
    ho.bearer_token_file = options_.bearer_token_file;
    ho.ca_file = options_.ca_file;
    ho.clock = options_.clock;
    ho.metrics = options_.metrics;
    ho.retry_after = options_.history_retry_after;
    HistoryEvaluations::Callbacks cb;
    cb.evaluated = [this](const std::string&, const std::vector<std::string>& keys) {
      for (const auto& k : keys) controller_.enqueue(k);
    };
    cb.recommended = [this](const std::string& policy) { return recommended_workloads(policy); };
    cb.has_config_map = [this] { return deps_.catalog->catalog()->global().has_recommendations_config_map; };
    history_ = std::make_unique<HistoryEvaluations>(std::move(hd), std::move(ho), std::move(cb));
  }
}

ProactiveRecommendations::~ProactiveRecommendations() {
  stop();
}

void ProactiveRecommendations::start() {
  {
    std::lock_guard lk(mu_);
    sources_loaded_ = false;  // a new term loads its sources again before writing
  }
  controller_.start();
  controller_.enqueue(kReload);
  if (history_) history_->start();
}

void ProactiveRecommendations::stop() {
  if (history_) history_->stop();
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
      if (history_) history_->recount();  // the ConfigMap's values are gone
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
    // The parse error names the key already ("recommendations.json: not valid JSON").
    report(false, "InvalidRecommendations", "ConfigMap " + location + ": " + parsed.error().str(), 0);
    answered();
    return again;
  }
  // PRO-6: lastCount and the message give the same number (accepted entries, repeats included).
  const std::string message = decide::recommendations_loaded_message(*parsed, location);
  const std::size_t accepted = parsed->accepted;
  bool changed = false;
  {
    std::lock_guard lk(mu_);
    changed = !set_ || set_->entries != parsed->entries;
    set_ = std::move(*parsed);
  }
  report(true, "Loaded", message, accepted);
  {
    std::lock_guard lk(mu_);
    sources_loaded_ = true;
  }
  enqueue_all();
  // recommendedWorkloads follows the set; a reload that found the same entries (every policy or status change
  // reloads) does not recount every workload.
  if (changed && history_) history_->recount();
  return again;
}

std::optional<decide::OwnerValues> ProactiveRecommendations::owner_values(const api::WorkloadView& w,
                                                                         const decide::policy::Workload& workload,
                                                                         const decide::policy::Match& match,
                                                                         bool note_first_match) {
  const decide::policy::MatchedPolicy& winner = match.policies[*match.proactive_winner];
  const std::string policy = policy_key_of(*winner.policy);
  std::optional<HistoryEvaluations::Lookup> history;
  if (history_) {
    history = history_->lookup(policy, observe::workload_key(w));
    if (history->seen == HistoryEvaluations::Seen::kNotYet) return std::nullopt;  // its evaluation enqueues it
    if (history->seen == HistoryEvaluations::Seen::kAbsent && note_first_match) {
      history_->first_match(policy, observe::workload_key(w));  // PRO-1: a workload that first matches
    }
  }
  const int headroom = deps_.catalog->catalog()->global().proactive_headroom_percent;
  decide::OwnerInput in;
  in.now = options_.clock->now();
  in.requests = annotation_of(workload, decide::desired_requests_key(winner.policy->kind));
  in.limits = annotation_of(workload, decide::desired_limits_key(winner.policy->kind));
  in.state = annotation_of(workload, decide::proactive_state_key(winner.policy->kind));
  std::vector<std::string> containers;
  for (const auto& c : deps_.workloads->target_containers(w)) containers.push_back(c.name);
  decide::WorkloadSources sources;
  sources.ns = workload.ns;
  sources.kind = workload.kind;
  sources.name = workload.name;
  if (history && history->seen == HistoryEvaluations::Seen::kRead && !history->history.failed) {
    sources.history = &history->history.containers;
    sources.allocations = &history->history.allocations;
  }
  sources.headroom_percent = headroom;
  sources.strategy = winner.strategy ? &winner.strategy->spec : nullptr;
  {
    std::lock_guard lk(mu_);
    sources.configmap = set_ ? &*set_ : nullptr;
    in.containers = decide::container_sources(containers, sources);
  }
  return decide::owner_values(in);
}

std::int64_t ProactiveRecommendations::recommended_workloads(const std::string& policy) {
  auto catalog = deps_.catalog->catalog();
  std::int64_t n = 0;
  for (const auto& w : deps_.workloads->list()) {
    decide::policy::Workload workload = observe::decision_workload(*w);
    decide::policy::Match match = decide::policy::match_policies(
        workload, catalog->candidates(), catalog->evaluation(), catalog->global().protected_namespace_patterns);
    if (match.on_hold || !match.proactive_winner) continue;
    if (policy_key_of(*match.policies[*match.proactive_winner].policy) != policy) continue;
    auto values = owner_values(*w, workload, match, /*note_first_match=*/false);
    if (values && !values->after.empty()) ++n;
  }
  return n;
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
  auto remove_present = [&](const std::vector<std::string>& keys) {
    for (const auto& k : keys) {
      if (workload.annotations.count(k)) remove.push_back(k);
    }
  };
  if (match.proactive_winner) {
    const decide::policy::MatchedPolicy& winner = match.policies[*match.proactive_winner];
    auto values = owner_values(*w, workload, match, /*note_first_match=*/true);
    if (!values) return kube::ReconcileResult{};  // the policy's history was never attempted: wait for it
    const std::vector<std::string> keys = proactive_keys(winner.policy->kind);
    const std::optional<std::string>* want[] = {&values->requests, &values->limits, &values->state};
    if (values->write) {
      for (std::size_t i = 0; i < keys.size(); ++i) {
        if (*want[i]) {
          if (annotation_of(workload, keys[i]) != *want[i]) set[keys[i]] = **want[i];
        } else if (workload.annotations.count(keys[i])) {
          remove.push_back(keys[i]);
        }
      }
    }
    // The losing proactive prefix is a SEL-7 stale key: the static owner controller removes it.
    summary = proactive_summary(workload, winner, stored_gpus(workload.annotations, keys[0]), *values,
                                options_.dry_run);
  } else {
    for (api::Kind pk : {api::Kind::kProactivePolicy, api::Kind::kClusterProactivePolicy}) {
      remove_present(proactive_keys(pk));
    }
  }
  auto written = deps_.annotations->write(*w, set, remove, "proactive recommendations");
  if (!written) return std::unexpected(written.error());
  if (summary) summaries_.write(log_, *summary);  // OBS-4: one line per reconcile of a governed workload
  if (*written != act::OwnerWrite::kWritten) return kube::ReconcileResult{*written == act::OwnerWrite::kStale};
  recommendations_total_.written(*w, set);  // OBS-5
  return kube::ReconcileResult{};
}

}  // namespace kubex::controllers
