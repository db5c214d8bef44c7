#include "controllers/actuation.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "act/evictor.h"
#include "act/owner_annotations.h"
#include "act/pod_annotations.h"
#include "api/keys.h"
#include "controllers/webhook_health_signal.h"
#include "decide/admission/pod_mutation.h"
#include "decide/admission/summary.h"
#include "decide/policy/catalog.h"
#include "decide/policy/match.h"
#include "decide/policy/scope.h"
#include "kube/runtime/event_recorder.h"
#include "observe/catalog_view.h"
#include "observe/workloads.h"

namespace kubex::controllers {

namespace {

namespace da = decide::actuation;
using nlohmann::json;

kube::ControllerOptions controller_options(const ActuationOptions& o) {
  kube::ControllerOptions c;
  c.metrics = o.metrics;
  c.clock = o.clock;
  return c;
}

const common::Clock& clock_of(const ActuationOptions& o) {
  return o.clock ? *o.clock : common::RealClock::instance();
}

// ACT-2 judges pause-until itself (pause-active): the desired value is what admission gives once no pause holds.
void drop_pause(std::map<std::string, std::string>& m) { m.erase(api::keys::kPauseUntil); }

const api::Strategy* strategy_named(const decide::policy::Catalog& c, const std::string& ref) {
  for (const auto& s : c.strategies()) {
    if (s.strategy && decide::policy::ref_of(*s.strategy) == ref) return s.strategy.get();
  }
  return nullptr;
}

int status_of(const act::EvictionResult& r) {
  using O = act::EvictionResult::Outcome;
  switch (r.outcome) {
    case O::kEvicted: return 201;
    case O::kGone: return 404;
    case O::kPdbBlocked: return 429;
    case O::kDryRun: return 0;
    case O::kError: return r.http_code > 0 ? r.http_code : 0;
  }
  return 0;
}

kube::ObjectReference pod_ref(const std::string& ns, const da::PodFacts& p) {
  return {"v1", "Pod", ns, p.name, p.uid, "", ""};
}

std::string gpu_text(const da::Allocation& a) {
  std::string out;
  for (const auto& g : a) {
    if (!out.empty()) out += " ";
    out += g.container + "=" + decide::format_gpu(g.value) + (g.fraction ? " (fraction)" : " (whole)");
  }
  return out.empty() ? "none" : out;
}

}  // namespace

ActuationController::ActuationController(ActuationDeps deps, ActuationOptions options)
    : deps_(std::move(deps)),
      options_(options),
      controller_(
          kName, [this](const std::string& key) { return reconcile(key); }, controller_options(options_)) {}

ActuationController::~ActuationController() {
  stop();
}

void ActuationController::start() {
  controller_.start();
  controller_.enqueue(kAll);
}

void ActuationController::stop() {
  controller_.stop();
}

void ActuationController::pod_changed(const api::PodView& pod) {
  std::string key = deps_.facts->workload_key_of(pod);
  if (!key.empty()) controller_.enqueue(key);
}

kube::ReconcileOutcome ActuationController::reconcile(const std::string& key) {
  if (key != kAll) return reconcile_workload(key);
  for (const auto& w : deps_.facts->workloads()) controller_.enqueue(observe::workload_key(*w));
  return kube::ReconcileResult{false, std::chrono::minutes(5)};
}

kube::ReconcileOutcome ActuationController::reconcile_workload(const std::string& key) {
  auto w = deps_.facts->find(key);
  if (!w) {
    std::lock_guard lk(mu_);
    memory_.erase(key);
    return kube::ReconcileResult{};
  }
  const common::TimePoint now = clock_of(options_).now();
  auto catalog = deps_.catalog->catalog();
  const api::GlobalConfigSpec& global = catalog->global();
  decide::policy::Workload workload = observe::decision_workload(*w);
  decide::policy::Match match = decide::policy::match_policies(
      workload, catalog->candidates(), catalog->evaluation(), global.protected_namespace_patterns);
  if (!match.managed || match.on_hold) {  // RBK-4 hold; leaving management is RBK-2's (not here yet)
    std::lock_guard lk(mu_);
    memory_.erase(key);
    return kube::ReconcileResult{};
  }
  auto tmpl = deps_.facts->pod_template(*w);
  if (!tmpl) return kube::ReconcileResult{false, std::chrono::minutes(1)};

  // ACT-1: what a new pod would get now.
  const std::string ns = w->ns.str();
  std::map<std::string, std::string> ns_annotations = deps_.facts->namespace_annotations(ns);
  decide::policy::Workload unpaused = workload;
  drop_pause(unpaused.annotations);
  drop_pause(unpaused.template_annotations);
  std::map<std::string, std::string> unpaused_ns = ns_annotations;
  drop_pause(unpaused_ns);
  json pod = *tmpl;
  if (pod.contains("metadata") && pod["metadata"].contains("annotations") &&
      pod["metadata"]["annotations"].is_object()) {
    pod["metadata"]["annotations"].erase(api::keys::kPauseUntil);
  }
  // ACT-2 judges automationEnabled itself too (automation-disabled): the desired value is computed as if on.
  api::GlobalConfigSpec enabled = global;
  enabled.automation_enabled = true;
  decide::AdmissionInput ai;
  ai.pod = &pod;
  ai.phase = "actuation";
  ai.now = now;
  ai.global = &enabled;
  ai.evaluation = &catalog->evaluation();
  ai.ns = ns;
  ai.namespace_annotations = unpaused_ns;
  ai.workload = &unpaused;
  ai.candidates = catalog->candidates();
  ai.dry_run = options_.dry_run;
  decide::AdmissionDecision d = decide::decide_admission(ai);

  da::Input in;
  in.now = now;
  if (d.result != decide::AdmissionResult::kSkipped) in.desired = d.allocation;
  const api::Strategy* strategy = strategy_named(*catalog, d.summary.strategy);
  in.settings = da::settings_of(strategy ? strategy->spec : api::StrategySpec{});
  in.settings.automation_enabled = global.automation_enabled;
  in.settings.protected_namespace = decide::policy::namespace_protected(ns, global.protected_namespace_patterns);
  in.settings.webhook_healthy = !deps_.webhook || deps_.webhook->healthy();
  in.settings.dry_run = options_.dry_run;
  in.workload.kind = w->kind.str();
  in.workload.name = w->name;
  in.workload.replicas = w->replicas;
  in.workload.max_unavailable = w->max_unavailable;
  in.workload.annotations = workload.annotations;
  in.workload.template_annotations = workload.template_annotations;
  in.workload.namespace_annotations = ns_annotations;
  in.workload.pods = deps_.facts->pods(*w);
  std::optional<common::TimePoint> retry_at;
  {
    std::lock_guard lk(mu_);
    const Memory& m = memory_[key];
    in.guard = m.guard;
    in.last_eviction = m.last_eviction;
    in.pdb_blocked = m.pdb_blocked;
    retry_at = m.retry_at;
  }

  da::Plan plan = da::decide(in);
  if (retry_at && now < *retry_at && !plan.evict.empty()) {  // ACT-5: retry after resizeRetryInterval
    for (da::PodPlan& pp : plan.pods) {
      if (std::find(plan.evict.begin(), plan.evict.end(), pp.name) != plan.evict.end()) {
        pp.result = da::Result::kBlockedRetrying;
      }
    }
    plan.evict.clear();
    plan.result = da::Result::kBlockedRetrying;
    plan.requeue_after = std::min<common::Duration>(plan.requeue_after, *retry_at - now);
  }
  std::optional<common::TimePoint> next_retry;
  std::optional<common::TimePoint> evicted_at;
  auto facts_of = [&](const std::string& name) -> const da::PodFacts* {
    for (const auto& p : in.workload.pods) {
      if (p.name == name) return &p;
    }
    return nullptr;
  };
  const std::string desired_text = in.desired ? gpu_text(*in.desired) : "none";
  for (const std::string& name : std::vector<std::string>(plan.evict)) {
    const da::PodFacts* p = facts_of(name);
    if (!p) continue;
    act::EvictionResult r = deps_.evictor->evict({ns, p->name, p->uid}, act::EvictionReason::kResize);  // ACT-4
    da::EvictionOutcome outcome =
        da::on_eviction_result(status_of(r), in.settings.retry_pdb, in.settings.resize_retry_interval);
    da::apply_outcome(plan, in, name, outcome);
    if (r.succeeded()) evicted_at = now;
    if (outcome.retry_after) next_retry = now + *outcome.retry_after;
    if (deps_.events && outcome.event_evicted) {
      deps_.events->event(pod_ref(ns, *p), kube::EventType::kNormal, "PolicyEvaluationEvictResize",
                          "evicted so that its replacement gets the GPU allocation " + desired_text + " (was " +
                              gpu_text(p->live) + ")");
    }
    if (deps_.events && outcome.event_blocked) {
      deps_.events->event(pod_ref(ns, *p), kube::EventType::kWarning, "EvictionBlocked",
                          "eviction refused by a PodDisruptionBudget: " +
                              (r.cause.empty() ? r.message : r.message + " " + r.cause));
    }
  }
  for (const std::string& name : plan.would_evict) {  // ACT-8
    const da::PodFacts* p = facts_of(name);
    if (p && deps_.events) {
      deps_.events->event(pod_ref(ns, *p), kube::EventType::kNormal, "WouldEvict",
                          "dry run: would evict so that its replacement gets the GPU allocation " + desired_text +
                              " (now " + gpu_text(p->live) + ")");
    }
  }
  if (plan.emit_replacement_not_mutated && deps_.events) {  // ACT-7
    deps_.events->event({act::owner_api_version(w->kind.str()), w->kind.str(), ns, w->name, w->uid, "", ""},
                        kube::EventType::kWarning, "ReplacementNotMutated",
                        "a pod created after the last eviction does not have the desired GPU allocation " +
                            desired_text + " (the admission webhook may have failed open); evictions back off");
  }
  {
    std::lock_guard lk(mu_);
    Memory& m = memory_[key];
    m.guard = plan.guard;
    m.pdb_blocked = plan.pdb_blocked;
    if (evicted_at) m.last_eviction = evicted_at;
    if (next_retry) {
      m.retry_at = next_retry;
    } else if (evicted_at) {
      m.retry_at.reset();
    }
  }
  for (const da::PodPlan& pp : plan.pods) {  // OBS-3: only when a pod's set of reasons changes
    if (!pp.write_constraints) continue;
    std::optional<std::string> v;
    if (!pp.write_constraints->empty()) v = *pp.write_constraints;
    auto r = deps_.pod_annotations->write(ns, pp.name, {{api::keys::kAutomationConstraints, v}});
    if (!r) log_.warn("cannot update the pod's constraints", {{"namespace", ns}, {"pod", pp.name},
                                                             {"error", r.error().str()}});
  }

  // OBS-4: one line per reconcile.
  decide::Summary s;
  s.phase = "actuation";
  s.ns = ns;
  s.pod = plan.pod;
  s.owner = workload.ref();
  s.policies = d.summary.policies;
  s.strategy = d.summary.strategy;
  s.mode = d.summary.mode;
  s.result_text = da::result_name(plan.result);
  for (const auto& c : plan.failed) s.failed_checks.push_back(c.name);
  for (const da::PodPlan& pp : plan.pods) {
    if (pp.name != plan.pod) continue;
    s.applied_filters = pp.applied_filters;
    const da::PodFacts* p = facts_of(pp.name);
    if (p && in.desired && pp.candidate) {
      for (const auto& g : *in.desired) {
        std::string from = decide::kUnspecified;
        for (const auto& l : p->live) {
          if (l.container == g.container) from = decide::format_gpu(l.value);
        }
        decide::Change ch;
        ch.container = g.container;
        ch.from = from;
        ch.to = decide::format_gpu(g.value);
        ch.desired = ch.to;
        s.changes.push_back(std::move(ch));
      }
    }
  }
  s.dry_run = options_.dry_run;
  s.text = decide::summary_text(s.changes);
  if (log_.enabled(common::LogLevel::kInfo)) {
    log_.log_members(common::LogLevel::kInfo, "rightsizing summary", decide::summary_members(s));
  }
  return kube::ReconcileResult{false, plan.requeue_after};
}

}  // namespace kubex::controllers
