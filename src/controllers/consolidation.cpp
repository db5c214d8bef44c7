#include "controllers/consolidation.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>

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
constexpr const char* kNoCandidate = "NoCandidate";
constexpr const char* kDraining = "Draining";
constexpr const char* kDrained = "Drained";
constexpr const char* kDrainBlocked = "DrainBlocked";
constexpr const char* kWouldDrain = "WouldDrain";
constexpr const char* kNoMatchingNodeSelector = "NoMatchingNodeSelector";
constexpr const char* kTerminating = "terminating";  // movability.h's reason for a pod being deleted

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

// The counted GPU pods of `node` (CON-8).
std::vector<const pk::PoolPod*> gpu_pods_on(const pk::Pool& pool, const std::string& node) {
  std::vector<const pk::PoolPod*> out;
  for (const auto& p : pool.pods) {
    if (p.node == node && p.has_gpu()) out.push_back(&p);
  }
  return out;
}

std::string pod_list(const std::vector<const pk::PoolPod*>& pods, std::size_t max = 5) {
  std::string out;
  for (std::size_t i = 0; i < pods.size() && i < max; ++i) out += (i ? ", " : "") + pods[i]->key();
  if (pods.size() > max) out += ", …";
  return out;
}

std::string placements_text(const pk::Candidate& c) {
  std::string out;
  for (std::size_t i = 0; i < c.placements.size(); ++i) {
    const pk::Placement& p = c.placements[i];
    out += (i ? ", " : "") + p.ns + "/" + p.name + " (" + decide::format_gpu(p.size) + ") -> " + p.to;
  }
  return out;
}

