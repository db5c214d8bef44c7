// The consolidation planner at scale (issue 17): 1,000 nodes × 8 GPUs × 20,000 fractional pods (seeded), with a
// realistic mix of fraction sizes and some scheduling constraints (zones, a dedicated taint, node selectors,
// required node affinity, CPU/memory requests). Reports, as Markdown with medians of --reps runs:
//   * plan time: decide::packing::plan() with every candidate evaluated (what `kubex plan consolidation` shows)
//     and with stop_at_first_feasible (what the controller needs per reconcile), and drain_sequence();
//   * GPUs reclaimable: GPUs still in use after the drain sequence against the ⌈Σ fractions⌉ lower bound;
//   * side by side on the same pool, run as successive drains against a KAI-like scheduler (per-GPU sums ≤ 1.00,
//     gpupack fullest-GPU-first, node selector / affinity / taints / CPU / memory): kubex's planner vs a
//     GPU-capacity-only, node-level planner (the seed's documented behaviour: a node looks drainable when its
//     pods fit the other nodes' free GPU capacity, ignoring per-GPU packing and scheduling constraints). For
//     each drain: does at least one evicted pod find no place at all (stranded, Pending), and does a pod need
//     an empty node (the drain undoes itself)?
// With --trace [DIR], the same on a real production trace instead (trace_pool.h).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "decide/packing/constraints.h"
#include "decide/packing/plan.h"
#include "drains.h"
#include "trace_pool.h"

namespace pk = kubex::decide::packing;
using kubex::decide::Hundredths;
using namespace kubex::bench::packing;

namespace {

constexpr std::int64_t kGi = 1024LL * 1024 * 1024;

struct Config {
  int nodes = 1000, gpus = 8, pods = 20000, reps = 5, threshold = 75;
  unsigned seed = 17;
};

// The bench's own cluster: where each pod really is (node, GPU), as a KAI-like scheduler keeps it.
struct Cluster {
  std::vector<pk::PoolNode> nodes;
  std::vector<pk::PoolPod> pods;             // node = "" when Pending (stranded)
  std::vector<int> gpu;                      // per pod: its GPU index
  std::vector<std::vector<Hundredths>> occ;  // per node, per GPU
  std::vector<std::int64_t> cpu, mem;        // per node, requested
  std::vector<bool> gone;                    // drained nodes: removed by the cluster autoscaler
  std::map<std::string, int> index;

  Hundredths allocated(int n) const {
    Hundredths a = 0;
    for (auto g : occ[static_cast<std::size_t>(n)]) a += g;
    return a;
  }
  void put(std::size_t p, int n, int g) {
    auto& pod = pods[p];
    pod.node = nodes[static_cast<std::size_t>(n)].name;
    pod.gpu_group = pod.node + "-g" + std::to_string(g);  // KAI labels the shared GPU's group
    gpu[p] = g;
    occ[static_cast<std::size_t>(n)][static_cast<std::size_t>(g)] += pod.fraction;
    cpu[static_cast<std::size_t>(n)] += pod.cpu_millis;
    mem[static_cast<std::size_t>(n)] += pod.memory_bytes;
  }
  void take(std::size_t p) {
    int n = index.at(pods[p].node);
    occ[static_cast<std::size_t>(n)][static_cast<std::size_t>(gpu[p])] -= pods[p].fraction;
    cpu[static_cast<std::size_t>(n)] -= pods[p].cpu_millis;
    mem[static_cast<std::size_t>(n)] -= pods[p].memory_bytes;
    pods[p].node.clear();
    pods[p].gpu_group.clear();
  }
  pk::Pool pool() const {
    pk::Pool out;
    for (std::size_t n = 0; n < nodes.size(); ++n)
      if (!gone[n]) out.nodes.push_back(nodes[n]);
    for (const auto& p : pods)
      if (!p.node.empty()) out.pods.push_back(p);
    return out;
  }
  Stranded drain(int node);  // drains.h
};

Cluster generate(const Config& c) {
  std::mt19937 rng(c.seed);
  auto uni = [&](double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng); };
  auto chance = [&](double p) { return std::bernoulli_distribution(p)(rng); };
  Cluster k;
  std::vector<double> load;
  for (int i = 0; i < c.nodes; ++i) {
    pk::PoolNode n;
    char name[32];
    std::snprintf(name, sizeof name, "gpu-%04d", i);
    n.name = name;
    n.gpu_capacity = c.gpus;
    n.cpu_millis = 64'000;
    n.memory_bytes = 512 * kGi;
    n.labels = {{"pool", "a100"}, {"zone", "z" + std::to_string(i % 4)}};
    if (chance(0.1)) n.taints.push_back({"dedicated", "ml", "NoSchedule"});
    n.ready = true;
    k.index[n.name] = i;
    k.nodes.push_back(n);
    k.occ.emplace_back(static_cast<std::size_t>(c.gpus), 0);
    k.cpu.push_back(0);
    k.mem.push_back(0);
    k.gone.push_back(false);
    load.push_back(uni(0.05, 1.0));  // nodes are used unevenly: fractions spread thin on some
  }
  // A realistic mix of fraction sizes (mean ≈ 0.22 GPU): many small inference pods, some halves.
  const std::vector<Hundredths> sizes = {5, 10, 15, 20, 25, 30, 40, 50, 70};
  std::discrete_distribution<int> size_pick({8, 14, 10, 16, 20, 10, 8, 10, 4});
  std::discrete_distribution<int> node_pick(load.begin(), load.end());
  for (int i = 0; i < c.pods; ++i) {
    pk::PoolPod p;
    p.ns = "ml-" + std::to_string(i % 20);
    char name[32];
    std::snprintf(name, sizeof name, "infer-%05d", i);
    p.name = name;
    p.fraction = sizes[static_cast<std::size_t>(size_pick(rng))];
    p.cpu_millis = 500 * std::uniform_int_distribution<int>(1, 8)(rng);
    p.memory_bytes = 2 * kGi * std::uniform_int_distribution<int>(1, 16)(rng);
    if (chance(0.02)) p.unmovable = "do-not-disrupt";
    for (int attempt = 0; attempt < 50; ++attempt) {
      int n = node_pick(rng);
      auto un = static_cast<std::size_t>(n);
      if (k.cpu[un] + p.cpu_millis > k.nodes[un].cpu_millis || k.mem[un] + p.memory_bytes > k.nodes[un].memory_bytes)
        continue;
      int start = std::uniform_int_distribution<int>(0, c.gpus - 1)(rng), g = -1;
      for (int d = 0; d < c.gpus && g < 0; ++d)
        if (k.occ[un][static_cast<std::size_t>((start + d) % c.gpus)] + p.fraction <= 100) g = (start + d) % c.gpus;
      if (g < 0) continue;
      const auto& node = k.nodes[un];
      if (!node.taints.empty() || chance(0.2)) p.tolerations.push_back({"dedicated", "Equal", "ml", "NoSchedule"});
      if (chance(0.15)) p.node_selector = {{"zone", node.labels.at("zone")}};
      if (chance(0.05)) {
        std::string z = node.labels.at("zone"), other = z == "z0" ? "z1" : "z0";
        p.required_affinity.push_back(pk::NodeSelectorTerm{{{"zone", "In", {z, other}}}, {}});
      }
      k.pods.push_back(p);
      k.gpu.push_back(-1);
      k.put(k.pods.size() - 1, n, g);
      break;
    }
  }
  return k;
}

