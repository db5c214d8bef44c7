// bench-packing's trace mode: see trace_pool.h. Data: Alibaba Cluster Trace Program, cluster-trace-gpu-v2023
// (CC BY 4.0), used as input only: nothing here is tuned to it.
//
// Modelling choices (docs/performance.md says them too):
//   * a pod is a fraction when num_gpu == 1 and gpu_milli < 1000: gpu_milli / 10 hundredths, rounded UP to the
//     next hundredth (every gpu_milli in the published lists is a multiple of 10, so nothing is rounded);
//     otherwise it takes num_gpu whole GPUs (0 = a pod without GPU, which still takes CPU and memory);
//   * a non-empty gpu_spec ("A|B") is a required node affinity `nvidia.com/gpu.product In (A, B)`;
//   * every pod has a controller owner (Deployment-like, movable): the trace has no owner, PDB or annotation;
//   * placement, and rescheduling after each drain, is kubex-sim's KAI scheduler code itself
//     (sim::cluster::sched::place with Strategy::kKai, KAI v0.13's node order, SPEC SIM-9): a fraction goes to a
//     node with a GPU group it fits in, then the node with the fewest free GPUs, then by name, and there to the
//     fullest group that fits (a new group only when none does); whole GPUs on the node with the fewest free GPUs
//     that has enough, then by name; pods without GPU on the fewest free millicores (KAI's CPU binpack), GPU-less
//     nodes first; CPU, memory and 110 pods per node honoured; every GPU group holds one reservation pod (it
//     counts as a pod, with no requests), as KAI's binder creates;
//   * a drained node is removed (the cluster autoscaler scales the emptied node down) and all its pods, those
//     without GPU too, are placed again; the scheduler sees only the pool's nodes (one pool per GPU model).
#include "trace_pool.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "decide/packing/gpu_device.h"
#include "decide/packing/plan.h"
#include "drains.h"
#include "kubex_paths.h"
#include "sim/cluster/sched_placement.h"

namespace kubex::bench::packing {
namespace {

namespace sched = kubex::sim::cluster::sched;

constexpr const char* kProduct = "nvidia.com/gpu.product";
constexpr const char* kMemory = "nvidia.com/gpu.memory";
constexpr const char* kNamespace = "openb";
constexpr std::int64_t kMiB = 1024LL * 1024;
constexpr const char* kAttribution = "Alibaba Cluster Trace Program, cluster-trace-gpu-v2023 (CC BY 4.0)";

// MiB per GPU of the trace's public models; G1, G2 and G3 are undisclosed: no memory label.
std::optional<std::int64_t> model_memory_mib(const std::string& model) {
  static const std::map<std::string, std::int64_t> known = {
      {"T4", 15360}, {"P100", 16384}, {"V100M16", 16384}, {"V100M32", 32768}, {"A10", 23028}};
  auto it = known.find(model);
  if (it == known.end()) return std::nullopt;
  return it->second;
}

// CON-2a's per-GPU cap in hundredths with the default reserve (3 %, 256 MiB), from the planner's own rule
// (decide/packing/gpu_device.h: r rounded up to a whole MiB, so a T4 gets SPEC's 0.96); 1.00 without M.
Hundredths cap_of(const std::string& model) {
  return pk::gpu_cap(model_memory_mib(model).value_or(0), pk::MemoryReserve{});
}

std::string thousands(long long v) {
  std::string s = std::to_string(v < 0 ? -v : v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return v < 0 ? "-" + s : s;
}

std::string ratio(long long a, long long b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f×", b > 0 ? double(a) / double(b) : 0.0);
  return buf;
}

// ---------------------------------------------------------------- reading the trace

struct Csv {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::size_t col(const std::string& name) const {
    auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) throw std::runtime_error("no column " + name);
    return static_cast<std::size_t>(it - header.begin());
  }
};

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, sep)) out.push_back(cell);
  if (!line.empty() && line.back() == sep) out.emplace_back();
  return out;
}

Csv read_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  Csv c;
  std::string line;
  for (bool first = true; std::getline(in, line); first = false) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    (first ? c.header : c.rows.emplace_back()) = split(line, ',');
  }
  return c;
}

std::int64_t num(const std::string& s) { return s.empty() ? 0 : std::stoll(s); }

// ---------------------------------------------------------------- the cluster as kubex-sim's KAI scheduler keeps it

