#include "controllers/rollback.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "act/evictor.h"
#include "act/owner_annotations.h"
#include "act/pod_annotations.h"
#include "api/keys.h"
#include "controllers/webhook_health_signal.h"
#include "decide/actuation/rollback.h"
#include "decide/admission/pod_mutation.h"
#include "decide/admission/summary.h"
#include "kube/runtime/event_recorder.h"
#include "observe/workloads.h"

namespace kubex::controllers {

namespace {

namespace da = decide::actuation;
using namespace std::chrono_literals;

std::optional<std::string> annotation_of(const api::WorkloadView& w, std::string_view key) {
  if (const auto* v = w.annotation(key)) return v->str();
  return std::nullopt;
}

// The rightsizing summary line of a reconcile that only kept the state (no pod to judge).
void log_state(const common::Logger& log, SummaryLog& summaries, const WorkloadContext& w, const std::string& strategy,
               const char* result, bool dry_run) {
  if (!log.enabled(common::LogLevel::kInfo)) return;
  decide::Summary s;
  s.phase = "rollback";
  s.ns = w.ns;
  s.owner = w.workload.ref();
  s.strategy = strategy;
  s.result_text = result;
  s.dry_run = dry_run;
  s.text = "Rolled back to the original GPU form";
  summaries.write(log, s);
}

}  // namespace

RollbackController::RollbackController(RollbackDeps deps, RollbackOptions options)
    : WorkloadController(kName, std::move(deps.facts), options.clock, options.metrics),
      deps_(std::move(deps)),
      options_(options) {}

RollbackController::~RollbackController() {
  stop();
}

void RollbackController::owner_event(const WorkloadContext& w, const char* reason, const std::string& message) {
  if (!deps_.events) return;
  const api::WorkloadView& v = *w.view;
  deps_.events->event({act::owner_api_version(v.kind.str()), v.kind.str(), w.ns, v.name, v.uid, "", ""},
                      kube::EventType::kNormal, reason, message);
}

kube::ReconcileOutcome RollbackController::reconcile_workload(const std::string& key) {
  std::optional<WorkloadContext> w = read_workload(facts(), *deps_.catalog, key);
  if (!w) {
    memory_.erase(key);
    return kube::ReconcileResult{};
  }
  const common::TimePoint now = this->now();
  const api::WorkloadView& view = *w->view;
  std::vector<da::PodFacts> pods = facts().pods(view);

  da::RollbackInput in;
  in.managed = w->match.managed;
  in.on_hold = w->match.on_hold;
  in.dry_run = options_.dry_run;
  in.state_text = annotation_of(view, api::keys::kRollbackState);
  if (!in.managed && !in.state_text) return kube::ReconcileResult{};  // never managed, or rolled back
  if (in.managed && !in.on_hold) {
    if (auto tmpl = facts().pod_template(view)) {
      in.strategy = desired_decision(*w, *tmpl, now, options_.dry_run).summary.strategy;  // SEL-9
    }
  }
  for (const auto& [k, v] : view.annotations) in.owner_annotation_keys.push_back(k.str());
  for (const da::PodFacts& p : pods) {
    if (p.controller_owned && !p.finished() && p.has_rightsizing_info()) in.pods_with_rightsizing_info.push_back(p.name);
  }
  std::string recorded;  // RBK-2: the rollback uses the recorded strategy's settings
  bool readable = false;
  if (in.state_text) {
    if (auto st = da::parse_rollback_state(*in.state_text)) {
      recorded = st->strategy;
      readable = true;
    }
  }
  // RBK-1's first write, or VAL-7's rebuild: only then is the original read.
  if (!readable) {
    if (auto source = facts().original(view)) in.initial = da::initial_state(in.strategy, *source);
  }
  const da::Settings recorded_settings = settings_for(*w, recorded, true, options_.dry_run);
  in.strategy_allows_eviction = recorded_settings.eviction_enabled;
  in.pods_with_stale_constraints = da::stale_constraint_pods(pods);
  in.annotate_pods = recorded_settings.automation_enabled && !recorded_settings.protected_namespace;

  da::RollbackPlan plan = da::rollback_step(in);

  // RBK-2, OBS-3: the pods kubex left as they were lose what it recorded on them, before rollback-state goes (a
  // failed write is retried while the state is still there to say the workload is rolling back).
  for (const std::string& pod : plan.clear_constraints) {
    if (!deps_.pod_annotations) break;
    auto r = deps_.pod_annotations->write(w->ns, pod, {{api::keys::kAutomationConstraints, std::nullopt}});
    if (!r) {
      return std::unexpected("removing the automation-constraints of pod " + w->ns + "/" + pod + ": " +
                             r.error().str());
    }
  }

  // RBK-1: the history follows the newest Running pod while the workload is managed.
  std::optional<std::string> write = plan.write_state;
  if (in.managed && !in.on_hold && !options_.dry_run) {
    const std::optional<std::string>& base = write ? write : in.state_text;
    std::optional<da::RollbackState> state;
    if (base) {
      if (auto parsed = da::parse_rollback_state(*base)) state = std::move(*parsed);
    }
    if (state) {
      if (auto i = da::history_pod(pods)) {
        const auto& p = pods[*i];
        auto info = p.annotations.find(api::keys::kPodRightsizingInfo);
        da::HistorySource src = da::history_source(info == p.annotations.end() ? "" : info->second);
        if (da::append_history(*state, p.live, src, now)) write = da::format_rollback_state(*state);
      }
    }
  }

  std::map<std::string, std::string> set;
  std::vector<std::string> remove = plan.remove_annotations;
  if (write) set[api::keys::kRollbackState] = *write;
  if (plan.remove_state) {
    remove.push_back(api::keys::kRollbackState);
    // ACT-9: what ACT-5/ACT-7 remembered goes with it; a workload managed again starts afresh.
    if (view.annotation(api::keys::kActuationState)) remove.push_back(api::keys::kActuationState);
  }
  if (!set.empty() || !remove.empty()) {
    auto r = deps_.owner_annotations->write(view, set, remove, "rollback state");
    if (!r) return std::unexpected(r.error());
    if (*r == act::OwnerWrite::kStale) return kube::ReconcileResult{false, 1s};  // the cache is behind
    if (*r == act::OwnerWrite::kGone) return kube::ReconcileResult{};
  }
  if (plan.event_started) {
    owner_event(*w, "RollbackStarted",
                "no policy matches this workload any more: removing kubex's recommendations and replacing the pods "
                "it resized (" + std::to_string(in.pods_with_rightsizing_info.size()) + ") with their original form");
  }
  if (plan.event_completed) {
    owner_event(*w, "RollbackCompleted",
                in.strategy_allows_eviction || in.pods_with_rightsizing_info.empty()
                    ? "every pod is back in its original form; rollback-state removed"
                    : "rollback-state removed; the strategy disables evictions, so the running pods keep their size "
                      "until they are restarted");
    memory_.erase(key);
    log_state(log_, summaries_, *w, recorded, da::result_name(da::Result::kRolledBack), options_.dry_run);
    return kube::ReconcileResult{};
  }
  if (plan.roll_pods.empty()) {
    memory_.erase(key);
    return kube::ReconcileResult{false, std::chrono::minutes(1)};
  }
  common::Duration requeue = std::chrono::minutes(1);
  roll_pods(key, *w, recorded, now, requeue);
  return kube::ReconcileResult{false, requeue};
}

da::Result RollbackController::roll_pods(const std::string& key, const WorkloadContext& w, const std::string& strategy,
                                         common::TimePoint now, common::Duration& requeue) {
  da::Input in;
  in.purpose = da::Purpose::kRollback;
  in.now = now;
  in.settings = settings_for(w, strategy, !deps_.webhook || deps_.webhook->healthy(), options_.dry_run);
  in.workload = workload_facts(w, facts().pods(*w.view));
  PlanRunner run;
  run.evictor = deps_.evictor.get();
  run.pod_annotations = deps_.pod_annotations.get();
  run.owner_annotations = deps_.owner_annotations.get();
  run.events = deps_.events;
  run.log = &log_;
  run.reason = act::EvictionReason::kRollback;
  run.evicted_event = "PolicyEvaluationEvictRollback";
  run.target_text = "its original GPU form (no policy manages the workload any more)";
  const da::Plan plan = decide_and_carry_out(run, in, memory_, key, w);
  decide::Summary decided;
  decided.strategy = strategy;
  log_summary(log_, summaries_, "rollback", w, decided, plan, in);  // OBS-4
  requeue = plan.requeue_after;
  return plan.result;
}

}  // namespace kubex::controllers
