#include "controllers/workload_evictions.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "act/owner_annotations.h"
#include "act/pod_annotations.h"
#include "api/keys.h"
#include "api/views.h"
#include "controllers/resize_harm.h"
#include "controllers/summary_log.h"
#include "decide/actuation/actuation_state.h"
#include "decide/admission/pod_mutation.h"
#include "decide/admission/summary.h"
#include "decide/packing/gpu_device.h"
#include "decide/policy/catalog.h"
#include "decide/policy/scope.h"
#include "kube/runtime/event_recorder.h"
#include "observe/actuation.h"
#include "observe/catalog_view.h"
#include "observe/workloads.h"

namespace kubex::controllers {

namespace {

namespace da = decide::actuation;
using nlohmann::json;

const api::Strategy* strategy_named(const decide::policy::Catalog& c, const std::string& ref) {
  if (ref.empty()) return nullptr;
  for (const auto& s : c.strategies()) {
    if (s.strategy && decide::policy::ref_of(*s.strategy) == ref) return s.strategy.get();
  }
  return nullptr;
}

// act/'s outcome in decide's terms (ACT-4, ACT-5).
da::EvictionAnswer answer_of(const act::EvictionResult& r) {
  using O = act::EvictionResult::Outcome;
  switch (r.outcome) {
    case O::kEvicted: return da::EvictionAnswer::kAccepted;
    case O::kGone: return da::EvictionAnswer::kGone;
    case O::kPdbBlocked: return da::EvictionAnswer::kRefusedByBudget;
    case O::kDryRun:
    case O::kError: break;
  }
  return da::EvictionAnswer::kFailed;
}

std::optional<std::string> actuation_state_on(const api::WorkloadView& v) {
  if (const common::IStr* s = v.annotation(api::keys::kActuationState)) return s->str();
  return std::nullopt;
}

// ACT-9: the memory of a workload the engine has not seen since it started, from its owner.
EvictionMemory seeded_memory(const da::Input& in, const WorkloadContext& w) {
  EvictionMemory m;
  m.state_on_owner = actuation_state_on(*w.view);
  std::vector<std::string> uids;
  for (const da::PodFacts& p : in.workload.pods) uids.push_back(p.uid);
  const da::ActuationState st = da::read_actuation_state(m.state_on_owner, uids);
  m.pdb_blocked = da::pdb_keys_of(st);
  m.guard = st.guard;
  m.harm_floors = st.harm_floors;
  return m;
}

// ACT-9: keeps the ACT-5 refusals and the ACT-7 back-off on the owner when they changed. False when the write
// failed or met a newer object (the reconcile comes back soon).
bool keep_actuation_state(const PlanRunner& run, const da::Input& in, EvictionMemory& memory,
                          const WorkloadContext& w) {
  if (!run.owner_annotations || in.settings.dry_run) return true;  // ACT-8: a dry run writes nothing
  const da::ActuationState next = da::actuation_state_of(memory.pdb_blocked, memory.guard, memory.harm_floors);
  const std::optional<std::string> on_owner = actuation_state_on(*w.view);
  auto write = da::actuation_state_write(on_owner, next);
  if (!write) {
    memory.state_on_owner = on_owner;
    return true;
  }
  if (*write == memory.state_on_owner) return true;  // written already; the cache has not caught up yet
  std::map<std::string, std::string> set;
  std::vector<std::string> remove;
  if (*write) {
    set[api::keys::kActuationState] = **write;
  } else {
    remove.push_back(api::keys::kActuationState);
  }
  auto r = run.owner_annotations->write(*w.view, set, remove, "actuation state");
  if (!r) {
    run.log->warn("cannot update the workload's actuation-state",
                  {{"namespace", w.ns}, {"owner", w.workload.ref()}, {"error", r.error()}});
    return false;
  }
  if (*r == act::OwnerWrite::kStale) return false;
  if (*r != act::OwnerWrite::kGone) memory.state_on_owner = *write;
  return true;
}

kube::ObjectReference pod_ref(const std::string& ns, const da::PodFacts& p) {
  return {"v1", "Pod", ns, p.name, p.uid, "", ""};
}

const da::PodFacts* facts_of(const da::Input& in, const std::string& name) {
  for (const auto& p : in.workload.pods) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

}  // namespace

std::optional<EvictionMemory> EvictionMemories::find(const std::string& key) {
  std::lock_guard lk(mu_);
  auto it = memory_.find(key);
  if (it == memory_.end()) return std::nullopt;
  return it->second;
}

EvictionMemory EvictionMemories::get(const std::string& key) {
  std::lock_guard lk(mu_);
  auto it = memory_.find(key);
  return it == memory_.end() ? EvictionMemory{} : it->second;
}

void EvictionMemories::put(const std::string& key, EvictionMemory m) {
  std::lock_guard lk(mu_);
  memory_[key] = std::move(m);
}

void EvictionMemories::erase(const std::string& key) {
  std::lock_guard lk(mu_);
  memory_.erase(key);
}

std::optional<WorkloadContext> read_workload(const observe::ActuationFacts& facts,
                                             const observe::CatalogView& catalog, const std::string& key) {
  WorkloadContext w;
  w.view = facts.find(key);
  if (!w.view) return std::nullopt;
  w.catalog = catalog.catalog();
  w.ns = w.view->ns.str();
  w.workload = observe::decision_workload(*w.view);
  w.match = decide::policy::match_policies(w.workload, w.catalog->candidates(), w.catalog->evaluation(),
                                           w.catalog->global().protected_namespace_patterns);
  w.namespace_annotations = facts.namespace_annotations(w.ns);
  return w;
}

decide::AdmissionDecision desired_decision(const WorkloadContext& w, const json& pod_template, common::TimePoint now,
                                           bool dry_run) {
  decide::AdmissionInput ai;
  ai.pod = &pod_template;
  ai.phase = "actuation";
  ai.now = now;
  ai.global = &w.catalog->global();
  ai.evaluation = &w.catalog->evaluation();
  ai.ns = w.ns;
  ai.namespace_annotations = w.namespace_annotations;
  ai.workload = &w.workload;
  ai.candidates = w.catalog->candidates();
  ai.dry_run = dry_run;
  return da::desired_admission(ai);  // ACT-1, with pause-until and automationEnabled lifted
}

da::Settings settings_for(const WorkloadContext& w, const std::string& strategy_ref, bool webhook_healthy,
                          bool dry_run) {
  const api::Strategy* strategy = strategy_named(*w.catalog, strategy_ref);
  da::Settings s = da::settings_of(strategy ? strategy->spec : api::StrategySpec{});
  const api::GlobalConfigSpec& global = w.catalog->global();
  s.automation_enabled = global.automation_enabled;
  s.protected_namespace = decide::policy::namespace_protected(w.ns, global.protected_namespace_patterns);
  s.webhook_healthy = webhook_healthy;
  s.dry_run = dry_run;
  return s;
}

da::WorkloadFacts workload_facts(const WorkloadContext& w, std::vector<da::PodFacts> pods) {
  da::WorkloadFacts f;
  f.kind = w.view->kind.str();
  f.ns = w.ns;
  f.name = w.view->name;
  f.replicas = w.view->replicas;
  f.max_unavailable = w.view->max_unavailable;
  f.annotations = w.workload.annotations;
  f.template_annotations = w.workload.template_annotations;
  f.namespace_annotations = w.namespace_annotations;
  f.pods = std::move(pods);
  return f;
}

da::Input resize_input(const observe::ActuationFacts& facts, const WorkloadContext& w,
                       const decide::AdmissionDecision& decided, bool webhook_healthy, bool dry_run,
                       common::TimePoint now) {
  da::Input in;
  in.now = now;
  if (decided.result != decide::AdmissionResult::kSkipped) in.desired = decided.allocation;
  in.settings = settings_for(w, decided.summary.strategy, webhook_healthy, dry_run);
  in.workload = workload_facts(w, facts.pods(*w.view));
  if (da::needs_pool(in)) {  // ACT-2a: an upsize evicts only when its replacement fits now
    in.pool = facts.gpu_pool(w.catalog->global().kai_reservation_namespace);
    in.reserve = decide::packing::memory_reserve(w.catalog->global());
  }
  return in;
}

std::string allocation_text(const da::Allocation& a) {
  std::string out;
  for (const auto& g : a) {
    if (!out.empty()) out += " ";
    out += g.container + "=" + decide::format_gpu(g.value) + (g.fraction ? " (fraction)" : " (whole)");
  }
  return out.empty() ? "none" : out;
}

void carry_out(const PlanRunner& run, da::Plan& plan, const da::Input& in, EvictionMemory& memory,
               const WorkloadContext& w) {
  const common::TimePoint now = in.now;
  const std::string& ns = w.ns;
  std::optional<common::TimePoint> next_retry;
  std::optional<common::TimePoint> evicted_at;
  for (const std::string& name : std::vector<std::string>(plan.evict)) {
    const da::PodFacts* p = facts_of(in, name);
    if (!p) continue;
    act::EvictionResult r = run.evictor->evict({ns, p->name, p->uid}, run.reason);  // ACT-4
    da::EvictionOutcome outcome =
        da::on_eviction_result(answer_of(r), in.settings.retry_pdb, in.settings.resize_retry_interval);
    da::apply_outcome(plan, in, name, outcome);
    if (r.succeeded()) {
      evicted_at = now;
      memory.predecessor_crashing = da::crashing(*p);  // ACT-10: its replacement's crashes are not ours then
    }
    // ACT-3: expected until the cache shows the pod terminating or gone.
    if (r.outcome == act::EvictionResult::Outcome::kEvicted) plan.pending_evictions[p->uid] = now;
    if (outcome.retry_after) next_retry = now + *outcome.retry_after;
    if (run.events && outcome.event_evicted) {
      run.events->event(pod_ref(ns, *p), kube::EventType::kNormal, run.evicted_event,
                        "evicted so that its replacement gets " + run.target_text + " (was " +
                            allocation_text(p->live) + ")");
    }
    if (run.events && outcome.event_blocked) {
      run.events->event(pod_ref(ns, *p), kube::EventType::kWarning, "EvictionBlocked",
                        "eviction refused by a PodDisruptionBudget: " +
                            (r.cause.empty() ? r.message : r.message + " " + r.cause));
    }
  }
  for (const std::string& name : plan.would_evict) {  // ACT-8
    const da::PodFacts* p = facts_of(in, name);
    if (p && run.events) {
      run.events->event(pod_ref(ns, *p), kube::EventType::kNormal, "WouldEvict",
                        "dry run: would evict so that its replacement gets " + run.target_text + " (now " +
                            allocation_text(p->live) + ")");
    }
  }
  if (plan.emit_replacement_not_mutated && run.events) {  // ACT-7
    const api::WorkloadView& v = *w.view;
    run.events->event({act::owner_api_version(v.kind.str()), v.kind.str(), ns, v.name, v.uid, "", ""},
                      kube::EventType::kWarning, "ReplacementNotMutated",
                      "a pod created after the last eviction does not have " + run.target_text +
                          " (the admission webhook may have failed open); evictions back off");
  }
  memory.guard = plan.guard;
  memory.sent_evictions = plan.pending_evictions;
  memory.pdb_blocked = plan.pdb_blocked;
  if (evicted_at) memory.last_eviction = evicted_at;
  if (next_retry) {
    memory.retry_at = next_retry;
  } else if (evicted_at) {
    memory.retry_at.reset();
  }
  for (const da::PodPlan& pp : plan.pods) {  // OBS-3: only when a pod's set of reasons changes
    if (!pp.write_constraints) continue;
    std::optional<std::string> v;
    if (!pp.write_constraints->empty()) v = *pp.write_constraints;
    auto r = run.pod_annotations->write(ns, pp.name, {{api::keys::kAutomationConstraints, v}});
    if (!r) {
      run.log->warn("cannot update the pod's constraints",
                    {{"namespace", ns}, {"pod", pp.name}, {"error", r.error().str()}});
    }
  }
}

da::Plan decide_and_carry_out(const PlanRunner& run, da::Input& in, EvictionMemories& memories,
                              const std::string& key, const WorkloadContext& w) {
  std::optional<EvictionMemory> cached = memories.find(key);
  EvictionMemory memory = cached ? std::move(*cached) : seeded_memory(in, w);
  if (in.purpose == da::Purpose::kResize) guard_against_harm(run, in, memory, w);
  if (in.purpose == da::Purpose::kResize) in.guard = memory.guard;
  in.last_eviction = memory.last_eviction;
  in.pdb_blocked = memory.pdb_blocked;
  in.sent_evictions = memory.sent_evictions;
  in.retry_at = memory.retry_at;
  da::Plan plan = da::decide(in);
  carry_out(run, plan, in, memory, w);
  if (!keep_actuation_state(run, in, memory, w) || in.harm_found_now) {  // ACT-10: back once the floor shows
    plan.requeue_after = std::min<common::Duration>(plan.requeue_after, std::chrono::seconds(5));
  }
  memories.put(key, std::move(memory));
  return plan;
}

void log_summary(const common::Logger& log, SummaryLog& summaries, const std::string& phase, const WorkloadContext& w,
                 const decide::Summary& decided, const da::Plan& plan, const da::Input& in) {
  if (!log.enabled(common::LogLevel::kInfo)) return;
  decide::Summary s;
  s.phase = phase;
  s.ns = w.ns;
  s.pod = plan.pod;
  s.owner = w.workload.ref();
  s.policies = decided.policies;
  s.strategy = decided.strategy;
  s.mode = decided.mode;
  s.result_text = da::result_name(plan.result);
  for (const auto& c : plan.failed) s.failed_checks.push_back(c.name);
  for (const da::PodPlan& pp : plan.pods) {
    if (pp.name != plan.pod) continue;
    s.applied_filters = pp.applied_filters;
    const da::PodFacts* p = facts_of(in, pp.name);
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
  s.dry_run = in.settings.dry_run;
  s.text = in.purpose == da::Purpose::kRollback ? "Rolling back to the original GPU form"
                                                : decide::summary_text(s.changes);
  for (const da::PodPlan& pp : plan.pods) {  // ACT-2a: what keeps the upsize waiting
    if (pp.name == plan.pod && !pp.fit_reason.empty()) s.text = "Waiting for room: " + pp.fit_reason;
  }
  summaries.write(log, s);
}

}  // namespace kubex::controllers
