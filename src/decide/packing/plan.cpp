#include "decide/packing/plan.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <tuple>

#include "decide/packing/constraints.h"
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

bool placement_order(const PoolPod* a, const PoolPod* b) {
  // CON-6: whole-GPU pods first (largest first), then fractions (largest first), ties by pod name.
  bool aw = a->fraction == 0, bw = b->fraction == 0;
  if (aw != bw) return aw;
  if (a->gpu() != b->gpu()) return a->gpu() > b->gpu();
  return std::tie(a->name, a->ns) < std::tie(b->name, b->ns);
}

// CON-6, CON-6a for one candidate: fills feasible, reason and placements.
void evaluate(const State& s, std::size_t cand, const std::vector<std::size_t>& destinations,
              const PlacementStrategy& strategy, Candidate& out) {
  std::vector<std::size_t> dests;
  for (std::size_t d : destinations)
    if (d != cand) dests.push_back(d);
  std::vector<std::vector<Hundredths>> gpus;
  std::vector<std::int64_t> cpu, mem;
  gpus.reserve(dests.size());
  for (std::size_t d : dests) {
    gpus.push_back(s.nodes[d].gpus);
    cpu.push_back(s.nodes[d].cpu_used);
    mem.push_back(s.nodes[d].memory_used);
  }
  std::vector<const PoolPod*> moving;
  for (std::size_t i : s.nodes[cand].pods)
    if (s.pods[i].pod->has_gpu()) moving.push_back(s.pods[i].pod);
  std::sort(moving.begin(), moving.end(), placement_order);

  std::vector<DestinationView> views;
  std::vector<std::size_t> view_dest;
  for (const PoolPod* pod : moving) {
    views.clear();
    view_dest.clear();
    Check best = Check::kNodeSelector;
    bool any = false, constraint_failed = false;
    std::string best_taint, taint;
    for (std::size_t k = 0; k < dests.size(); ++k) {
      Check c = first_failed_check(*pod, *s.nodes[dests[k]].node, cpu[k], mem[k], &taint);
      if (c == Check::kNone) {
        views.push_back({&s.nodes[dests[k]].node->name, &gpus[k]});
        view_dest.push_back(k);
        c = Check::kGpu;  // what it fails on if the strategy finds no room
      } else {
        constraint_failed = true;
      }
      if (!any || c > best) {
        best = c;
        best_taint = taint;
        any = true;
      }
    }
    std::optional<Choice> choice = strategy.choose(views, pod->fraction, pod->fraction > 0 ? 0 : pod->whole_gpus);
    if (!choice) {
      out.feasible = false;
      out.placements.clear();
      out.reason = "pod " + pod->key() + " (" + format_gpu(pod->gpu()) + ") does not fit";
      // CON-6a: name the constraint of the best destination; a plain GPU shortage keeps CON-6's wording.
      if (constraint_failed) out.reason += ": " + check_name(best, best_taint);
      return;
    }
    std::size_t k = view_dest[choice->destination];
    for (int g : choice->gpus)
      gpus[k][static_cast<std::size_t>(g)] += pod->fraction > 0 ? pod->fraction : kOneGpu;
    cpu[k] += pod->cpu_millis;
    mem[k] += pod->memory_bytes;
    out.placements.push_back({pod->ns, pod->name, pod->gpu(), s.nodes[dests[k]].node->name, choice->gpus});
  }
  out.feasible = true;
  out.reason.clear();
}

}  // namespace