// CON-11: the numbers every reconcile writes.
json pool_fields(const pk::Plan& plan, common::TimePoint now) {
  return {{"poolNodes", plan.pool_nodes},
          {"gpuCapacity", plan.gpu_capacity},
          {"gpuAllocated", pk::format_allocated(plan.gpu_allocated)},
          {"estimatedReclaimableGPUs", plan.estimated_reclaimable_gpus},
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
    std::lock_guard lk(mu_);
    drains_.erase(name);
    seen_.erase(name);
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
  const pk::Pool pool = deps_.inventory->pool(policy.spec.node_selector, reservation_namespace());
  std::set<std::string> pool_names;
  for (const pk::PoolNode& n : pool.nodes) pool_names.insert(n.name);

  std::optional<Drain> drain;
  // Another policy's drain in progress over a pool that shares a node with this one (CON-9): its pods are moving
  // onto nodes this plan would count on, so this policy waits. Policies over disjoint pools drain side by side.
  std::string other_draining;
  {
    std::lock_guard lk(mu_);
    if (!seen_.count(name)) {  // after a restart or a change of leader: the drain the status records
      seen_.insert(name);
      if (!policy.status.draining_node.empty() && !drains_.count(name) && !options_.dry_run) {
        auto t = common::parse_rfc3339(policy.status.drain_start_time);
        drains_[name] = {policy.status.draining_node, t ? *t : now, {}};
      }
    }
    if (auto it = drains_.find(name); it != drains_.end()) {
      it->second.pool = pool_names;
      drain = it->second;
    }
    for (const auto& [p, d] : drains_) {
      if (p == name) continue;
      const bool overlaps = d.pool.empty() || std::any_of(d.pool.begin(), d.pool.end(), [&](const std::string& n) {
                              return pool_names.count(n) > 0;
                            });
      if (overlaps) other_draining = p + " (node " + d.node + ")";
    }
  }

  // CON-1: an empty pool.
  if (pool.nodes.empty()) {
    if (drain && !remove_taints(name, drain->node)) return std::unexpected("cannot remove the taint of " + name);
    {
      std::lock_guard lk(mu_);
      drains_.erase(name);
    }
    change.set.push_back({kAvailable, "False", kNoMatchingNodeSelector,
                          "no node matches spec.nodeSelector"});
    change.fields = {{"poolNodes", 0},          {"gpuCapacity", 0},
                     {"gpuAllocated", "0.00"},  {"estimatedReclaimableGPUs", 0},
                     {"drainingNode", nullptr}, {"drainStartTime", nullptr},
                     {"lastEvaluationTime", common::format_rfc3339(now)}};
    auto w = deps_.status->write(policy_path(name), change, now);
    if (!w && !w.error().not_found()) return std::unexpected(w.error().str());
    return kube::ReconcileResult{false, requeue};
  }

  pk::Options po;
  po.threshold_percent = policy.spec.utilization_threshold_percent;
  po.policy = name;
  po.stop_at_first_feasible = true;
  const pk::Plan plan = pk::plan(pool, po);
  if (!plan.error.empty()) return std::unexpected("consolidation plan of " + name + ": " + plan.error);
  change.fields = pool_fields(plan, now);
  common::Duration next = requeue;
  std::vector<std::pair<kube::EventType, std::pair<std::string, std::string>>> events;  // (type, (reason, msg))
  std::string event_node;

  if (drain) {
    std::vector<const pk::PoolPod*> left = gpu_pods_on(pool, drain->node);
    if (left.empty()) {  // CON-8: drained
      if (!remove_taints(name, drain->node)) return std::unexpected("cannot remove the taint of " + drain->node);
      {
        std::lock_guard lk(mu_);
        drains_.erase(name);
      }
      if (drained_) drained_->Increment();
      const std::string msg = "node " + drain->node + " drained: its GPU pods moved to other pool nodes";
      change.set.push_back({kAvailable, "True", kDrained, msg});
      change.fields["drainingNode"] = nullptr;
      change.fields["drainStartTime"] = nullptr;
      change.fields["lastDrainedNode"] = drain->node;
      change.fields["lastDrainTime"] = common::format_rfc3339(now);
      events.push_back({kube::EventType::kNormal, {"DrainCompleted", msg}});
      event_node = drain->node;
      log_.info("drain completed", {{"policy", name}, {"node", drain->node}});
    } else if (now - drain->start >= options_.drain_timeout) {  // CON-8: blocked
      if (!remove_taints(name, drain->node)) return std::unexpected("cannot remove the taint of " + drain->node);
      {
        std::lock_guard lk(mu_);
        drains_.erase(name);
      }
      const std::string msg = "node " + drain->node + " still runs " + std::to_string(left.size()) +
                              " GPU pod(s) " + common::format_go_duration(options_.drain_timeout) +
                              " after the drain started (" + pod_list(left) + "); its taint was removed";
      change.set.push_back({kAvailable, "True", kDrainBlocked, msg});
      change.fields["drainingNode"] = nullptr;
      change.fields["drainStartTime"] = nullptr;
      events.push_back({kube::EventType::kWarning, {"DrainBlocked", msg}});
      event_node = drain->node;
      log_.warn("drain blocked", {{"policy", name}, {"node", drain->node}, {"pods", pod_list(left, 50)}});
    } else {  // CON-7 (3): evictions refused with 429 (or failed) are retried here
      int evicted = 0, blocked = 0;
      for (const pk::PoolPod* p : left) {
        if (p->unmovable == kTerminating) continue;
        act::EvictionResult r = deps_.evictor->evict({p->ns, p->name, ""}, act::EvictionReason::kConsolidation);
        if (r.succeeded()) ++evicted;
        if (r.outcome == act::EvictionResult::Outcome::kPdbBlocked) ++blocked;
      }
      std::string msg = "draining node " + drain->node + ": " + std::to_string(left.size()) +
                        " GPU pod(s) left (" + pod_list(left) + ")";
      if (blocked) msg += "; " + std::to_string(blocked) + " eviction(s) refused by a PodDisruptionBudget, retried";
      change.set.push_back({kAvailable, "True", kDraining, msg});
      change.fields["drainingNode"] = drain->node;
      change.fields["drainStartTime"] = common::format_rfc3339(drain->start);
      next = std::min(requeue, options_.drain_poll);
      (void)evicted;
    }
  } else if (const pk::Candidate* c = plan.first_feasible(); c && other_draining.empty()) {
    const std::string util = pk::format_percent(c->utilization_centi_percent);
    if (options_.dry_run) {  // CON-11
      const std::string msg = "dry run: would drain node " + c->node + " (" + util + "): " + placements_text(*c);
      change.set.push_back({kAvailable, "True", kWouldDrain, msg});
      change.fields["drainingNode"] = nullptr;
      change.fields["drainStartTime"] = nullptr;
      events.push_back({kube::EventType::kNormal, {"WouldDrain", msg}});
      event_node = c->node;
    } else {
      act::TaintResult t = deps_.tainter->add(c->node, name);  // CON-7 (1)
      if (t.outcome == act::TaintResult::Outcome::kHeld || t.outcome == act::TaintResult::Outcome::kConflict ||
          t.outcome == act::TaintResult::Outcome::kNotFound) {
        // The cache was behind the node: plan again soon from fresher data.
        log_.info("node not tainted; planning again", {{"policy", name}, {"node", c->node},
                                                       {"result", act::outcome_name(t.outcome)},
                                                       {"holder", t.holder}});
        auto w = deps_.status->write(policy_path(name), change, now);
        if (!w && !w.error().not_found()) return std::unexpected(w.error().str());
        return kube::ReconcileResult{false, std::min(requeue, options_.drain_poll)};
      }
      if (!t.ok()) return std::unexpected("cannot taint node " + c->node + ": " + t.message);
      {
        std::lock_guard lk(mu_);
        drains_[name] = {c->node, now, pool_names};
      }
      // CON-7 (2): drainingNode and drainStartTime before any eviction.
      const std::string msg = "draining node " + c->node + " (" + util + "): " + placements_text(*c);
      change.set.push_back({kAvailable, "True", kDraining, msg});
      change.fields["drainingNode"] = c->node;
      change.fields["drainStartTime"] = common::format_rfc3339(now);
      auto w = deps_.status->write(policy_path(name), change, now);
      if (!w && !w.error().not_found()) log_.warn("status write failed", {{"policy", name}, {"error", w.error().str()}});
      // CON-7 (3): evict its GPU pods.
      for (const pk::PoolPod* p : gpu_pods_on(pool, c->node)) {
        if (p->unmovable == kTerminating) continue;
        deps_.evictor->evict({p->ns, p->name, ""}, act::EvictionReason::kConsolidation);
      }
      log_.info("drain started", {{"policy", name}, {"node", c->node}, {"utilization", util},
                                  {"placements", placements_text(*c)}});
      if (deps_.events) {  // CON-7 (4)
        deps_.events->event(policy_ref(*obj), kube::EventType::kNormal, "DrainStarted", msg);
        deps_.events->event(node_ref(c->node), kube::EventType::kNormal, "DrainStarted",
                            "drained by GpuConsolidationPolicy " + name + ": " + placements_text(*c));
      }
      return kube::ReconcileResult{false, std::min(requeue, options_.drain_poll)};
    }
  } else if (!plan.first_feasible()) {  // CON-10
    change.set.push_back({kAvailable, "True", kNoCandidate, plan.message});
    if (log_.enabled(common::LogLevel::kInfo)) {  // why each node is not drained, for humans and tests
      json why = json::object();
      for (const pk::Candidate& c : plan.candidates) why[c.node] = c.reason;
      log_.info("no consolidation candidate", {{"policy", name}, {"message", plan.message}, {"nodes", why}});
    }
    change.fields["drainingNode"] = nullptr;
    change.fields["drainStartTime"] = nullptr;
  } else {  // CON-9: another policy drains in an overlapping pool; this one waits and keeps its condition
    change.fields["drainingNode"] = nullptr;
    change.fields["drainStartTime"] = nullptr;
    log_.debug("waiting for another policy's drain", {{"policy", name}, {"other", other_draining}});
  }

  auto w = deps_.status->write(policy_path(name), change, now);
  if (!w && !w.error().not_found()) return std::unexpected(w.error().str());
  if (deps_.events) {
    for (const auto& [type, rm] : events) {
      deps_.events->event(policy_ref(*obj), type, rm.first, rm.second);
      if (!event_node.empty()) deps_.events->event(node_ref(event_node), type, rm.first, rm.second);
    }
  }
  return kube::ReconcileResult{false, next};
}

}  // namespace kubex::controllers
