// The working state of a pool (state.h) and the placement of one pod on destinations: CON-3 occupancy with its
// compute modes, CON-2a caps, CON-5a products, CON-6 placement through the strategy, CON-6a constraints.
#include <algorithm>
#include <map>
#include <string_view>

#include "decide/packing/gpu_device.h"
#include "decide/packing/occupancy.h"
#include "decide/packing/state.h"

namespace kubex::decide::packing::detail {

State build_state(const Pool& pool, const MemoryReserve& reserve) {
  State s;
  std::vector<const PoolNode*> nodes;
  for (const auto& n : pool.nodes) nodes.push_back(&n);
  std::sort(nodes.begin(), nodes.end(), [](const PoolNode* a, const PoolNode* b) { return a->name < b->name; });
  std::map<std::string_view, std::size_t> index;
  for (const PoolNode* n : nodes) {
    if (index.count(n->name)) continue;  // a duplicate name is ignored
    index.emplace(n->name, s.nodes.size());
    NodeState ns;
    ns.node = n;
    ns.cap = gpu_cap(*n, reserve);
    ns.product = gpu_product(*n);
    s.nodes.push_back(std::move(ns));
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
    n.gpu_modes.assign(n.gpus.size(), "");
    n.over_capacity = occ.over_capacity;
    for (std::size_t k = 0; k < n.pods.size(); ++k) {
      const PoolPod& p = *s.pods[n.pods[k]].pod;
      if (p.fraction > 0) {
        for (int g : occ.pod_gpus[k]) {
          std::string& m = n.gpu_modes[static_cast<std::size_t>(g)];
          m = joined_mode(m, compute_mode(p));
        }
      }
      s.pods[n.pods[k]].gpus = std::move(occ.pod_gpus[k]);
    }
  }
  return s;
}

Destinations destinations_of(const State& s, const std::vector<std::size_t>& nodes) {
  Destinations d;
  d.nodes = nodes;
  for (std::size_t i : nodes) {
    d.gpus.push_back(s.nodes[i].gpus);
    d.modes.push_back(s.nodes[i].gpu_modes);
    d.cpu.push_back(s.nodes[i].cpu_used);
    d.memory.push_back(s.nodes[i].memory_used);
  }
  return d;
}

namespace {

std::vector<DestinationView> views_of(const State& s, const Destinations& d, const std::vector<std::size_t>& which,
                                      bool with_modes, bool with_cap) {
  std::vector<DestinationView> views;
  views.reserve(which.size());
  for (std::size_t k : which) {
    const NodeState& n = s.nodes[d.nodes[k]];
    views.push_back({&n.node->name, &d.gpus[k], with_cap ? n.cap : kOneGpu, with_modes ? &d.modes[k] : nullptr});
  }
  return views;
}

}  // namespace

PlaceResult place(const State& s, Destinations& d, const PoolPod& pod, Hundredths fraction, std::int64_t whole,
                  const std::string* product, const PlacementStrategy& strategy) {
  PlaceResult r;
  Check best = Check::kGpuModel;
  bool any = false;
  std::string taint;
  std::vector<std::size_t> open;  // destinations that pass every scheduling constraint
  for (std::size_t k = 0; k < d.nodes.size(); ++k) {
    const NodeState& n = s.nodes[d.nodes[k]];
    Check c = Check::kGpuModel;
    if (product == nullptr || n.product == *product) {
      c = first_failed_check(pod, *n.node, d.cpu[k], d.memory[k], &taint);
      if (c == Check::kNone) {
        open.push_back(k);
        c = Check::kGpu;  // what it fails on if the strategy finds no room
      } else {
        r.constraint_failed = true;
      }
    } else {
      r.constraint_failed = true;
    }
    if (!any || c > best) {
      best = c;
      r.taint = c == Check::kTaint ? taint : std::string();
      any = true;
    }
  }
  const std::string_view mode = compute_mode(pod);
  const std::int64_t need_whole = fraction > 0 ? 0 : whole;
  std::optional<Choice> choice =
      strategy.choose(views_of(s, d, open, true, true), fraction, need_whole, mode);
  if (!choice) {
    r.failed = any ? best : Check::kGpu;
    if (r.failed == Check::kGpu && fraction > 0) {  // what kept it out: the modes (CON-5b) or the reserve (CON-2a)
      if (strategy.choose(views_of(s, d, open, false, true), fraction, 0, mode)) {
        r.failed = Check::kComputeMode;
      } else if (strategy.choose(views_of(s, d, open, true, false), fraction, 0, mode)) {
        r.failed = Check::kReserve;
      }
    }
    return r;
  }
  const std::size_t k = open[choice->destination];
  for (int g : choice->gpus) {
    const auto gi = static_cast<std::size_t>(g);
    d.gpus[k][gi] += fraction > 0 ? fraction : kOneGpu;
    if (fraction > 0) d.modes[k][gi] = joined_mode(d.modes[k][gi], mode);
  }
  d.cpu[k] += pod.cpu_millis;
  d.memory[k] += pod.memory_bytes;
  r.placed = true;
  r.destination = k;
  r.gpus = std::move(choice->gpus);
  return r;
}

std::string does_not_fit(const PoolPod& pod, Hundredths size, const PlaceResult& r) {
  std::string out = "pod " + pod.key() + " (" + format_gpu(size) + ") does not fit";
  // CON-6a: name the constraint of the best destination; a plain GPU shortage keeps CON-6's wording.
  if (r.failed != Check::kGpu || r.constraint_failed) out += ": " + check_name(r.failed, r.taint);
  return out;
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
      for (int g : pl.gpus) {
        const auto gi = static_cast<std::size_t>(g);
        to->gpus[gi] += ps.pod->fraction > 0 ? ps.pod->fraction : kOneGpu;
        if (ps.pod->fraction > 0) to->gpu_modes[gi] = joined_mode(to->gpu_modes[gi], compute_mode(*ps.pod));
      }
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
  std::fill(from->gpu_modes.begin(), from->gpu_modes.end(), "");
  from->over_capacity = false;
}

}  // namespace kubex::decide::packing::detail