State build_state(const Pool& pool) {
  State s;
  std::vector<const PoolNode*> nodes;
  for (const auto& n : pool.nodes) nodes.push_back(&n);
  std::sort(nodes.begin(), nodes.end(), [](const PoolNode* a, const PoolNode* b) { return a->name < b->name; });
  std::map<std::string_view, std::size_t> index;
  for (const PoolNode* n : nodes) {
    if (index.count(n->name)) continue;  // a duplicate name is ignored
    index.emplace(n->name, s.nodes.size());
    s.nodes.push_back(NodeState{n, {}, false, 0, 0, 0, {}});
  }
  for (const auto& p : pool.pods) {
    auto it = index.find(p.node);
    if (it == index.end()) continue;
    NodeState& n = s.nodes[it->second];
    n.pods.push_back(s.pods.size());
    s.pods.push_back(PodState{&p, {}});
    n.allocated += p.gpu();
    n.cpu_used += p.cpu_millis;
    n.memory_used += p.memory_bytes;
  }
  for (auto& n : s.nodes) {
    std::vector<const PoolPod*> pods;
    for (std::size_t i : n.pods) pods.push_back(s.pods[i].pod);
    Occupancy occ = occupancy(n.node->gpu_capacity, pods);
    n.gpus = std::move(occ.gpus);
    n.over_capacity = occ.over_capacity;
    for (std::size_t k = 0; k < n.pods.size(); ++k) s.pods[n.pods[k]].gpus = std::move(occ.pod_gpus[k]);
  }
  return s;
}

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
                not_destination(n)};
    u.destination = u.not_destination.empty();
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
    plan.candidates.push_back(std::move(c));
  }
  if (!found) {
    std::string why = "no node below " + std::to_string(options.threshold_percent) + "% with movable GPU pods";
    if (!candidates.empty()) {
      const Candidate& best = plan.candidates.front();
      why = "best candidate " + best.node + " (" + format_percent(best.utilization_centi_percent) + "): " + best.reason;
    }
    plan.message = "pool: " + std::to_string(plan.pool_nodes) + " nodes, " + std::to_string(plan.gpu_capacity) +
                   " GPUs, " + format_allocated(plan.gpu_allocated) + " allocated; " + why;
  }
  return plan;
}

void apply_drain(State& s, const Candidate& drained) {
  auto find_node = [&](const std::string& name) -> NodeState* {
    auto it = std::lower_bound(s.nodes.begin(), s.nodes.end(), name,
                               [](const NodeState& n, const std::string& v) { return n.node->name < v; });
    return it != s.nodes.end() && it->node->name == name ? &*it : nullptr;
  };
  NodeState* from = find_node(drained.node);
  if (from == nullptr) return;
  for (const Placement& pl : drained.placements) {
    NodeState* to = find_node(pl.to);
    if (to == nullptr) continue;
    for (auto it = from->pods.begin(); it != from->pods.end(); ++it) {
      PodState& ps = s.pods[*it];
      if (ps.pod->ns != pl.ns || ps.pod->name != pl.name) continue;
      from->allocated -= ps.pod->gpu();
      from->cpu_used -= ps.pod->cpu_millis;
      from->memory_used -= ps.pod->memory_bytes;
      for (int g : pl.gpus) to->gpus[static_cast<std::size_t>(g)] += ps.pod->fraction > 0 ? ps.pod->fraction : kOneGpu;
      to->allocated += ps.pod->gpu();
      to->cpu_used += ps.pod->cpu_millis;
      to->memory_used += ps.pod->memory_bytes;
      ps.gpus = pl.gpus;
      to->pods.push_back(*it);
      from->pods.erase(it);
      break;
    }
  }
  std::fill(from->gpus.begin(), from->gpus.end(), 0);
  from->over_capacity = false;
}

}  // namespace detail

std::int64_t NodeUsage::utilization_centi_percent() const {
  return gpu_capacity <= 0 ? 0 : allocated * 100 / gpu_capacity;
}

const Candidate* Plan::first_feasible() const {
  for (const auto& c : candidates)
    if (c.candidate && c.feasible) return &c;
  return nullptr;
}

Plan plan(const Pool& pool, const Options& options) {
  return detail::plan_state(detail::build_state(pool), options);
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
  detail::State s = detail::build_state(pool);
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