struct TraceCluster {
  std::vector<pk::PoolNode> nodes;            // sorted by name
  std::vector<std::string> model;             // per node: its GPU model
  std::vector<pk::PoolPod> pods;              // node "" = Pending
  std::vector<sched::PlacementPod> ppods;     // per pod: what the scheduler reads
  std::vector<std::vector<int>> pod_gpus;     // per pod: GPU indexes (one for a fraction, k for k whole GPUs)
  std::vector<std::vector<Hundredths>> occ;   // per node, per GPU
  std::vector<std::vector<char>> whole;       // per node, per GPU: held by a whole-GPU pod
  std::vector<sched::PlacementNode> pnodes;   // per node: what the scheduler reads
  std::vector<sched::NodeUse> uses;           // per node: what the pods bound to it hold (sched_ledger's view)
  std::vector<bool> gone;
  std::map<std::string, int> index;
  std::vector<sched::NodeSlot> slots;          // the scheduler's view of the live nodes (pointers into this object)
  const TraceCluster* slots_of = nullptr;      // the object `slots` points into (a copy rebuilds them)
  bool slots_dirty = true;

  void add_node(const pk::PoolNode& n, const std::string& m) {
    index[n.name] = static_cast<int>(nodes.size());
    nodes.push_back(n);
    model.push_back(m);
    occ.emplace_back(static_cast<std::size_t>(n.gpu_capacity), 0);
    whole.emplace_back(static_cast<std::size_t>(n.gpu_capacity), 0);
    sched::PlacementNode pn;
    pn.name = n.name;
    pn.labels = n.labels;
    pn.cpu_milli = n.cpu_millis;
    pn.memory_bytes = n.memory_bytes;
    pn.gpus = n.gpu_capacity;
    pnodes.push_back(pn);
    uses.emplace_back();
    gone.push_back(false);
    slots_dirty = true;
  }
  std::size_t add_pod(const pk::PoolPod& p, const sched::PlacementPod& pp) {
    pods.push_back(p);
    ppods.push_back(pp);
    pod_gpus.emplace_back();
    return pods.size() - 1;
  }
  Hundredths allocated(int n) const {
    Hundredths a = 0;
    for (auto g : occ[static_cast<std::size_t>(n)]) a += g;
    return a;
  }
  pk::Pool pool() const {
    pk::Pool out;
    for (std::size_t n = 0; n < nodes.size(); ++n)
      if (!gone[n]) out.nodes.push_back(nodes[n]);
    for (const auto& p : pods)
      if (!p.node.empty()) out.pods.push_back(p);
    return out;
  }

