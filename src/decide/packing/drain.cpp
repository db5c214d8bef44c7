// next_drain_step(): the drain lifecycle of drain.h, one transition per call.
#include "decide/packing/drain.h"

#include <algorithm>

#include "common/duration.h"

namespace kubex::decide::packing {

namespace {

std::vector<const PoolPod*> gpu_pods_on(const Pool& pool, const std::string& node) {
  std::vector<const PoolPod*> out;
  for (const PoolPod& p : pool.pods)
    if (p.node == node && p.has_gpu()) out.push_back(&p);
  return out;
}

std::string pod_list(const std::vector<const PoolPod*>& pods, std::size_t max = 5) {
  std::string out;
  for (std::size_t i = 0; i < pods.size() && i < max; ++i) out += (i ? ", " : "") + pods[i]->key();
  if (pods.size() > max) out += ", …";
  return out;
}

std::string placements_text(const std::vector<Placement>& placements) {
  std::string out;
  for (std::size_t i = 0; i < placements.size(); ++i) {
    const Placement& p = placements[i];
    out += (i ? ", " : "") + p.ns + "/" + p.name + " (" + format_gpu(p.size) + ") -> " + p.to;
  }
  return out;
}

DrainDecision start_or_report(const DrainInput& in, Plan plan) {
  DrainDecision step;
  const Candidate* c = plan.first_feasible();
  if (c == nullptr) {  // CON-10
    step.reason = "NoCandidate";
    step.message = plan.message;
  } else if (!in.other_draining.empty()) {  // CON-9: wait for the other policy; keep the condition as it is
    step.message = "waiting for the drain of " + in.other_draining;
  } else {
    const std::string util = format_percent(c->utilization_centi_percent);
    step.node = c->node;
    step.placements = c->placements;
    if (in.dry_run) {  // CON-11
      step.action = DrainAction::kWouldDrain;
      step.reason = "WouldDrain";
      step.message = "dry run: would drain node " + c->node + " (" + util + "): " + placements_text(c->placements);
    } else {  // CON-7
      step.action = DrainAction::kTaint;
      step.reason = "Draining";
      step.message = "draining node " + c->node + " (" + util + "): " + placements_text(c->placements);
    }
  }
  step.plan = std::move(plan);
  return step;
}

}  // namespace

const char* action_name(DrainAction a) {
  switch (a) {
    case DrainAction::kReport: return "report";
    case DrainAction::kTaint: return "taint";
    case DrainAction::kEvict: return "evict";
    case DrainAction::kWait: return "wait";
    case DrainAction::kComplete: return "complete";
    case DrainAction::kBlock: return "block";
    case DrainAction::kAbort: return "abort";
    case DrainAction::kWouldDrain: return "would-drain";
  }
  return "report";
}

DrainDecision next_drain_step(const DrainInput& in) {
  Options fast = in.options;
  fast.stop_at_first_feasible = true;
  Plan plan = packing::plan(in.pool, fast);
  if (!in.drain) return start_or_report(in, std::move(plan));

  DrainDecision step;
  const std::string& node = in.drain->node;
  step.node = node;
  const std::vector<const PoolPod*> left = gpu_pods_on(in.pool, node);
  if (left.empty()) {  // CON-8: drained
    step.action = DrainAction::kComplete;
    step.reason = "Drained";
    step.message = "node " + node + " drained: its GPU pods moved to other pool nodes";
  } else if (in.now - in.drain->start >= in.drain_timeout) {  // CON-8: blocked
    step.action = DrainAction::kBlock;
    step.reason = "DrainBlocked";
    step.warning = true;
    step.message = "node " + node + " still runs " + std::to_string(left.size()) + " GPU pod(s) " +
                   common::format_go_duration(in.drain_timeout) + " after the drain started (" + pod_list(left) +
                   "); its taint was removed";
  } else {
    const Candidate again = recheck_drain(in.pool, node, in.options);  // CON-7a
    if (!again.feasible) {
      step.action = DrainAction::kAbort;
      step.reason = "DrainAborted";
      step.warning = true;
      step.message = "drain of node " + node + " aborted: " + again.reason + "; its taint was removed";
    } else {
      for (const Placement& pl : again.placements) {  // the pods not yet leaving, in placement order
        for (const PoolPod* p : left)
          if (p->ns == pl.ns && p->name == pl.name && !p->leaving) step.evict.push_back(*p);
      }
      step.action = step.evict.empty() ? DrainAction::kWait : DrainAction::kEvict;
      step.reason = "Draining";
      step.message = "draining node " + node + ": " + std::to_string(left.size()) + " GPU pod(s) left (" +
                     pod_list(left) + ")";
    }
  }
  step.plan = std::move(plan);
  return step;
}

}  // namespace kubex::decide::packing