// ---------------------------------------------------------------- successive drains against a KAI-like scheduler

// Evicts the GPU pods of `node`, removes the node (the cluster autoscaler scales an empty node down: that is what
// consolidation is for) and reschedules each pod (largest first) the way KAI's gpupack does: the fullest GPU that
// still fits, then the fullest node, on any remaining pool node that passes the pod's scheduling constraints.
// Returns the pods that found no place (stranded, Pending until a node is added back).
int drain(Cluster& k, int node) {
  std::vector<std::size_t> evicted;
  for (std::size_t p = 0; p < k.pods.size(); ++p)
    if (k.pods[p].node == k.nodes[static_cast<std::size_t>(node)].name) evicted.push_back(p);
  for (auto p : evicted) k.take(p);
  k.gone[static_cast<std::size_t>(node)] = true;
  std::vector<Hundredths> alloc(k.nodes.size());
  for (std::size_t n = 0; n < k.nodes.size(); ++n) alloc[n] = k.allocated(static_cast<int>(n));
  std::sort(evicted.begin(), evicted.end(), [&](auto a, auto b) { return k.pods[a].fraction > k.pods[b].fraction; });
  int stranded = 0;
  for (auto p : evicted) {
    int best_n = -1, best_g = -1;
    Hundredths best_occ = -1;
    for (std::size_t n = 0; n < k.nodes.size(); ++n) {
      if (k.gone[n]) continue;
      if (pk::first_failed_check(k.pods[p], k.nodes[n], k.cpu[n], k.mem[n]) != pk::Check::kNone) continue;
      for (std::size_t g = 0; g < k.occ[n].size(); ++g) {
        Hundredths o = k.occ[n][g];
        if (o + k.pods[p].fraction > 100) continue;
        if (o > best_occ || (o == best_occ && alloc[n] > alloc[static_cast<std::size_t>(best_n)])) {
          best_occ = o;
          best_n = static_cast<int>(n);
          best_g = static_cast<int>(g);
        }
      }
    }
    if (best_n < 0) {
      ++stranded;
      continue;
    }
    k.put(p, best_n, best_g);
    alloc[static_cast<std::size_t>(best_n)] += k.pods[p].fraction;
  }
  return stranded;
}

Stranded Cluster::drain(int node) { return {::drain(*this, node), 0}; }

}  // namespace