  // What sched_ledger's add() does for the pod (and, for a new GPU group, its reservation pod).
  void put(std::size_t p, int n, const std::vector<int>& gpus) {
    auto un = static_cast<std::size_t>(n);
    pk::PoolPod& pod = pods[p];
    sched::NodeUse& u = uses[un];
    pod.node = nodes[un].name;
    pod_gpus[p] = gpus;
    u.cpu_milli += pod.cpu_millis;
    u.memory_bytes += pod.memory_bytes;
    u.nonzero_cpu_milli += pod.cpu_millis > 0 ? pod.cpu_millis : 100;
    u.nonzero_memory_bytes += pod.memory_bytes > 0 ? pod.memory_bytes : 200 * kMiB;
    u.pods += 1;
    if (pod.fraction > 0) {
      auto g = static_cast<std::size_t>(gpus.front());
      pod.gpu_group = pod.node + "-g" + std::to_string(g);  // KAI labels the pods sharing one GPU
      auto it = std::find_if(u.groups.begin(), u.groups.end(), [&](const auto& x) { return x.id == pod.gpu_group; });
      if (it == u.groups.end()) {  // a new group: KAI's binder creates its reservation pod (no requests)
        u.groups.push_back(sched::GpuGroupUse{pod.gpu_group, 0, 0, static_cast<int>(g), 1, false});
        std::sort(u.groups.begin(), u.groups.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
        it = std::find_if(u.groups.begin(), u.groups.end(), [&](const auto& x) { return x.id == pod.gpu_group; });
        u.pods += 1;
        u.nonzero_cpu_milli += 100;
        u.nonzero_memory_bytes += 200 * kMiB;
      }
      it->hundredths += static_cast<int>(pod.fraction);
      it->members += 1;
      occ[un][g] += pod.fraction;
    } else {
      for (int g : gpus) {
        whole[un][static_cast<std::size_t>(g)] = 1;
        occ[un][static_cast<std::size_t>(g)] = kubex::decide::kOneGpu;
      }
      u.whole_gpus += static_cast<std::int64_t>(gpus.size());
    }
  }
  void take(std::size_t p) {
    auto un = static_cast<std::size_t>(index.at(pods[p].node));
    pk::PoolPod& pod = pods[p];
    sched::NodeUse& u = uses[un];
    u.cpu_milli -= pod.cpu_millis;
    u.memory_bytes -= pod.memory_bytes;
    u.nonzero_cpu_milli -= pod.cpu_millis > 0 ? pod.cpu_millis : 100;
    u.nonzero_memory_bytes -= pod.memory_bytes > 0 ? pod.memory_bytes : 200 * kMiB;
    u.pods -= 1;
    if (pod.fraction > 0) {
      auto g = static_cast<std::size_t>(pod_gpus[p].front());
      auto it = std::find_if(u.groups.begin(), u.groups.end(), [&](const auto& x) { return x.id == pod.gpu_group; });
      it->hundredths -= static_cast<int>(pod.fraction);
      if (--it->members == 0) {  // KAI collects the emptied group's reservation pod
        u.groups.erase(it);
        u.pods -= 1;
        u.nonzero_cpu_milli -= 100;
        u.nonzero_memory_bytes -= 200 * kMiB;
      }
      occ[un][g] -= pod.fraction;
    } else {
      for (int g : pod_gpus[p]) {
        whole[un][static_cast<std::size_t>(g)] = 0;
        occ[un][static_cast<std::size_t>(g)] = 0;
      }
      u.whole_gpus -= static_cast<std::int64_t>(pod_gpus[p].size());
    }
    pod.node.clear();
    pod.gpu_group.clear();
    pod_gpus[p].clear();
  }

  // kubex-sim's KAI scheduler decides (sched::place); the GPUs are the lowest free indexes, as kubex-sim's kubelet
  // hands devices out. false: no node fits (the pod stays Pending).
  bool schedule(std::size_t p) {
    if (slots_dirty || slots_of != this) {
      slots_of = this;
      slots.clear();
      for (std::size_t n = 0; n < nodes.size(); ++n)
        if (!gone[n]) slots.push_back({&pnodes[n], &uses[n]});
      slots_dirty = false;
    }
    sched::Decision d = sched::place(ppods[p], slots, sched::Strategy::kKai);
    if (!d.scheduled) return false;
    int n = index.at(d.node);
    auto un = static_cast<std::size_t>(n);
    std::vector<int> gpus;
    auto free_gpus = [&](std::int64_t k) {
      for (std::size_t g = 0; g < occ[un].size() && static_cast<std::int64_t>(gpus.size()) < k; ++g)
        if (occ[un][g] == 0 && !whole[un][g]) gpus.push_back(static_cast<int>(g));
    };
    if (pods[p].fraction > 0) {
      if (!d.group.empty()) {
        for (const auto& g : uses[un].groups)
          if (g.id == d.group) gpus.push_back(g.index);
      } else {
        free_gpus(1);
      }
    } else {
      free_gpus(pods[p].whole_gpus);
    }
    put(p, n, gpus);
    return true;
  }

  // Evicts every pod of node n, removes the node, and lets the scheduler place them again: GPU pods in CON-6's
  // order (whole GPUs first, largest first, then fractions largest first, ties by name), then pods without GPU.
  Stranded drain(int n) {
    std::vector<std::size_t> evicted;
    for (std::size_t p = 0; p < pods.size(); ++p)
      if (pods[p].node == nodes[static_cast<std::size_t>(n)].name) evicted.push_back(p);
    for (auto p : evicted) take(p);
    gone[static_cast<std::size_t>(n)] = true;
    slots_dirty = true;
    std::vector<bool> empty(nodes.size());
    for (std::size_t m = 0; m < nodes.size(); ++m) empty[m] = !gone[m] && allocated(static_cast<int>(m)) == 0;
    std::sort(evicted.begin(), evicted.end(), [&](std::size_t a, std::size_t b) {
      const pk::PoolPod &x = pods[a], &y = pods[b];
      auto key = [](const pk::PoolPod& q) { return std::tuple(!q.has_gpu(), q.fraction > 0, -q.gpu()); };
      return key(x) != key(y) ? key(x) < key(y) : x.name < y.name;
    });
    Stranded s;
    for (auto p : evicted)
      if (!schedule(p)) (pods[p].has_gpu() ? s.gpu : s.cpu_only)++;
    for (std::size_t m = 0; m < nodes.size(); ++m) s.woken += empty[m] && allocated(static_cast<int>(m)) > 0;
    return s;
  }

  // The nodes of one GPU model with the pods placed on them, exactly where they are.
  TraceCluster subset(const std::string& m) const {
    TraceCluster out;
    for (std::size_t n = 0; n < nodes.size(); ++n)
      if (model[n] == m) out.add_node(nodes[n], m);
    for (std::size_t p = 0; p < pods.size(); ++p) {
      if (pods[p].node.empty() || !out.index.count(pods[p].node)) continue;
      pk::PoolPod copy = pods[p];
      copy.node.clear();
      copy.gpu_group.clear();
      std::size_t q = out.add_pod(copy, ppods[p]);
      out.put(q, out.index.at(pods[p].node), pod_gpus[p]);
    }
    return out;
  }
};

struct RawPod {
  pk::PoolPod pod;
  sched::PlacementPod ppod;
  std::int64_t created = 0;
};

// Loads the GPU nodes and the Running pods of one list (× replicate) and places the pods in creation_time order.
TraceCluster load(const TraceConfig& c, const std::string& list, int& running) {
  Csv nodes = read_csv(c.dir + "/openb_node_list_gpu_node.csv");
  Csv pods = read_csv(c.dir + "/" + list);
  std::size_t sn = nodes.col("sn"), ncpu = nodes.col("cpu_milli"), nmem = nodes.col("memory_mib"),
              ngpu = nodes.col("gpu"), nmodel = nodes.col("model");
  std::vector<std::pair<pk::PoolNode, std::string>> all;
  for (int r = 0; r < c.replicate; ++r) {
    std::string suffix = r == 0 ? "" : "-r" + std::to_string(r);
    for (const auto& row : nodes.rows) {
      pk::PoolNode n;
      n.name = row[sn] + suffix;
      n.gpu_capacity = num(row[ngpu]);
      n.cpu_millis = num(row[ncpu]);
      n.memory_bytes = num(row[nmem]) * kMiB;
      n.labels[kProduct] = row[nmodel];
      if (auto m = model_memory_mib(row[nmodel])) n.labels[kMemory] = std::to_string(*m);
      n.ready = true;
      all.emplace_back(n, row[nmodel]);
    }
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first.name < b.first.name; });
  TraceCluster k;
  for (const auto& [n, m] : all) k.add_node(n, m);

