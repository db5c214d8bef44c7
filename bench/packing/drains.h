// The successive-drains loop of bench-packing, shared by the synthetic pool (packing_bench.cpp) and the
// production trace (trace_pool.cpp): from one pool, drain one node after the other, each chosen by a planner
// (kubex's decide::packing::plan(), or a GPU-capacity-only node-level baseline like the seed's), and after each
// drain let the cluster's own KAI-like scheduler place the evicted pods. A pod with no place left stays Pending:
// the drain stranded it.
//
// A cluster type K provides: `nodes` (std::vector<PoolNode>), `pods` (std::vector<PoolPod>, node "" = Pending),
// `index` (node name → position in `nodes`), `gone` (per node: drained and removed), `allocated(n)` (GPU
// hundredths on node n), `pool()` (the live nodes and placed pods as a decide::packing::Pool) and `drain(n)`
// (evict node n's pods, remove the node, reschedule; returns the pods left Pending).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "decide/packing/plan.h"

namespace kubex::bench::packing {

namespace pk = kubex::decide::packing;
using kubex::decide::Hundredths;

// Pods a drain left Pending: GPU pods (the planner's business) and pods without a GPU (which only a drain
// that removes the node moves, as the cluster autoscaler does when it scales the emptied node down).
// `woken`: nodes without any GPU allocation before the drain that hold one after it (the drain undid itself
// there: an empty node is in use again).
struct Stranded {
  int gpu = 0, cpu_only = 0, woken = 0;
};

struct Outcome {
  int drains = 0, stranding = 0, stranded_pods = 0, stranded_cpu_only = 0, waking = 0;
  std::int64_t nodes_in_use_after = 0;  // nodes not drained
  std::int64_t gpus_in_use_after = 0;   // Σ GPU capacity of the nodes still holding a GPU allocation
  double seconds = 0;
};

// The seed's planner: a node is drainable when its movable GPU pods fit, by size alone, into the other non-empty
// Ready nodes' free GPU capacity summed per node (node-level best fit, no per-GPU packing, no CON-6a).
template <class K>
int baseline_choice(const K& k, int threshold) {
  std::vector<Hundredths> alloc(k.nodes.size());
  std::vector<std::vector<std::size_t>> on(k.nodes.size());
  for (std::size_t p = 0; p < k.pods.size(); ++p)
    if (!k.pods[p].node.empty() && k.pods[p].has_gpu())
      on[static_cast<std::size_t>(k.index.at(k.pods[p].node))].push_back(p);
  for (std::size_t n = 0; n < k.nodes.size(); ++n) alloc[n] = k.allocated(static_cast<int>(n));
  std::vector<std::size_t> cands;
  for (std::size_t n = 0; n < k.nodes.size(); ++n) {
    if (k.gone[n]) continue;
    bool movable = !on[n].empty();
    for (auto p : on[n]) movable = movable && k.pods[p].unmovable.empty();
    if (movable && alloc[n] < threshold * k.nodes[n].gpu_capacity) cands.push_back(n);
  }
  std::sort(cands.begin(), cands.end(), [&](auto a, auto b) {
    return alloc[a] != alloc[b] ? alloc[a] < alloc[b] : k.nodes[a].name < k.nodes[b].name;
  });
  for (auto c : cands) {
    std::vector<Hundredths> free(k.nodes.size(), 0);
    for (std::size_t n = 0; n < k.nodes.size(); ++n)
      if (n != c && !k.gone[n] && alloc[n] > 0) free[n] = k.nodes[n].gpu_capacity * 100 - alloc[n];
    std::vector<Hundredths> sizes;
    for (auto p : on[c]) sizes.push_back(k.pods[p].gpu());
    std::sort(sizes.rbegin(), sizes.rend());
    bool fits = true;
    for (auto s : sizes) {
      std::size_t best = k.nodes.size();
      for (std::size_t n = 0; n < free.size(); ++n)
        if (free[n] >= s && (best == k.nodes.size() || free[n] < free[best])) best = n;
      if (best == k.nodes.size()) {
        fits = false;
        break;
      }
      free[best] -= s;
    }
    if (fits) return static_cast<int>(c);
  }
  return -1;
}

template <class K>
int kubex_choice(const K& k, int threshold) {
  pk::Options o;
  o.threshold_percent = threshold;
  o.stop_at_first_feasible = true;
  pk::Plan p = pk::plan(k.pool(), o);
  const pk::Candidate* c = p.first_feasible();
  return c == nullptr ? -1 : k.index.at(c->node);
}

template <class K, class Choose>
Outcome run_drains(K k, int threshold, Choose choose) {
  Outcome o;
  auto t0 = std::chrono::steady_clock::now();
  for (int step = 0; step < static_cast<int>(k.nodes.size()); ++step) {
    int n = choose(k, threshold);
    if (n < 0) break;
    Stranded s = k.drain(n);
    ++o.drains;
    o.stranding += s.gpu > 0;
    o.stranded_pods += s.gpu;
    o.stranded_cpu_only += s.cpu_only;
    o.waking += s.woken > 0;
  }
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (std::size_t n = 0; n < k.nodes.size(); ++n) {
    if (k.gone[n]) continue;
    o.nodes_in_use_after++;
    if (k.allocated(static_cast<int>(n)) > 0) o.gpus_in_use_after += k.nodes[n].gpu_capacity;
  }
  return o;
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : (v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2);
}

template <class F>
double time_ms(int reps, F f) {
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return median(ms);
}

}  // namespace kubex::bench::packing
