#include "decide/packing/plan.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <tuple>

#include "decide/packing/constraints.h"
#include "decide/packing/drain.h"
#include "decide/packing/movability.h"
#include "decide/packing/occupancy.h"
#include "decide/packing/state.h"
#include "decide/packing/strategy.h"

namespace kubex::decide::packing {
namespace detail {
namespace {

std::int64_t centi_percent(Hundredths allocated, std::int64_t capacity) {
  if (capacity <= 0) return 0;
  return allocated * 100 / capacity;  // allocated/(capacity*100) * 100 %, in hundredths of a percent
}

// CON-5: why the node is not a destination for pods of another node ("" = it is one).
std::string not_destination(const NodeState& n) {
  if (n.node->gpu_capacity <= 0) return "no GPU capacity";
  if (!n.node->ready) return "not ready";
  if (n.node->unschedulable) return "unschedulable";
  if (!n.node->consolidating_policy.empty()) return "consolidating for policy " + n.node->consolidating_policy;
  if (n.allocated <= 0) return "empty";
  if (n.over_capacity) return "over capacity";
  return "";
}

// CON-4: why the node is not a candidate ("" = it is one).
std::string not_candidate(const State& s, const NodeState& n, std::int32_t threshold) {
  if (n.node->gpu_capacity <= 0) return "no GPU capacity";
  if (!n.node->consolidating_policy.empty()) return "already draining for policy " + n.node->consolidating_policy;
  bool any_gpu = false;
  const PoolPod* unmovable = nullptr;
  for (std::size_t i : n.pods) {
    const PoolPod& p = *s.pods[i].pod;
    if (!p.has_gpu()) continue;
    any_gpu = true;
    if (!p.unmovable.empty() && (unmovable == nullptr || p.key() < unmovable->key())) unmovable = &p;
  }
  if (!any_gpu) return "no GPU pods";
  if (n.allocated >= static_cast<Hundredths>(threshold) * n.node->gpu_capacity)
    return "utilization " + format_percent(centi_percent(n.allocated, n.node->gpu_capacity)) + " is not below " +
           std::to_string(threshold) + "%";
  if (unmovable != nullptr) return "unmovable pod " + unmovable->key() + ": " + unmovable->unmovable;
  return "";
}

// A pod whose PodDisruptionBudget allows no disruption now: only a drain's recheck places one (CON-7a; a plan's
// candidate with one is unmovable, CON-4). Its eviction is refused (429) and retried at a later reconcile, after
// the drain's other evictions of this pass.
bool refused_by_pdb(const PoolPod* p) { return p->unmovable == "PDB allows no disruption"; }

// CON-6, CON-7 (3): the order the drain evicts the pods in, which is the order their replacements appear and KAI
// places them (one PodGroup per replacement, taken oldest first): the plan's placements are the drain's eviction
// list, so the plan places them in that order. Whole-GPU pods first (largest first), then fractions (largest
// first), ties by pod name; pods a PDB refuses now go last (the drain's evictions pass over them, see above).
bool placement_order(const PoolPod* a, const PoolPod* b) {
  bool ar = refused_by_pdb(a), br = refused_by_pdb(b);
  if (ar != br) return br;
  bool aw = a->fraction == 0, bw = b->fraction == 0;
  if (aw != bw) return aw;
  if (a->gpu() != b->gpu()) return a->gpu() > b->gpu();
  return std::tie(a->name, a->ns) < std::tie(b->name, b->ns);
}

// CON-6, CON-6a for one candidate: fills feasible, reason, blocker and placements. Destinations are the CON-5
// ones of the candidate's GPU product (CON-5a).
void evaluate(const State& s, std::size_t cand, const std::vector<std::size_t>& destinations,
              const PlacementStrategy& strategy, Candidate& out) {
  // CON-5a: the pods stay on the candidate's GPU product. KAI does not know that rule: it places a replacement pod
  // on whichever destination it prefers, whatever its GPU model (SIM-9). So every destination is offered to the
  // strategy (KAI's choice), and a pod whose choice is a node of another model makes the candidate infeasible on
  // `gpu model`: the plan never counts on a same-model placement KAI would not make.
  const std::string& product = s.nodes[cand].product;
  std::vector<std::size_t> others;
  bool same_model = false, other_models = false;
  for (std::size_t d : destinations) {
    if (d == cand) continue;
    others.push_back(d);
    (s.nodes[d].product == product ? same_model : other_models) = true;
  }
  Destinations dests = destinations_of(s, others);
  // A pod already leaving (a drain's earlier eviction) is not placed again: its replacement is counted where it
  // lands. Candidates of a plan never hold one (CON-4: terminating pods are unmovable).
  std::vector<const PoolPod*> moving;
  for (std::size_t i : s.nodes[cand].pods)
    if (s.pods[i].pod->has_gpu() && !s.pods[i].pod->leaving) moving.push_back(s.pods[i].pod);
  std::sort(moving.begin(), moving.end(), placement_order);
  for (const PoolPod* pod : moving) {
    PlaceResult r;
    if (same_model || !other_models) {
      r = place(s, dests, *pod, pod->fraction, pod->whole_gpus, nullptr, strategy);
    } else {
      r.failed = Check::kGpuModel;
      r.constraint_failed = true;
    }
    if (r.placed && s.nodes[dests.nodes[r.destination]].product != product) {
      const NodeState& to = s.nodes[dests.nodes[r.destination]];
      out.feasible = false;
      out.placements.clear();
      PlaceResult model;
      model.failed = Check::kGpuModel;
      model.constraint_failed = true;
      out.reason = does_not_fit(*pod, pod->gpu(), model) + " (KAI would place it on " + to.node->name + ", a " +
                   to.product + ")";
      out.result = "infeasible";
      out.blocker = blocker_name(Check::kGpuModel);
      return;
    }
    if (!r.placed) {
      out.feasible = false;
      out.placements.clear();
      out.reason = does_not_fit(*pod, pod->gpu(), r);
      out.result = "infeasible";
      out.blocker = blocker_name(r.failed);
      return;
    }
    out.placements.push_back(
        {pod->ns, pod->name, pod->gpu(), s.nodes[dests.nodes[r.destination]].node->name, std::move(r.gpus)});
  }
  out.feasible = true;
  out.reason.clear();
  out.result = "feasible";
  out.blocker = "none";
}

// CON-12 for a node that is not a candidate: above the threshold, or held by an unmovable pod ("" otherwise).
void classify_other(const State& s, const NodeState& n, std::int32_t threshold, Candidate& c) {
  if (n.node->gpu_capacity <= 0 || !n.node->consolidating_policy.empty()) return;
  const PoolPod* unmovable = nullptr;
  bool any_gpu = false;
  for (std::size_t i : n.pods) {
    const PoolPod& p = *s.pods[i].pod;
    if (!p.has_gpu()) continue;
    any_gpu = true;
    if (!p.unmovable.empty() && (unmovable == nullptr || p.key() < unmovable->key())) unmovable = &p;
  }
  if (!any_gpu) return;
  if (n.allocated >= static_cast<Hundredths>(threshold) * n.node->gpu_capacity) {
    c.result = "above_threshold";
    c.blocker = "none";
  } else if (unmovable != nullptr) {
    c.result = "unmovable";
    c.blocker = unmovable_blocker(unmovable->unmovable);
  }
}

// CON-10's count of the nodes below the threshold by blocker: "3 below 75%: 2 gpu, 1 do-not-disrupt".
std::string blockers_text(const std::vector<Candidate>& candidates, std::int32_t threshold) {
  std::map<std::string, int> by;
  int below = 0;
  for (const Candidate& c : candidates) {
    if (c.result != "infeasible" && c.result != "unmovable" && c.result != "feasible") continue;
    ++below;
    ++by[c.blocker];
  }
  std::vector<std::pair<std::string, int>> sorted(by.begin(), by.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out = std::to_string(below) + " below " + std::to_string(threshold) + "%:";
  for (std::size_t i = 0; i < sorted.size(); ++i)
    out += (i ? ", " : " ") + std::to_string(sorted[i].second) + " " + sorted[i].first;
  return out;
}

}  // namespace

Plan plan_state(const State& s, const Options& options) {
  Plan plan;
  const PlacementStrategy* strategy = find_strategy(options.strategy);
  if (strategy == nullptr) {
    plan.error = "unknown placement strategy \"" + options.strategy + "\"";
    return plan;
  }
  std::vector<std::size_t> destinations, candidates, others;
  std::vector<std::string> why_not(s.nodes.size());
  for (std::size_t i = 0; i < s.nodes.size(); ++i) {
    const NodeState& n = s.nodes[i];
    plan.pool_nodes++;
    plan.gpu_capacity += std::max<std::int64_t>(0, n.node->gpu_capacity);
    plan.gpu_allocated += n.allocated;
    NodeUsage u{n.node->name, n.node->gpu_capacity, n.allocated, n.gpus, n.over_capacity, false,
                not_destination(n), n.cap, n.product, n.gpu_modes};
    u.destination = u.not_destination.empty();
    auto m = std::find_if(plan.gpu_models.begin(), plan.gpu_models.end(),
                          [&](const GpuModelCount& g) { return g.product == n.product; });
    if (m == plan.gpu_models.end()) plan.gpu_models.push_back({n.product, 1});
    else ++m->nodes;
    if (u.destination) destinations.push_back(i);
    plan.nodes.push_back(std::move(u));
    why_not[i] = not_candidate(s, n, options.threshold_percent);
    (why_not[i].empty() ? candidates : others).push_back(i);
  }
  plan.estimated_reclaimable_gpus = std::max<std::int64_t>(0, plan.gpu_capacity - whole_gpus(plan.gpu_allocated));
  // CON-4: lowest utilization first (compared exactly: a1/c1 < a2/c2), ties by name.
  std::stable_sort(candidates.begin(), candidates.end(), [&](std::size_t a, std::size_t b) {
    const NodeState &x = s.nodes[a], &y = s.nodes[b];
    return x.allocated * y.node->gpu_capacity < y.allocated * x.node->gpu_capacity;
  });
  bool found = false;
  for (std::size_t i : candidates) {
    Candidate c;
    c.node = s.nodes[i].node->name;
    c.utilization_centi_percent = centi_percent(s.nodes[i].allocated, s.nodes[i].node->gpu_capacity);
    c.candidate = true;
    if (found && options.stop_at_first_feasible) {
      c.reason = "not evaluated";
    } else {
      evaluate(s, i, destinations, *strategy, c);
      found = found || c.feasible;
    }
    plan.candidates.push_back(std::move(c));
  }
  for (std::size_t i : others) {
    Candidate c;
    c.node = s.nodes[i].node->name;
    c.utilization_centi_percent = centi_percent(s.nodes[i].allocated, s.nodes[i].node->gpu_capacity);
    c.reason = why_not[i];
    classify_other(s, s.nodes[i], options.threshold_percent, c);
    plan.candidates.push_back(std::move(c));
  }
  std::sort(plan.gpu_models.begin(), plan.gpu_models.end(),
            [](const GpuModelCount& a, const GpuModelCount& b) { return a.product < b.product; });
  if (!found) {
    std::string why = "no node below " + std::to_string(options.threshold_percent) + "% with movable GPU pods";
    if (!candidates.empty()) {
      const Candidate& best = plan.candidates.front();
      why = "best candidate " + best.node + " (" + format_percent(best.utilization_centi_percent) + "): " + best.reason;
    }
    // CON-10: how many nodes are below the threshold and what holds each, when the best one does not say it all.
    std::size_t below = 0;
    for (const Candidate& c : plan.candidates) below += c.result == "infeasible" || c.result == "unmovable";
    if (below > 1 || (below == 1 && candidates.empty())) why += "; " + blockers_text(plan.candidates, options.threshold_percent);
    if (plan.gpu_models.size() > 1) {  // CON-5a
      why += "; mixed GPU models: ";
      for (std::size_t i = 0; i < plan.gpu_models.size(); ++i) {
        const GpuModelCount& g = plan.gpu_models[i];
        why += (i ? ", " : "") + (g.product.empty() ? std::string("unlabelled") : g.product) + " (" +
               std::to_string(g.nodes) + " nodes)";
      }
      why += "; drains stay within one model";
    }
    plan.message = "pool: " + std::to_string(plan.pool_nodes) + " nodes, " + std::to_string(plan.gpu_capacity) +
                   " GPUs, " + format_allocated(plan.gpu_allocated) + " allocated; " + why;
  }
  return plan;
}

Candidate recheck_state(const State& s, const std::string& node, const Options& options) {
  Candidate c;
  c.node = node;
  c.candidate = true;
  const PlacementStrategy* strategy = find_strategy(options.strategy);
  std::size_t idx = s.nodes.size();
  std::vector<std::size_t> destinations;
  for (std::size_t i = 0; i < s.nodes.size(); ++i) {
    if (s.nodes[i].node->name == node) idx = i;
    else if (not_destination(s.nodes[i]).empty()) destinations.push_back(i);
  }
  if (strategy == nullptr || idx == s.nodes.size()) {
    c.reason = strategy == nullptr ? "unknown placement strategy \"" + options.strategy + "\"" : "node " + node + " left the pool";
    c.result = "infeasible";
    c.blocker = "none";
    return c;
  }
  const NodeState& n = s.nodes[idx];
  c.utilization_centi_percent = centi_percent(n.allocated, n.node->gpu_capacity);
  // CON-4 again. Two reasons are the drain's own doing and do not stop it: a pod already leaving (not placed
  // again), and a PodDisruptionBudget the drain's earlier evictions spent (its pod still needs a place; the 429 is
  // retried, CON-7 (3), until the drain is done or blocked, CON-8).
  const PoolPod* unmovable = nullptr;
  for (std::size_t i : n.pods) {
    const PoolPod& p = *s.pods[i].pod;
    if (p.has_gpu() && !p.leaving && !p.unmovable.empty() && !refused_by_pdb(&p) &&
        (unmovable == nullptr || p.key() < unmovable->key()))
      unmovable = &p;
  }
  if (unmovable != nullptr) {
    c.reason = "unmovable pod " + unmovable->key() + ": " + unmovable->unmovable;
    c.result = "unmovable";
    c.blocker = unmovable_blocker(unmovable->unmovable);
    return c;
  }
  evaluate(s, idx, destinations, *strategy, c);
  return c;
}

}  // namespace detail

Candidate recheck_drain(const Pool& pool, const std::string& node, const Options& options) {
  return detail::recheck_state(detail::build_state(pool, options.reserve), node, options);
}

std::int64_t NodeUsage::utilization_centi_percent() const {
  return gpu_capacity <= 0 ? 0 : allocated * 100 / gpu_capacity;
}

const Candidate* Plan::first_feasible() const {
  for (const auto& c : candidates)
    if (c.candidate && c.feasible) return &c;
  return nullptr;
}

Plan plan(const Pool& pool, const Options& options) {
  return detail::plan_state(detail::build_state(pool, options.reserve), options);
}

std::string format_allocated(Hundredths h) {
  if (h < 0) h = 0;
  std::string cents = std::to_string(h % 100);
  return std::to_string(h / 100) + "." + (cents.size() < 2 ? "0" + cents : cents);
}

std::string format_percent(std::int64_t centi) {
  if (centi < 0) centi = 0;
  std::string s = std::to_string(centi / 100);
  std::int64_t frac = centi % 100;
  if (frac != 0) {
    s += "." + std::string(frac < 10 ? "0" : "") + std::to_string(frac);
    if (s.back() == '0') s.pop_back();
  }
  return s + "%";
}

DrainSequence drain_sequence(const Pool& pool, const Options& options, std::size_t max_steps) {
  DrainSequence out;
  detail::State s = detail::build_state(pool, options.reserve);
  Options fast = options;
  fast.stop_at_first_feasible = true;
  Hundredths allocated = 0;
  for (const auto& n : s.nodes) allocated += n.allocated;
  out.lower_bound_gpus = whole_gpus(allocated);
  for (std::size_t step = 0; step < max_steps; ++step) {
    Plan p = detail::plan_state(s, fast);
    const Candidate* c = p.first_feasible();
    if (c == nullptr) break;
    out.steps.push_back({c->node, c->utilization_centi_percent, c->placements});
    for (const auto& n : s.nodes)
      if (n.node->name == c->node) out.gpus_freed += std::max<std::int64_t>(0, n.node->gpu_capacity);
    detail::apply_drain(s, *c);
  }
  out.final_plan = detail::plan_state(s, options);
  for (const auto& n : s.nodes)
    if (n.allocated > 0) out.gpus_in_use_after += std::max<std::int64_t>(0, n.node->gpu_capacity);
  return out;
}

}  // namespace kubex::decide::packing
