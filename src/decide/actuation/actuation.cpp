// decide(): ACT-1…ACT-8 composed for one workload, and the eviction outcome folded back into the plan.
#include "decide/actuation/actuation.h"

#include <algorithm>
#include <set>

#include "api/keys.h"
#include "decide/actuation/steps.h"
#include "decide/admission/constraints.h"
#include "decide/packing/replacement.h"

namespace kubex::decide::actuation {

const char* result_name(Result r) {
  switch (r) {
    case Result::kEvicted:
      return "EVICTED";
    case Result::kBlockedRetrying:
      return "BLOCKED_RETRYING";
    case Result::kBlocked:
      return "BLOCKED";
    case Result::kInSync:
      return "IN_SYNC";
    case Result::kWouldEvict:
      return "WOULD_EVICT";
    case Result::kRolledBack:
      return "ROLLED_BACK";
  }
  return "IN_SYNC";
}

namespace {

constexpr common::Duration kMinRequeue = std::chrono::seconds(1);
constexpr common::Duration kMaxRequeue = std::chrono::minutes(1);
constexpr const char* kRollbackKey = "rollback";

// Checks that hold until something outside the engine changes (BLOCKED); the others are waits the engine
// retries by itself (BLOCKED_RETRYING).
bool permanent(const Check& c) {
  static const std::set<std::string, std::less<>> kPermanent = {
      check::kAutomationDisabled,  check::kProtectedNamespace, check::kPauseActive,
      check::kPodEvictionDisabled, check::kJobPodNotEvicted,   check::kPdbBlocked};
  return kPermanent.count(c.name) > 0;
}

Result blocked_result(const std::vector<Check>& failed) {
  return std::any_of(failed.begin(), failed.end(), permanent) ? Result::kBlocked : Result::kBlockedRetrying;
}

// The summary ranks: something happened, then something will, then nothing can, then nothing needs to.
int rank(Result r) {
  switch (r) {
    case Result::kEvicted:
      return 0;
    case Result::kWouldEvict:
      return 1;
    case Result::kBlockedRetrying:
      return 2;
    case Result::kBlocked:
      return 3;
    case Result::kRolledBack:
      return 4;
    case Result::kInSync:
      return 5;
  }
  return 5;
}

void summarize(Plan& plan) {
  plan.result = Result::kInSync;
  plan.pod.clear();
  plan.failed.clear();
  // A pod whose eviction was attempted speaks for the workload (its outcome, e.g. a PDB refusal, is the
  // news); otherwise the candidate with the best-ranked result, the first in eviction order on ties.
  const PodPlan* best = nullptr;
  for (const PodPlan& p : plan.pods) {
    if (!p.candidate) continue;
    if (!best || p.evict > best->evict || (p.evict == best->evict && rank(p.result) < rank(best->result)))
      best = &p;
  }
  if (!best) return;
  plan.result = best->result;
  plan.pod = best->name;
  plan.failed = best->failed;
}

common::Duration clamp_requeue(common::Duration d) {
  return std::clamp(d, kMinRequeue, kMaxRequeue);
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

const std::string* annotation(const PodFacts& p, const char* key) {
  auto it = p.annotations.find(key);
  return it == p.annotations.end() ? nullptr : &it->second;
}

bool has_reason(const PodFacts& p, const char* reason) {
  const std::string* current = annotation(p, api::keys::kAutomationConstraints);
  return current && contains(constraint_reasons(*current), reason);
}

std::string current_constraints(const PodFacts& p) {
  const std::string* current = annotation(p, api::keys::kAutomationConstraints);
  return current ? *current : std::string();
}

// The guard's notion of "the desired value": the workload's, else the per-pod ones (Model, StrimziPodSet).
std::string guard_key(const Input& in) {
  if (in.desired) return desired_key(*in.desired);
  std::set<std::string> keys;
  for (const PodFacts& p : in.workload.pods) {
    if (p.desired) keys.insert(desired_key(*p.desired));
  }
  std::string out;
  for (const std::string& k : keys) out += (out.empty() ? "" : ";") + k;
  return out;
}

}  // namespace

Plan decide(const Input& in) {
  Plan plan;
  // ACT-3 expectations: a pod whose eviction was sent but that the cache does not show terminating yet is in flight.
  plan.pending_evictions = pending_evictions(in.sent_evictions, in.workload.pods, in.now);
  WorkloadFacts judged;
  if (!plan.pending_evictions.empty()) {
    judged = in.workload;
    judged.pods = with_pending_evictions(std::move(judged.pods), plan.pending_evictions);
  }
  const WorkloadFacts& w = plan.pending_evictions.empty() ? in.workload : judged;
  const Settings& s = in.settings;
  const bool rollback = in.purpose == Purpose::kRollback;
  const bool writes = s.automation_enabled && !s.protected_namespace && !s.dry_run;  // OBS-3, ACT-8
  plan.budget = budget(s.respect_max_unavailable, w.max_unavailable, w.replicas);
  plan.in_flight = in_flight(w.pods, w.replicas, Settling{in.last_eviction, s.min_ready_duration, in.now});
  plan.guard = in.guard;

  // ACT-1 (RBK-2 in a rollback)
  std::vector<bool> candidate(w.pods.size(), false);
  if (rollback) {
    for (std::size_t i = 0; i < w.pods.size(); ++i) {
      const PodFacts& p = w.pods[i];
      candidate[i] = p.controller_owned && !p.finished() && p.has_rightsizing_info();
    }
  } else {
    for (std::size_t i : candidates(w.pods, in.desired)) candidate[i] = true;
  }

  // ACT-7
  GuardOutcome guard;
  if (!rollback) {
    std::vector<GuardPod> seen;
    for (std::size_t i = 0; i < w.pods.size(); ++i) {
      const PodFacts& p = w.pods[i];
      // ACT-10: a harmed pod got the value that was desired then; it lacks the floor rightly, not for a failed webhook.
      const bool lacks = candidate[i] && !in.harmed.count(p.name);
      if (p.controller_owned && !p.finished()) seen.push_back({p.name, p.created, lacks});
    }
    guard = loop_guard(in.guard, guard_key(in), in.last_eviction, seen, s.resize_retry_interval, in.now);
    plan.guard = guard.state;
    plan.emit_replacement_not_mutated = guard.emit;
  }

  common::Duration requeue = kMaxRequeue;
  if (guard.backing_off) requeue = std::min(requeue, *guard.state.until - in.now);
  for (const PodFacts& p : w.pods) {  // ACT-3b: look again when a Ready replacement settles
    if (auto at = settles_at(p, in.last_eviction, s.min_ready_duration, in.now)) requeue = std::min(requeue, *at - in.now);
  }
  int chosen = 0;
  // ACT-2a: the snapshot the upsizes are fitted into; a replacement chosen here takes its room in it.
  std::optional<packing::Pool> pool = rollback ? std::nullopt : in.pool;
  for (std::size_t i : order(w.pods)) {
    const PodFacts& p = w.pods[i];
    if (!p.controller_owned || p.finished()) continue;
    PodPlan pp;
    pp.name = p.name;
    pp.candidate = candidate[i];
    std::set<std::string> mine;
    if (pp.candidate) {
      const std::optional<Allocation>& desired = desired_for(p, in.desired);
      pp.pdb_key = pdb_key(p.uid, rollback ? kRollbackKey : desired_key(*desired));
      pp.failed = preconditions(p, w, s, in.now);
      if (in.harmed.count(p.name)) {  // ACT-10 (3): a harmed pod serves nothing; its readiness does not matter
        std::erase_if(pp.failed, [](const Check& c) {
          return c.name == check::kMinReadyDurationNotMet || c.name == check::kOwnerPodsNotReady;
        });
      }
      if (in.harm_found_now) pp.failed.push_back({check::kResizeHarmedWorkload, ""});  // ACT-10 (1)
      if (in.pdb_blocked.count(pp.pdb_key)) {  // ACT-5: no retry until the value or the pod changes
        pp.failed.push_back({check::kPdbBlocked, reason::kPdbBlocked});
        plan.pdb_blocked.insert(pp.pdb_key);
      }
      const bool unmutated = contains(guard.unmutated, p.name);
      if (guard.backing_off) {
        pp.failed.push_back({check::kReplacementNotMutated, unmutated ? reason::kReplacementNotMutated : ""});
      } else if (unmutated) {
        mine.insert(reason::kReplacementNotMutated);
      }
      if (!rollback) {  // ACT-6
        const std::string note = in_place_note(s.in_place_resize, *desired, p.live);
        if (!note.empty()) {
          pp.applied_filters.push_back(note);
          mine.insert(note);
        }
      }
      // ACT-3; a harmed pod that is not available already counts as in flight: evicting it takes nothing away.
      const int own = in.harmed.count(p.name) && (!p.ready || p.terminating ||
                                                  unsettled_replacement(p, in.last_eviction, s.min_ready_duration, in.now))
                          ? 1
                          : 0;
      if (pp.failed.empty() && !within_budget(plan.in_flight - own + chosen, plan.budget)) {
        pp.failed.push_back({check::kMaxUnavailableExceeded, ""});  // ACT-3
      }
      if (pp.failed.empty() && pool && upsize(*desired, p.live)) {  // ACT-2a
        const ReplacementSize size = replacement_size(*desired);
        const packing::ReplacementFit fit =
            packing::replacement_fit(*pool, w.ns, p.name, size.fraction, size.whole, in.reserve);
        if (fit.fits) {
          pp.fit_node = fit.node;
          for (packing::PoolPod& pod : pool->pods) {  // the replacement holds its room for the next pod
            if (pod.ns != w.ns || pod.name != p.name) continue;
            pod.node = fit.node;
            pod.fraction = size.fraction;
            pod.whole_gpus = size.fraction > 0 ? 0 : size.whole;
            pod.gpu_group.clear();
          }
        } else {
          pp.fit_reason = fit.reason;
          pp.failed.push_back({check::kReplacementDoesNotFit, reason::kReplacementDoesNotFit});
        }
      }
      for (const Check& c : pp.failed) {
        if (!c.constraint.empty()) mine.insert(c.constraint);
      }
      if (pp.failed.empty()) {
        ++chosen;
        if (s.dry_run) {  // ACT-8
          pp.result = Result::kWouldEvict;
          plan.would_evict.push_back(p.name);
        } else {
          pp.result = Result::kEvicted;
          pp.evict = true;
          plan.evict.push_back(p.name);
        }
      } else {
        pp.result = blocked_result(pp.failed);
        if (p.ready && !p.terminating && p.ready_since + s.min_ready_duration > in.now) {
          requeue = std::min(requeue, p.ready_since + s.min_ready_duration - in.now);
        }
      }
    } else if (!rollback && paused(p, w, s, in.now) && has_reason(p, reason::kPauseActive)) {
      mine.insert(reason::kPauseActive);  // admission's pause-active stays while the pause lasts
    }
    pp.constraints.assign(mine.begin(), mine.end());
    if (rollback && !pp.candidate) {
      // RBK-2, OBS-3: a pod kubex left as it was is in its original form; what was recorded on it while the workload
      // was managed (no-gpu-recommendation, pause-active, …) is stale, so the annotation goes.
      if (writes && annotation(p, api::keys::kAutomationConstraints)) pp.write_constraints = std::string();
    } else if (writes) {
      pp.write_constraints = updated_constraints(current_constraints(p), pp.constraints);
    }
    plan.pods.push_back(std::move(pp));
  }
  if (in.retry_at && in.now < *in.retry_at && !plan.evict.empty()) {  // ACT-5: retry after resizeRetryInterval
    for (PodPlan& pp : plan.pods) {
      if (!pp.evict) continue;
      pp.evict = false;
      pp.result = Result::kBlockedRetrying;
    }
    plan.evict.clear();
    requeue = std::min(requeue, *in.retry_at - in.now);
  }
  plan.requeue_after = clamp_requeue(requeue);
  summarize(plan);
  return plan;
}

bool needs_pool(const Input& in) {
  if (in.purpose != Purpose::kResize) return false;
  for (const PodFacts& p : in.workload.pods) {
    if (!p.controller_owned || p.finished()) continue;
    const std::optional<Allocation>& desired = desired_for(p, in.desired);
    if (desired && !in_sync(*desired, p.live) && upsize(*desired, p.live)) return true;
  }
  return false;
}

void apply_outcome(Plan& plan, const Input& in, std::string_view pod, const EvictionOutcome& o) {
  auto it = std::find_if(plan.pods.begin(), plan.pods.end(), [&](const PodPlan& p) { return p.name == pod; });
  if (it == plan.pods.end()) return;
  PodPlan& pp = *it;
  pp.result = o.result;
  if (o.result != Result::kEvicted) {
    const bool pdb = std::string_view(o.metric) == "pdb_blocked";
    pp.failed.push_back({pdb ? check::kPdbBlocked : check::kEvictionFailed, o.constraint});
  }
  if (o.remember) plan.pdb_blocked.insert(pp.pdb_key);
  if (o.retry_after) plan.requeue_after = clamp_requeue(std::min(plan.requeue_after, *o.retry_after));
  if (!o.constraint.empty() &&
      !std::binary_search(pp.constraints.begin(), pp.constraints.end(), o.constraint)) {
    pp.constraints.insert(std::lower_bound(pp.constraints.begin(), pp.constraints.end(), o.constraint),
                          o.constraint);
    auto facts = std::find_if(in.workload.pods.begin(), in.workload.pods.end(),
                              [&](const PodFacts& p) { return p.name == pod; });
    const Settings& s = in.settings;
    if (facts != in.workload.pods.end() && s.automation_enabled && !s.protected_namespace && !s.dry_run) {
      pp.write_constraints = updated_constraints(current_constraints(*facts), pp.constraints);
    }
  }
  summarize(plan);
}

}  // namespace kubex::decide::actuation
