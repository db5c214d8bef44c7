#include "controllers/consolidation.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>

#include <algorithm>
#include <exception>
#include <nlohmann/json.hpp>
#include <set>

#include "act/evictor.h"
#include "act/finalizers.h"
#include "act/status_writer.h"
#include "act/tainter.h"
#include "api/keys.h"
#include "common/duration.h"
#include "common/time_format.h"
#include "decide/packing/drain.h"
#include "decide/packing/plan.h"
#include "kube/runtime/event_recorder.h"
#include "kube/runtime/metrics.h"
#include "observe/catalog_view.h"

namespace kubex::controllers {

namespace {

namespace pk = decide::packing;
using nlohmann::json;

// OBS-1: GpuConsolidationPolicy `Available` reasons written by this controller.
constexpr const char* kAvailable = "Available";
constexpr const char* kDraining = "Draining";
constexpr const char* kWouldDrain = "WouldDrain";
constexpr const char* kNoMatchingNodeSelector = "NoMatchingNodeSelector";

kube::ControllerOptions controller_options(const ConsolidationOptions& o) {
  kube::ControllerOptions c;
  c.workers = 1;  // CON-9: every consolidation reconcile runs on one worker
  c.metrics = o.metrics;
  c.clock = o.clock;
  return c;
}

std::string policy_path(const std::string& name) {
  return api::object_path(api::Kind::kGpuConsolidationPolicy, "", name);
}

kube::ObjectReference policy_ref(const api::ConsolidationObject& o) {
  const api::ObjectMeta& m = o.parsed.value.meta;
  return {"rightsizing.kubex.ai/v1alpha1", "GpuConsolidationPolicy", "", m.name.empty() ? o.name : m.name, m.uid,
          "", ""};
}

kube::ObjectReference node_ref(const std::string& node) {
  return {"v1", "Node", "", node, "", "", ""};
}

// CON-5a: status.gpuModels, `{product, nodes}` by product ("" for nodes without the label).
json gpu_models(const pk::Plan& plan) {
  json out = json::array();
  for (const pk::GpuModelCount& m : plan.gpu_models) out.push_back({{"product", m.product}, {"nodes", m.nodes}});
  return out;
}

// CON-11: the numbers every reconcile writes.
json pool_fields(const pk::Plan& plan, common::TimePoint now) {
  return {{"poolNodes", plan.pool_nodes},
          {"gpuCapacity", plan.gpu_capacity},
          {"gpuAllocated", pk::format_allocated(plan.gpu_allocated)},
          {"estimatedReclaimableGPUs", plan.estimated_reclaimable_gpus},
          {"gpuModels", gpu_models(plan)},
          {"lastEvaluationTime", common::format_rfc3339(now)}};
}

}  // namespace

ConsolidationController::ConsolidationController(ConsolidationDeps deps, ConsolidationOptions options)
    : deps_(std::move(deps)),
      options_(options),
      controller_(
          kName, [this](const std::string& key) { return reconcile(key); }, controller_options(options_)) {
  if (options_.metrics) {
    drained_ = &options_.metrics
                    ->counter_family("kubex_consolidation_nodes_drained_total",
                                     "GPU nodes drained to completion by GpuConsolidationPolicies (CON-8).")
                    .Add({});
    candidates_ = &options_.metrics->gauge_family(
        "kubex_consolidation_candidates",
        "Pool nodes of a GpuConsolidationPolicy at its last reconcile, by result (feasible, infeasible, unmovable, "
        "above_threshold) and first blocker (CON-12).");
  }
}

ConsolidationController::~ConsolidationController() {
  stop();
}

void ConsolidationController::start() {
  controller_.start();
  controller_.enqueue(kSweep);
  for (const auto& p : deps_.policies->list()) controller_.enqueue(p->name);
}

void ConsolidationController::stop() {
  controller_.stop();
}

std::string ConsolidationController::draining(const std::string& policy) const {
  std::lock_guard lk(mu_);
  auto it = drains_.find(policy);
  return it == drains_.end() ? "" : it->second.node;
}

std::shared_ptr<const api::ConsolidationObject> ConsolidationController::find(const std::string& name) const {
  for (auto& p : deps_.policies->list()) {
    if (p->name == name) return p;
  }
  return nullptr;
}

std::string ConsolidationController::reservation_namespace() const {
  if (deps_.global) {
    if (auto g = deps_.global->global_config()) return g->parsed.value.spec.kai_reservation_namespace;
  }
  return api::keys::kDefaultReservationNamespace;
}

kube::ReconcileOutcome ConsolidationController::reconcile(const std::string& key) {
  try {
    return key == kSweep ? sweep() : reconcile_policy(key);
  } catch (const std::exception& e) {
    return std::unexpected("consolidation reconcile of " + key + " failed: " + e.what());
  } catch (...) {
    return std::unexpected("consolidation reconcile of " + key + " failed");
  }
}

bool ConsolidationController::remove_taints(const std::string& policy, const std::string& node) {
  std::set<std::string> nodes;
  if (!node.empty()) nodes.insert(node);
  for (const auto& t : deps_.inventory->consolidation_taints()) {
    if (t.policy == policy) nodes.insert(t.node);
  }
  bool ok = true;
  for (const auto& n : nodes) {
    act::TaintResult r = deps_.tainter->remove(n, policy);
    if (!r.ok() && r.outcome != act::TaintResult::Outcome::kNotFound) {
      log_.warn("cannot remove the consolidation taint",
                {{"policy", policy}, {"node", n}, {"result", act::outcome_name(r.outcome)}, {"error", r.message}});
      ok = false;
    }
  }
  return ok;
}

// CON-9: a consolidation taint whose policy no longer exists is removed; so is a taint of a known policy on a
// node it is not draining (a removal that failed earlier).
kube::ReconcileOutcome ConsolidationController::sweep() {
  std::set<std::string> existing;
  for (const auto& p : deps_.policies->list()) existing.insert(p->name);
  bool ok = true;
  for (const auto& t : deps_.inventory->consolidation_taints()) {
    bool orphan = !existing.count(t.policy);
    bool stale = false;
    {
      std::lock_guard lk(mu_);
      auto it = drains_.find(t.policy);
      stale = !orphan && seen_.count(t.policy) && (it == drains_.end() || it->second.node != t.node);
    }
    if (!orphan && !stale) continue;
    if (options_.dry_run) {  // --dry-run writes nothing (CON-11)
      log_.info("dry run: would remove a consolidation taint", {{"node", t.node}, {"policy", t.policy}});
      continue;
    }
    act::TaintResult r = deps_.tainter->remove(t.node, t.policy);
    log_.info(orphan ? "removed an orphaned consolidation taint" : "removed a stale consolidation taint",
              {{"node", t.node}, {"policy", t.policy}, {"result", act::outcome_name(r.outcome)}});
    ok = ok && (r.ok() || r.outcome == act::TaintResult::Outcome::kNotFound);
  }
  if (!ok) return std::unexpected(std::string("orphaned consolidation taints could not all be removed"));
  return kube::ReconcileResult{false, options_.sweep_interval};
}

kube::ReconcileOutcome ConsolidationController::cleanup_deleted(const api::ConsolidationObject& obj) {
  const std::string& name = obj.name;
  std::string node;
  {
    std::lock_guard lk(mu_);
    if (auto it = drains_.find(name); it != drains_.end()) node = it->second.node;
  }
  if (!remove_taints(name, node)) {
    return std::unexpected("policy " + name + " is being deleted; its consolidation taint could not be removed");
  }
  {
    std::lock_guard lk(mu_);
    drains_.erase(name);
  }
  const auto& fin = obj.parsed.value.meta.finalizers;
  if (deps_.finalizers &&
      std::find(fin.begin(), fin.end(), api::keys::kConsolidationFinalizer) != fin.end()) {
    auto r = deps_.finalizers->remove(policy_path(name), api::keys::kConsolidationFinalizer);
    if (!r) return std::unexpected("cannot remove the finalizer of " + name + ": " + r.error().str());
    log_.info("policy deleted: consolidation taint removed, finalizer released", {{"policy", name}});
  }
  return kube::ReconcileResult{};
}

kube::ReconcileOutcome ConsolidationController::reconcile_policy(const std::string& name) {
  auto obj = find(name);
  if (!obj) {  // gone (without our finalizer): the sweep removes its taint
    {
      std::lock_guard lk(mu_);
      drains_.erase(name);
      seen_.erase(name);
    }
    set_candidates_gauge(name, {});  // CON-12: a deleted policy keeps no series
    return kube::ReconcileResult{};
  }
  const api::ConsolidationPolicy& policy = obj->parsed.value;
  if (policy.meta.deleting) return cleanup_deleted(*obj);
  const common::Clock& clock = options_.clock ? *options_.clock : common::RealClock::instance();
  const common::TimePoint now = clock.now();

  if (!obj->parsed.valid()) {  // Available=False/InvalidSpec|InvalidContract is the validity controller's
    std::string node;
    {
      std::lock_guard lk(mu_);
      if (auto it = drains_.find(name); it != drains_.end()) node = it->second.node;
    }
    if (!node.empty() && !remove_taints(name, node)) return std::unexpected("cannot remove the taint of " + name);
    std::lock_guard lk(mu_);
    drains_.erase(name);
    return kube::ReconcileResult{};
  }
  const common::Duration requeue = std::max<common::Duration>(policy.spec.requeue_after, std::chrono::seconds(1));

  // The finalizer that removes the policy's taint on deletion (CON-9). Nothing to clean up in dry-run.
  const auto& fin = policy.meta.finalizers;
  if (!options_.dry_run && deps_.finalizers &&
      std::find(fin.begin(), fin.end(), api::keys::kConsolidationFinalizer) == fin.end()) {
    auto r = deps_.finalizers->add(policy_path(name), api::keys::kConsolidationFinalizer);
    if (!r) {
      if (r.error().not_found()) return kube::ReconcileResult{};
      return std::unexpected("cannot add the finalizer to " + name + ": " + r.error().str());
    }
  }

  act::StatusChange change;
  change.generation = policy.meta.generation;
  const std::string reservation_ns = reservation_namespace();
  pk::DrainInput in;
  in.pool = deps_.inventory->pool(policy.spec.node_selector, reservation_ns);
  in.options.threshold_percent = policy.spec.utilization_threshold_percent;
  in.options.policy = name;
  in.options.reserve = memory_reserve();
  in.dry_run = options_.dry_run;
  in.drain_timeout = options_.drain_timeout;
  in.now = now;
  std::set<std::string> pool_names;
  for (const pk::PoolNode& n : in.pool.nodes) pool_names.insert(n.name);

  {
    std::lock_guard lk(mu_);
    if (!seen_.count(name)) {  // after a restart or a change of leader: the drain the status records
      seen_.insert(name);
      if (!policy.status.draining_node.empty() && !drains_.count(name) && !options_.dry_run) {
        auto t = common::parse_rfc3339(policy.status.drain_start_time);
        drains_[name] = {policy.status.draining_node, t ? *t : now, {}};
      } else if (!drains_.count(name) && !options_.dry_run) {
        // CON-7 (1) happened but not (2): the last leader died between the taint and the drainingNode write, or
        // that write failed. The policy's taint is its drain under way; planning afresh would taint a second node
        // (CON-9) and leave this one to the sweep half drained. Its start is unknown: it counts from now.
        for (const auto& t : deps_.inventory->consolidation_taints()) {
          if (t.policy == name) {
            drains_[name] = {t.node, now, {}};
            log_.info("resuming the drain of the policy's tainted node", {{"policy", name}, {"node", t.node}});
            break;
          }
        }
      }
    }
    if (auto it = drains_.find(name); it != drains_.end()) {
      it->second.pool = pool_names;
      in.drain = pk::DrainUnderWay{it->second.node, it->second.start};
    }
    // Another policy's drain in progress over a pool that shares a node with this one (CON-9): its pods are moving
    // onto nodes this plan would count on, so this policy waits. Policies over disjoint pools drain side by side.
    for (const auto& [p, d] : drains_) {
      if (p == name) continue;
      const bool overlaps = d.pool.empty() || std::any_of(d.pool.begin(), d.pool.end(), [&](const std::string& n) {
                              return pool_names.count(n) > 0;
                            });
      if (overlaps) in.other_draining = p + " (node " + d.node + ")";
    }
  }

  // CON-1: an empty pool.
  if (in.pool.nodes.empty()) {
    if (in.drain && !remove_taints(name, in.drain->node)) return std::unexpected("cannot remove the taint of " + name);
    forget_drain(name);
    set_candidates_gauge(name, {});
    change.set.push_back({kAvailable, "False", kNoMatchingNodeSelector, "no node matches spec.nodeSelector"});
    change.fields = {{"poolNodes", 0},          {"gpuCapacity", 0},
                     {"gpuAllocated", "0.00"},  {"estimatedReclaimableGPUs", 0},
                     {"drainingNode", nullptr}, {"drainStartTime", nullptr},
                     {"gpuModels", json::array()},
                     {"lastEvaluationTime", common::format_rfc3339(now)}};
    auto w = deps_.status->write(policy_path(name), change, now);
    if (!w && !w.error().not_found()) return std::unexpected(w.error().str());
    return kube::ReconcileResult{false, requeue};
  }

  pk::DrainDecision step = pk::next_drain_step(in);
  if (!step.plan.error.empty()) return std::unexpected("consolidation plan of " + name + ": " + step.plan.error);
  set_candidates_gauge(name, step.plan);  // CON-12
  change.fields = pool_fields(step.plan, now);
  common::Duration next = requeue;
  std::vector<PolicyEvent> events;
  std::string event_node;
  auto event = [&](const std::string& reason, const std::string& msg, bool warning) {
    events.push_back({warning, reason, msg});
    event_node = step.node;
  };
  auto end_drain = [&]() -> bool {  // the taint goes and the drain is forgotten
    if (!remove_taints(name, step.node)) return false;
    forget_drain(name);
    change.fields["drainingNode"] = nullptr;
    change.fields["drainStartTime"] = nullptr;
    return true;
  };

  switch (step.action) {
    case pk::DrainAction::kComplete:  // CON-8
      if (!end_drain()) return std::unexpected("cannot remove the taint of " + step.node);
      if (drained_) drained_->Increment();
      change.set.push_back({kAvailable, "True", step.reason, step.message});
      change.fields["lastDrainedNode"] = step.node;
      change.fields["lastDrainTime"] = common::format_rfc3339(now);
      event("DrainCompleted", step.message, false);
      log_.info("drain completed", {{"policy", name}, {"node", step.node}});
      break;
    case pk::DrainAction::kBlock:  // CON-8
    case pk::DrainAction::kAbort:  // CON-7a
      if (!end_drain()) return std::unexpected("cannot remove the taint of " + step.node);
      change.set.push_back({kAvailable, "True", step.reason, step.message});
      event(step.reason, step.message, true);
      log_.warn(step.action == pk::DrainAction::kBlock ? "drain blocked" : "drain aborted",
                {{"policy", name}, {"node", step.node}, {"message", step.message}});
      break;
    case pk::DrainAction::kEvict:  // CON-7 (3): evictions refused with 429 (or failed) are retried here
    case pk::DrainAction::kWait: {
      std::string msg = step.message;
      if (step.action == pk::DrainAction::kEvict) {
        const EvictionRun run = evict_drain_pods(name, step.node, policy.spec.node_selector, in.options, step.evict);
        if (!run.aborted.empty()) {  // CON-7a before an eviction
          step.node = in.drain->node;
          if (!end_drain()) return std::unexpected("cannot remove the taint of " + step.node);
          msg = "drain of node " + step.node + " aborted: " + run.aborted + "; its taint was removed";
          change.set.push_back({kAvailable, "True", "DrainAborted", msg});
          event("DrainAborted", msg, true);
          log_.warn("drain aborted", {{"policy", name}, {"node", step.node}, {"message", msg}});
          break;
        }
        if (run.blocked) {
          msg += "; " + std::to_string(run.blocked) + " eviction(s) refused by a PodDisruptionBudget, retried";
        }
      }
      change.set.push_back({kAvailable, "True", kDraining, msg});
      change.fields["drainingNode"] = in.drain->node;
      change.fields["drainStartTime"] = common::format_rfc3339(in.drain->start);
      next = std::min(requeue, options_.drain_poll);
      break;
    }
    case pk::DrainAction::kWouldDrain:  // CON-11
      change.set.push_back({kAvailable, "True", kWouldDrain, step.message});
      change.fields["drainingNode"] = nullptr;
      change.fields["drainStartTime"] = nullptr;
      event("WouldDrain", step.message, false);
      break;
    case pk::DrainAction::kTaint:
      return start_drain(*obj, policy, in, step, change, pool_names, requeue);
    case pk::DrainAction::kReport:
      if (!step.reason.empty()) {  // CON-10
        change.set.push_back({kAvailable, "True", step.reason, step.message});
        if (log_.enabled(common::LogLevel::kInfo)) {  // why each node is not drained, for humans and tests
          json why = json::object();
          for (const pk::Candidate& c : step.plan.candidates) why[c.node] = c.reason;
          json fields = {{"policy", name}, {"message", step.message}, {"nodes", why}};
          // OBS-4: at info when the answer changed since this policy's last cycle, else at debug.
          if (no_candidate_news_.changed(name, step.message + '\n' + why.dump())) {
            log_.info("no consolidation candidate", fields);
          } else {
            log_.debug("no consolidation candidate", fields);
          }
        }
      } else {  // CON-9: another policy drains in an overlapping pool; this one waits and keeps its condition
        log_.debug("waiting for another policy's drain", {{"policy", name}, {"other", in.other_draining}});
      }
      change.fields["drainingNode"] = nullptr;
      change.fields["drainStartTime"] = nullptr;
      break;
  }

  auto w = deps_.status->write(policy_path(name), change, now);
  if (!w && !w.error().not_found()) return std::unexpected(w.error().str());
  emit(*obj, events, event_node);
  return kube::ReconcileResult{false, next};
}

// CON-7 (1)…(4), with CON-7a's look again right before the taint and before each eviction.
kube::ReconcileOutcome ConsolidationController::start_drain(const api::ConsolidationObject& obj,
                                                            const api::ConsolidationPolicy& policy,
                                                            const pk::DrainInput& in, const pk::DrainDecision& step,
                                                            act::StatusChange& change,
                                                            const std::set<std::string>& pool_names,
                                                            common::Duration requeue) {
  const std::string& name = in.options.policy;
  const common::TimePoint now = in.now;
  const common::Duration soon = std::min(requeue, options_.drain_poll);
  std::vector<PolicyEvent> events;
  // CON-7a: the pool again, right before the taint.
  const pk::Candidate before = pk::recheck_drain(
      deps_.inventory->pool(policy.spec.node_selector, reservation_namespace()), step.node, in.options);
  if (!before.feasible) {
    const std::string msg = "drain of node " + step.node + " aborted before its taint: " + before.reason;
    change.set.push_back({kAvailable, "True", "DrainAborted", msg});
    change.fields["drainingNode"] = nullptr;
    change.fields["drainStartTime"] = nullptr;
    log_.warn("drain aborted", {{"policy", name}, {"node", step.node}, {"message", msg}});
    auto w = deps_.status->write(policy_path(name), change, now);
    if (!w && !w.error().not_found()) return std::unexpected(w.error().str());
    events.push_back({true, "DrainAborted", msg});
    emit(obj, events, step.node);
    return kube::ReconcileResult{false, soon};
  }
  act::TaintResult t = deps_.tainter->add(step.node, name);  // CON-7 (1)
  if (t.outcome == act::TaintResult::Outcome::kHeld || t.outcome == act::TaintResult::Outcome::kConflict ||
      t.outcome == act::TaintResult::Outcome::kNotFound) {
    // The cache was behind the node: plan again soon from fresher data.
    log_.info("node not tainted; planning again", {{"policy", name}, {"node", step.node},
                                                   {"result", act::outcome_name(t.outcome)}, {"holder", t.holder}});
    auto w = deps_.status->write(policy_path(name), change, now);
    if (!w && !w.error().not_found()) return std::unexpected(w.error().str());
    return kube::ReconcileResult{false, soon};
  }
  if (!t.ok()) return std::unexpected("cannot taint node " + step.node + ": " + t.message);
  {
    std::lock_guard lk(mu_);
    drains_[name] = {step.node, now, pool_names};
  }
  // CON-7 (2): drainingNode and drainStartTime before any eviction.
  change.set.push_back({kAvailable, "True", kDraining, step.message});
  change.fields["drainingNode"] = step.node;
  change.fields["drainStartTime"] = common::format_rfc3339(now);
  auto w = deps_.status->write(policy_path(name), change, now);
  if (!w && !w.error().not_found()) log_.warn("status write failed", {{"policy", name}, {"error", w.error().str()}});
  // CON-7 (3): evict its GPU pods, looking again before each one.
  std::vector<pk::PoolPod> pods;
  for (const pk::Placement& pl : step.placements) {
    for (const pk::PoolPod& p : in.pool.pods)
      if (p.ns == pl.ns && p.name == pl.name && p.node == step.node && !p.leaving) pods.push_back(p);
  }
  const EvictionRun run = evict_drain_pods(name, step.node, policy.spec.node_selector, in.options, pods);
  if (!run.aborted.empty()) {
    if (!remove_taints(name, step.node)) return std::unexpected("cannot remove the taint of " + step.node);
    forget_drain(name);
    const std::string msg = "drain of node " + step.node + " aborted: " + run.aborted + "; its taint was removed";
    change.set.clear();
    change.set.push_back({kAvailable, "True", "DrainAborted", msg});
    change.fields["drainingNode"] = nullptr;
    change.fields["drainStartTime"] = nullptr;
    auto w2 = deps_.status->write(policy_path(name), change, now);
    if (!w2 && !w2.error().not_found()) return std::unexpected(w2.error().str());
    log_.warn("drain aborted", {{"policy", name}, {"node", step.node}, {"message", msg}});
    events.push_back({true, "DrainAborted", msg});
    emit(obj, events, step.node);
    return kube::ReconcileResult{false, soon};
  }
  no_candidate_news_.forget(name);  // the first answer after a drain is news again
  log_.info("drain started", {{"policy", name}, {"node", step.node}, {"message", step.message}});
  if (deps_.events) {  // CON-7 (4)
    deps_.events->event(policy_ref(obj), kube::EventType::kNormal, "DrainStarted", step.message);
    deps_.events->event(node_ref(step.node), kube::EventType::kNormal, "DrainStarted",
                        "drained by GpuConsolidationPolicy " + name + ": " + step.message);
  }
  return kube::ReconcileResult{false, soon};
}

// CON-7 (3) with CON-7a: before each eviction the pool is read again and the drain rechecked; the first failed
// recheck stops the evictions (aborted = its reason).
ConsolidationController::EvictionRun ConsolidationController::evict_drain_pods(
    const std::string& policy, const std::string& node, const api::LabelSelector& selector,
    const pk::Options& options, const std::vector<pk::PoolPod>& pods) {
  EvictionRun run;
  for (const pk::PoolPod& p : pods) {
    const pk::Candidate again = pk::recheck_drain(deps_.inventory->pool(selector, reservation_namespace()), node, options);
    if (!again.feasible) {
      run.aborted = again.reason;
      return run;
    }
    act::EvictionResult r = deps_.evictor->evict({p.ns, p.name, ""}, act::EvictionReason::kConsolidation);
    if (r.outcome == act::EvictionResult::Outcome::kPdbBlocked) ++run.blocked;
    (void)policy;
  }
  return run;
}

void ConsolidationController::forget_drain(const std::string& policy) {
  std::lock_guard lk(mu_);
  drains_.erase(policy);
}

pk::MemoryReserve ConsolidationController::memory_reserve() const {
  if (deps_.global) {
    if (auto g = deps_.global->global_config()) return pk::memory_reserve(g->parsed.value.spec);
  }
  return {};
}

void ConsolidationController::emit(const api::ConsolidationObject& obj, const std::vector<PolicyEvent>& events,
                                   const std::string& node) {
  if (!deps_.events) return;
  for (const PolicyEvent& e : events) {
    const kube::EventType type = e.warning ? kube::EventType::kWarning : kube::EventType::kNormal;
    deps_.events->event(policy_ref(obj), type, e.reason, e.message);
    if (!node.empty()) deps_.events->event(node_ref(node), type, e.reason, e.message);
  }
}

// CON-12: one series per (result, blocker) of the policy; series of an earlier reconcile that no longer apply go.
void ConsolidationController::set_candidates_gauge(const std::string& policy, const pk::Plan& plan) {
  if (!candidates_) return;
  std::map<std::pair<std::string, std::string>, double> counts;
  for (const pk::Candidate& c : plan.candidates) {
    if (!c.result.empty()) counts[{c.result, c.blocker}] += 1;
  }
  std::lock_guard lk(mu_);
  auto& before = gauge_series_[policy];
  for (auto it = before.begin(); it != before.end();) {
    if (!counts.count(it->first)) {
      candidates_->Remove(it->second);
      it = before.erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& [key, n] : counts) {
    auto it = before.find(key);
    if (it == before.end())
      it = before.emplace(key, &candidates_->Add({{"policy", policy}, {"result", key.first}, {"blocker", key.second}}))
               .first;
    it->second->Set(n);
  }
  if (before.empty()) gauge_series_.erase(policy);
}

}  // namespace kubex::controllers