  std::size_t name = pods.col("name"), cpu = pods.col("cpu_milli"), mem = pods.col("memory_mib"),
              ngpus = pods.col("num_gpu"), milli = pods.col("gpu_milli"), spec = pods.col("gpu_spec"),
              phase = pods.col("pod_phase"), created = pods.col("creation_time");
  std::vector<RawPod> raw;
  for (int r = 0; r < c.replicate; ++r) {
    std::string suffix = r == 0 ? "" : "-r" + std::to_string(r);
    for (const auto& row : pods.rows) {
      if (row.size() < pods.header.size() || row[phase] != "Running") continue;
      RawPod rp;
      pk::PoolPod& p = rp.pod;
      p.ns = kNamespace;
      p.name = row[name] + suffix;
      p.cpu_millis = num(row[cpu]);
      p.memory_bytes = num(row[mem]) * kMiB;
      std::int64_t g = num(row[ngpus]), m = num(row[milli]);
      if (g == 1 && m < 1000) p.fraction = std::max<Hundredths>(1, (m + 9) / 10);  // rounded UP to 0.01
      else p.whole_gpus = g;
      rp.ppod.cpu_milli = p.cpu_millis;
      rp.ppod.memory_bytes = p.memory_bytes;
      rp.ppod.gpus = p.whole_gpus;
      rp.ppod.fraction = static_cast<int>(p.fraction);
      if (!row[spec].empty()) {
        pk::NodeSelectorRequirement req{kProduct, "In", split(row[spec], '|')};
        p.required_affinity.push_back(pk::NodeSelectorTerm{{req}, {}});
        rp.ppod.has_required_affinity = true;
        rp.ppod.required_terms.push_back(sched::NodeSelectorTerm{{{kProduct, "In", req.values}}, {}});
      }
      rp.created = num(row[created]);
      raw.push_back(std::move(rp));
    }
  }
  std::sort(raw.begin(), raw.end(), [](const RawPod& a, const RawPod& b) {
    return a.created != b.created ? a.created < b.created : a.pod.name < b.pod.name;
  });
  running = static_cast<int>(raw.size());
  for (const auto& rp : raw) k.schedule(k.add_pod(rp.pod, rp.ppod));
  return k;
}

// ---------------------------------------------------------------- one pool's numbers