int main(int argc, char** argv) {
  Config c;
  CLI::App app{"Consolidation planner benchmark (decide/packing)"};
  app.add_option("--nodes", c.nodes)->capture_default_str();
  app.add_option("--gpus", c.gpus, "GPUs per node")->capture_default_str();
  app.add_option("--pods", c.pods, "fractional pods")->capture_default_str();
  app.add_option("--reps", c.reps, "repetitions of each timing (the median is printed)")->capture_default_str();
  app.add_option("--threshold", c.threshold, "utilizationThresholdPercent")->capture_default_str();
  app.add_option("--seed", c.seed)->capture_default_str();
  // Trace mode (trace_pool.h): the Alibaba GPU trace instead of the synthetic pool.
  TraceConfig tc;
  tc.pod_lists = {"openb_pod_list_default.csv", "openb_pod_list_gpushare40.csv"};
  std::string trace_dir;
  auto* trace = app.add_option("--trace", trace_dir,
                               "run on the Alibaba GPU trace (cluster-trace-gpu-v2023) in DIR (default " +
                                   default_trace_dir() + ")")
                    ->expected(0, 1);
  app.add_option("--trace-pods", tc.pod_lists, "pod lists in the trace folder, each reported on its own")
      ->capture_default_str();
  app.add_option("--replicate", tc.replicate, "trace mode: copies of every node and pod")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (trace->count() > 0) {
    tc.dir = trace_dir.empty() ? default_trace_dir() : trace_dir;
    tc.reps = c.reps;
    tc.threshold = c.threshold;
    return run_trace(tc);
  }

  Cluster k = generate(c);
  pk::Pool pool = k.pool();
  pk::Options opts;
  opts.threshold_percent = c.threshold;
  Hundredths total = 0;
  for (const auto& p : pool.pods) total += p.fraction;

  pk::Plan full;
  double t_full = time_ms(c.reps, [&] { full = pk::plan(pool, opts); });
  pk::Options first = opts;
  first.stop_at_first_feasible = true;
  double t_first = time_ms(c.reps, [&] { (void)pk::plan(pool, first); });
  pk::DrainSequence seq;
  double t_seq = time_ms(std::max(1, c.reps / 2), [&] { seq = pk::drain_sequence(pool, opts); });
  std::size_t candidates = 0, feasible = 0;
  for (const auto& cand : full.candidates) {
    candidates += cand.candidate;
    feasible += cand.feasible;
  }

  std::printf("### Consolidation planner (%d nodes × %d GPUs, %zu fractional pods, seed %u, threshold %d%%)\n\n",
              c.nodes, c.gpus, pool.pods.size(), c.seed, c.threshold);
  std::printf("Pool: %lld GPUs, %s allocated (⌈Σ fractions⌉ = %lld), %zu candidates, %zu feasible.\n\n",
              static_cast<long long>(full.gpu_capacity), pk::format_allocated(full.gpu_allocated).c_str(),
              static_cast<long long>(seq.lower_bound_gpus), candidates, feasible);
  std::printf("| measure (median of %d) | value |\n|---|---|\n", c.reps);
  std::printf("| plan(), every candidate evaluated (`kubex plan consolidation`) | %.1f ms |\n", t_full);
  std::printf("| plan(), up to the first feasible candidate (one controller reconcile) | %.1f ms |\n", t_first);
  std::printf("| drain_sequence() (%zu drains) | %.1f ms |\n", seq.steps.size(), t_seq);
  std::printf("| GPUs in use after the sequence / ⌈Σ fractions⌉ bound | %lld / %lld (%.2f×) |\n",
              static_cast<long long>(seq.gpus_in_use_after), static_cast<long long>(seq.lower_bound_gpus),
              seq.lower_bound_gpus ? double(seq.gpus_in_use_after) / double(seq.lower_bound_gpus) : 0.0);
  std::printf("| GPUs freed by the sequence / at most reclaimable (capacity − bound) | %lld / %lld |\n\n",
              static_cast<long long>(seq.gpus_freed), static_cast<long long>(full.estimated_reclaimable_gpus));

  std::printf("Successive drains on the same pool; after each, the drained node is removed and a KAI-like scheduler "
              "places the evicted pods:\n\n");
  std::printf("| threshold | planner | drains | drains stranding ≥ 1 pod | pods stranded (Pending) | nodes left | "
              "run time |\n|---|---|---|---|---|---|---|\n");
  std::vector<int> thresholds = {c.threshold};
  for (int t : {90, 100})
    if (t != c.threshold) thresholds.push_back(t);
  for (int t : thresholds) {
    auto row = [&](const char* name, const Outcome& o) {
      std::printf("| %d%% | %s | %d | %d (%.1f%%) | %d | %lld | %.1f s |\n", t, name, o.drains, o.stranding,
                  o.drains ? 100.0 * o.stranding / o.drains : 0.0, o.stranded_pods,
                  static_cast<long long>(o.nodes_in_use_after), o.seconds);
    };
    row("kubex (per-GPU best fit + CON-6a)", run_drains(k, t, kubex_choice<Cluster>));
    row("GPU-capacity-only, node-level (seed)", run_drains(k, t, baseline_choice<Cluster>));
  }
  std::printf("\n");
  return 0;
}