struct PoolReport {
  std::string model;
  long long nodes = 0, gpus = 0, fraction_pods = 0, whole_pods = 0, cpu_pods = 0, whole_gpus = 0;
  Hundredths fractions = 0, cap = 100;
  // On the nodes holding a GPU pod before any drain: GPU hundredths allocated and capacity, CPU requested and
  // allocatable, and how many have ≥ 90 % of their CPU or memory requested.
  long long gpu_alloc = 0, gpu_cap_h = 0, cpu_req = 0, cpu_alloc = 0, nodes_in_use = 0, nodes_full = 0;
  long long bound_plain = 0, bound_cap = 0, bound_resources = 0, in_use_before = 0, candidates = 0, feasible = 0;
  pk::DrainSequence seq;
  // Cross-check of the first plan: candidates the KAI scheduler itself can drain (a trial drain on a copy) without
  // stranding a GPU pod or waking an empty node, and how many of those kubex's plan finds feasible.
  long long kai_drainable = 0, kai_and_kubex = 0, kubex_not_kai = 0;
  std::map<std::string, int> blockers;  // after the sequence: why each node still in use is not drained
  std::map<int, std::pair<Outcome, Outcome>> drains;  // per threshold: kubex, baseline
  double t_full = 0, t_first = 0, t_seq = 0;
};

// CON-12's result and blocker of a node still in use after the sequence.
std::string blocker(const pk::Candidate& c) {
  if (c.result == "above_threshold") return "at or above the threshold";
  if (c.result == "infeasible") return "does not fit: " + c.blocker;
  if (c.result == "unmovable") return "unmovable: " + c.blocker;
  return c.result.empty() ? c.reason : c.result;
}

// A lower bound on the GPUs of the nodes that must hold the GPU pods when `need` of one resource (CPU or memory
// of the GPU pods) has to fit on them: fill with the nodes giving the most of it per GPU first, the last one
// in part (the LP relaxation of choosing nodes), rounded up.
long long covering_bound(const TraceCluster& k, std::int64_t pk::PoolNode::*resource, std::int64_t need) {
  std::vector<const pk::PoolNode*> ns;
  long long all = 0;
  for (const auto& n : k.nodes) {
    all += n.gpu_capacity;
    if (n.gpu_capacity > 0 && n.*resource > 0) ns.push_back(&n);
  }
  std::sort(ns.begin(), ns.end(), [&](const auto* a, const auto* b) {
    return double(a->*resource) / double(a->gpu_capacity) > double(b->*resource) / double(b->gpu_capacity);
  });
  double gpus = 0, have = 0;
  for (const auto* n : ns) {
    if (have + double(n->*resource) >= double(need))
      return static_cast<long long>(std::ceil(gpus + double(n->gpu_capacity) * (double(need) - have) /
                                                         double(n->*resource) - 1e-9));
    have += double(n->*resource);
    gpus += double(n->gpu_capacity);
  }
  return all;
}

long long in_use(const TraceCluster& k) {
  long long g = 0;
  for (std::size_t n = 0; n < k.nodes.size(); ++n)
    if (!k.gone[n] && k.allocated(static_cast<int>(n)) > 0) g += k.nodes[n].gpu_capacity;
  return g;
}

// The successive drains run at the chosen threshold and, like the synthetic pool, at 90 % and 100 %.
std::vector<int> thresholds(const TraceConfig& c) {
  std::vector<int> out = {c.threshold};
  for (int t : {90, 100})
    if (t != c.threshold) out.push_back(t);
  return out;
}

PoolReport report_pool(const TraceCluster& k, const std::string& m, const TraceConfig& c) {
  PoolReport r;
  r.model = m;
  r.cap = cap_of(m);
  for (const auto& n : k.nodes) {
    r.nodes++;
    r.gpus += n.gpu_capacity;
  }
  for (const auto& p : k.pods) {
    if (p.fraction > 0) {
      r.fraction_pods++;
      r.fractions += p.fraction;
    } else if (p.whole_gpus > 0) {
      r.whole_pods++;
      r.whole_gpus += p.whole_gpus;
    } else {
      r.cpu_pods++;
    }
  }
  r.bound_plain = (r.fractions + 99) / 100 + r.whole_gpus;
  r.bound_cap = (r.fractions + r.cap - 1) / r.cap + r.whole_gpus;
  std::int64_t cpu = 0, mem = 0;
  for (const auto& p : k.pods)
    if (p.has_gpu()) {
      cpu += p.cpu_millis;
      mem += p.memory_bytes;
    }
  r.bound_resources = std::max({r.bound_cap, covering_bound(k, &pk::PoolNode::cpu_millis, cpu),
                                covering_bound(k, &pk::PoolNode::memory_bytes, mem)});
  r.in_use_before = in_use(k);
  for (std::size_t n = 0; n < k.nodes.size(); ++n) {
    Hundredths a = k.allocated(static_cast<int>(n));
    if (a <= 0) continue;
    const pk::PoolNode& node = k.nodes[n];
    r.nodes_in_use++;
    r.gpu_alloc += a;
    r.gpu_cap_h += node.gpu_capacity * 100;
    r.cpu_req += k.uses[n].cpu_milli;
    r.cpu_alloc += node.cpu_millis;
    r.nodes_full += k.uses[n].cpu_milli * 10 >= node.cpu_millis * 9 ||
                    k.uses[n].memory_bytes * 10 >= node.memory_bytes * 9;
  }
  pk::Pool pool = k.pool();
  pk::Options opts;
  opts.threshold_percent = c.threshold;
  pk::Plan full;
  r.t_full = time_ms(c.reps, [&] { full = pk::plan(pool, opts); });
  pk::Options first = opts;
  first.stop_at_first_feasible = true;
  r.t_first = time_ms(c.reps, [&] { (void)pk::plan(pool, first); });
  r.t_seq = time_ms(std::max(1, c.reps / 2), [&] { r.seq = pk::drain_sequence(pool, opts); });
  for (const auto& cand : full.candidates) {
    r.candidates += cand.candidate;
    r.feasible += cand.feasible;
    if (!cand.candidate) continue;
    TraceCluster trial = k;
    Stranded s = trial.drain(trial.index.at(cand.node));
    bool kai = s.gpu == 0 && s.woken == 0;
    r.kai_drainable += kai;
    r.kai_and_kubex += kai && cand.feasible;
    r.kubex_not_kai += !kai && cand.feasible;
  }
  for (const auto& cand : r.seq.final_plan.candidates) {
    bool used = false;
    for (const auto& u : r.seq.final_plan.nodes)
      if (u.name == cand.node) used = u.allocated > 0;
    if (used) r.blockers[blocker(cand)]++;
  }
  for (int t : thresholds(c))
    r.drains[t] = {run_drains(k, t, [](const TraceCluster& x, int u) { return kubex_choice(x, u); }),
                   run_drains(k, t, [](const TraceCluster& x, int u) { return baseline_choice(x, u); })};
  return r;
}

void add(PoolReport& t, const PoolReport& r) {
  t.nodes += r.nodes;
  t.gpus += r.gpus;
  t.fraction_pods += r.fraction_pods;
  t.whole_pods += r.whole_pods;
  t.cpu_pods += r.cpu_pods;
  t.whole_gpus += r.whole_gpus;
  t.fractions += r.fractions;
  t.bound_plain += r.bound_plain;
  t.bound_cap += r.bound_cap;
  t.bound_resources += r.bound_resources;
  t.in_use_before += r.in_use_before;
  t.gpu_alloc += r.gpu_alloc;
  t.gpu_cap_h += r.gpu_cap_h;
  t.cpu_req += r.cpu_req;
  t.cpu_alloc += r.cpu_alloc;
  t.nodes_in_use += r.nodes_in_use;
  t.nodes_full += r.nodes_full;
  t.candidates += r.candidates;
  t.feasible += r.feasible;
  t.kai_drainable += r.kai_drainable;
  t.kai_and_kubex += r.kai_and_kubex;
  t.kubex_not_kai += r.kubex_not_kai;
  t.seq.steps.insert(t.seq.steps.end(), r.seq.steps.begin(), r.seq.steps.end());
  t.seq.gpus_in_use_after += r.seq.gpus_in_use_after;
  for (const auto& [why, n] : r.blockers) t.blockers[why] += n;
  for (const auto& [th, both] : r.drains) {
    auto& sum = t.drains[th];
    for (auto [o, x] : {std::pair{&sum.first, &both.first}, std::pair{&sum.second, &both.second}}) {
      o->drains += x->drains;
      o->stranding += x->stranding;
      o->stranded_pods += x->stranded_pods;
      o->stranded_cpu_only += x->stranded_cpu_only;
      o->waking += x->waking;
      o->gpus_in_use_after += x->gpus_in_use_after;
      o->seconds += x->seconds;
    }
  }
  t.t_full += r.t_full;
  t.t_first += r.t_first;
  t.t_seq += r.t_seq;
}

void print_list(const TraceConfig& c, const std::string& list) {
  int running = 0;
  TraceCluster all = load(c, list, running);
  std::map<std::string, long long> node_count;
  for (const auto& m : all.model) node_count[m]++;
  int pending_gpu = 0, pending_cpu = 0;
  for (const auto& p : all.pods)
    if (p.node.empty()) (p.has_gpu() ? pending_gpu : pending_cpu)++;
  long long gpus = 0;
  for (const auto& n : all.nodes) gpus += n.gpu_capacity;

  std::printf("### Production trace: %s × %d (threshold %d%%)\n\n", list.c_str(), c.replicate, c.threshold);
  std::printf("Data: %s. %s GPU nodes, %s GPUs; %s Running pods placed in creation_time order by kubex-sim's KAI "
              "scheduler: %s Pending (%d with a GPU, %d without).\n\n",
              kAttribution, thousands(static_cast<long long>(all.nodes.size())).c_str(), thousands(gpus).c_str(),
              thousands(running).c_str(), thousands(pending_gpu + pending_cpu).c_str(), pending_gpu, pending_cpu);

  // Pools from the most GPUs down; the whole trace as one pool last (timings only: CON-5a splits it).
  std::vector<std::string> models;
  for (const auto& [m, n] : node_count) models.push_back(m);
  std::vector<PoolReport> rows;
  for (const auto& m : models) rows.push_back(report_pool(all.subset(m), m, c));
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.gpus > b.gpus; });
  PoolReport total;
  total.model = "**total**";
  for (const auto& r : rows) add(total, r);
  rows.push_back(total);

  std::printf("| pool (gpu.product) | nodes | GPUs | pods: fractions + whole + no GPU | Σ fractions | whole GPUs | "
              "cap | bound ⌈Σf⌉+w | bound ⌈Σf/cap⌉+w | bound with CPU, memory | GPUs in use |\n"
              "|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& r : rows)
    std::printf("| %s | %s | %s | %s + %s + %s | %s | %s | %s | %s | %s | %s | %s |\n", r.model.c_str(),
                thousands(r.nodes).c_str(), thousands(r.gpus).c_str(), thousands(r.fraction_pods).c_str(),
                thousands(r.whole_pods).c_str(), thousands(r.cpu_pods).c_str(),
                pk::format_allocated(r.fractions).c_str(), thousands(r.whole_gpus).c_str(),
                &r == &rows.back() ? "" : pk::format_allocated(r.cap).c_str(), thousands(r.bound_plain).c_str(),
                thousands(r.bound_cap).c_str(), thousands(r.bound_resources).c_str(),
                thousands(r.in_use_before).c_str());
  auto pct = [](long long a, long long b) { return b > 0 ? 100.0 * double(a) / double(b) : 0.0; };
  std::printf("\nThe nodes holding a GPU pod, before any drain:\n\n| pool | nodes | GPU allocated | CPU requested | "
              "nodes with ≥ 90 %% of CPU or memory requested |\n|---|---|---|---|---|\n");
  for (const auto& r : rows)
    std::printf("| %s | %s | %.0f%% | %.0f%% | %s |\n", r.model.c_str(), thousands(r.nodes_in_use).c_str(),
                pct(r.gpu_alloc, r.gpu_cap_h), pct(r.cpu_req, r.cpu_alloc), thousands(r.nodes_full).c_str());

  // † : pods were stranded, so the GPUs left in use hold fewer pods than the bound counts.
  auto ratios = [](long long used, const PoolReport& r, bool stranded) {
    std::string d = stranded ? "†" : "";
    return ratio(used, r.bound_cap) + d + " | " + ratio(used, r.bound_resources) + d;
  };
  std::printf("\nDrains at %d%% (GPUs in use = Σ GPUs of the nodes still holding a GPU pod). `drain_sequence()` is "
              "CLI-2's what-if; the successive drains reschedule the evicted pods with the KAI scheduler after each "
              "drain († = GPU pods were left Pending, so the ratio is not comparable):\n\n",
              c.threshold);
  std::printf("| pool | planner | drains | drains stranding ≥ 1 GPU pod | GPU pods stranded | pods without GPU "
              "stranded | drains waking an empty node | GPUs in use after | / ⌈Σf/cap⌉+w | / bound with CPU, memory | "
              "run time |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& r : rows) {
    std::printf("| %s | `drain_sequence()` | %zu | – | – | – | – | %s (from %s) | %s | %.0f ms |\n", r.model.c_str(),
                r.seq.steps.size(), thousands(r.seq.gpus_in_use_after).c_str(), thousands(r.in_use_before).c_str(),
                ratios(r.seq.gpus_in_use_after, r, false).c_str(), r.t_seq);
    const auto& [kx, base] = r.drains.at(c.threshold);
    for (auto [name, o] : {std::pair{"kubex", &kx}, std::pair{"node-level baseline", &base}})
      std::printf("| %s | %s | %d | %d | %d | %d | %d | %s | %s | %.1f s |\n", r.model.c_str(), name, o->drains,
                  o->stranding, o->stranded_pods, o->stranded_cpu_only, o->waking,
                  thousands(o->gpus_in_use_after).c_str(),
                  ratios(o->gpus_in_use_after, r, o->stranded_pods > 0).c_str(), o->seconds);
  }
  std::printf("\nThe successive drains over all pools at each threshold:\n\n| threshold | planner | drains | drains "
              "stranding ≥ 1 GPU pod | GPU pods stranded | pods without GPU stranded | drains waking an empty node | "
              "GPUs in use after |\n|---|---|---|---|---|---|---|---|\n");
  for (const auto& [t, both] : total.drains)
    for (auto [name, o] : {std::pair{"kubex", &both.first}, std::pair{"node-level baseline", &both.second}})
      std::printf("| %d%% | %s | %d | %d | %d | %d | %d | %s |\n", t, name, o->drains, o->stranding,
                  o->stranded_pods, o->stranded_cpu_only, o->waking, thousands(o->gpus_in_use_after).c_str());

  std::printf("\nWhy the nodes still in use after `drain_sequence()` are not drained (the final plan's reason per "
              "node):\n\n| pool | nodes in use | reasons |\n|---|---|---|\n");
  for (const auto& r : rows) {
    int n = 0;
    std::string why;
    for (const auto& [w, count] : r.blockers) {
      n += count;
      why += (why.empty() ? "" : "; ") + w + ": " + std::to_string(count);
    }
    std::printf("| %s | %d | %s |\n", r.model.c_str(), n, why.c_str());
  }

  // The whole trace as one pool: what a single policy over every GPU node would plan (before CON-5a splits it).
  pk::Pool whole = all.pool();
  pk::Options opts;
  opts.threshold_percent = c.threshold;
  pk::Plan full;
  double t_full = time_ms(c.reps, [&] { full = pk::plan(whole, opts); });
  pk::Options first = opts;
  first.stop_at_first_feasible = true;
  double t_first = time_ms(c.reps, [&] { (void)pk::plan(whole, first); });
  long long cands = 0, feas = 0;
  for (const auto& cand : full.candidates) {
    cands += cand.candidate;
    feas += cand.feasible;
  }

  std::printf("\nPlan time (median of %d; a reconcile = `plan()` up to the first feasible candidate) and a cross-check "
              "of the first plan: each candidate drained on a copy by the KAI scheduler; clean = no GPU pod stranded "
              "and no empty node woken:\n\n",
              c.reps);
  std::printf("| pool | nodes | pods | candidates / feasible | KAI trial drains clean (of them kubex-feasible; "
              "kubex-feasible but not clean) | `plan()`, every candidate | one reconcile |\n"
              "|---|---|---|---|---|---|---|\n");
  for (const auto& r : rows)
    if (&r != &rows.back())
      std::printf("| %s | %s | %s | %lld / %lld | %lld (%lld; %lld) | %.1f ms | %.2f ms |\n", r.model.c_str(),
                  thousands(r.nodes).c_str(), thousands(r.fraction_pods + r.whole_pods + r.cpu_pods).c_str(),
                  r.candidates, r.feasible, r.kai_drainable, r.kai_and_kubex, r.kubex_not_kai, r.t_full, r.t_first);
  std::printf("| Σ over the pools | %s | %s | %lld / %lld | %lld (%lld; %lld) | %.1f ms | %.2f ms |\n",
              thousands(total.nodes).c_str(),
              thousands(total.fraction_pods + total.whole_pods + total.cpu_pods).c_str(),
              total.candidates, total.feasible, total.kai_drainable, total.kai_and_kubex, total.kubex_not_kai,
              total.t_full, total.t_first);
  std::printf("| whole trace as one pool | %s | %s | %lld / %lld | – | %.1f ms | %.2f ms |\n\n",
              thousands(static_cast<long long>(whole.nodes.size())).c_str(),
              thousands(static_cast<long long>(whole.pods.size())).c_str(), cands, feas, t_full, t_first);
}

}  // namespace

std::string default_trace_dir() {
  std::filesystem::path p = std::filesystem::path(kubex_paths::source_dir()) / ".." / "shared" / "data" / "alibaba-gpu-v2023";
  return std::filesystem::weakly_canonical(p).string();
}

int run_trace(const TraceConfig& c) {
  try {
    for (const auto& list : c.pod_lists) print_list(c, list);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench-packing --trace: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace kubex::bench::packing
