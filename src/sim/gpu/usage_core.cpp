#include "sim/gpu/usage_core.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <set>
#include <string_view>
#include <tuple>

#include "api/gpu_series.h"

namespace kubex::sim::gpu {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kEpsilon = 1e-9;

std::string shortest(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

// One GPU container of a pod on one physical GPU.
struct Placed {
  const cluster::SimPod* pod;
  GpuContainer gpu;
  double sm_demand;         // on this GPU, percent of the GPU
  double memory_mib;        // on this GPU
};

struct Device {
  const cluster::SimNode* node;
  int index;
  std::vector<Placed> tenants;
};

// The pod's GPU group label, without copying it ("" when absent).
std::string_view group_of(const cluster::SimPod& p) {
  static const std::string kKey = api::keys::kGpuGroupLabel;
  auto it = p.labels.find(kKey);
  return it == p.labels.end() ? std::string_view() : std::string_view(it->second);
}

}  // namespace

MemoryIsolation parse_isolation(const std::string& s) {
  return s == "HAMiCore" ? MemoryIsolation::kHamiCore : MemoryIsolation::kNone;
}

MemoryIsolation isolation_for(const cluster::KaiSettings& kai) {
  if (kai.mode == cluster::GpuSharingMode::kHamiCore) return MemoryIsolation::kHamiCore;
  if (kai.mode == cluster::GpuSharingMode::kNvFractions && kai.version == cluster::KaiVersion::k0_18) {
    return MemoryIsolation::kNvFractions;
  }
  return MemoryIsolation::kNone;
}

std::vector<double> share_sm(const std::vector<double>& demands) {
  double sum = 0;
  for (double d : demands) sum += std::max(0.0, d);
  std::vector<double> out;
  out.reserve(demands.size());
  for (double d : demands) out.push_back(sum > 100 ? std::max(0.0, d) * 100 / sum : std::max(0.0, d));
  return out;
}

std::vector<std::size_t> overflow_victims(const std::vector<Tenant>& tenants, double capacity_mib) {
  double total = 0;
  for (const auto& t : tenants) total += std::max(0.0, t.memory_mib);
  std::vector<std::size_t> order(tenants.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const Tenant& x = tenants[a];
    const Tenant& y = tenants[b];
    if (x.started != y.started) return x.started > y.started;
    if (x.pod != y.pod) return x.pod > y.pod;
    return x.container > y.container;
  });
  std::vector<std::size_t> victims;
  for (std::size_t i : order) {
    if (total <= capacity_mib + kEpsilon) break;
    if (tenants[i].memory_mib <= 0) continue;
    victims.push_back(i);
    total -= tenants[i].memory_mib;
  }
  return victims;
}

std::vector<Victim> reclaim_victims(const std::vector<Tenant>& tenants, double capacity_mib) {
  double total = 0;
  for (const auto& t : tenants) total += std::max(0.0, t.memory_mib);
  std::vector<Victim> out;
  if (total <= capacity_mib + kEpsilon) return out;
  auto excess = [&](std::size_t i) { return tenants[i].memory_mib - tenants[i].request_mib; };
  // The overflow order (newest first) breaks ties between equal excesses.
  std::vector<std::size_t> newest = overflow_victims(tenants, -1);
  std::vector<std::size_t> rank(tenants.size(), 0);
  for (std::size_t r = 0; r < newest.size(); ++r) rank[newest[r]] = r;
  std::vector<std::size_t> above;
  for (std::size_t i = 0; i < tenants.size(); ++i) {
    if (excess(i) > kEpsilon) above.push_back(i);
  }
  std::sort(above.begin(), above.end(), [&](std::size_t a, std::size_t b) {
    if (std::abs(excess(a) - excess(b)) > kEpsilon) return excess(a) > excess(b);
    return rank[a] < rank[b];
  });
  std::vector<bool> gone(tenants.size(), false);
  for (std::size_t i : above) {
    if (total <= capacity_mib + kEpsilon) return out;
    out.push_back({i, true});
    gone[i] = true;
    total -= std::max(0.0, tenants[i].memory_mib);
  }
  for (std::size_t i : newest) {
    if (total <= capacity_mib + kEpsilon) break;
    if (gone[i]) continue;
    out.push_back({i, false});
    total -= tenants[i].memory_mib;
  }
  return out;
}

std::string format_mib(double mib) {
  if (std::abs(mib - std::round(mib)) < 0.05)
    return std::to_string(static_cast<long long>(std::llround(mib)));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f", mib);
  return buf;
}

std::optional<std::string> allocation_crash(const GpuContainer& g, double working_set_mib, double device_mib,
                                            MemoryIsolation isolation, double driver_reserve_mib) {
  if (device_mib <= 0) return std::nullopt;
  if (g.type == AllocationType::kFraction) {
    if (isolation == MemoryIsolation::kNvFractions) {
      bool limited = g.limit > g.fraction;
      double cap = (limited ? g.limit : g.fraction) * device_mib;
      if (working_set_mib <= cap + kEpsilon) return std::nullopt;
      return "CUDA out of memory: " + format_mib(working_set_mib) + " MiB working set exceeds the " +
             format_mib(cap) + " MiB " +
             (limited ? "limit (gpu-fraction.limit " + shortest(g.limit) + " of a " + format_mib(device_mib) +
                            " MiB GPU, NvFractions)"
                      : "allocation (gpu-fraction " + shortest(g.fraction) + " of a " + format_mib(device_mib) +
                            " MiB GPU, NvFractions without a gpu-fraction.limit)");
    }
    if (isolation != MemoryIsolation::kHamiCore) return std::nullopt;
    double allocation = g.fraction * device_mib;
    if (working_set_mib <= allocation + kEpsilon) return std::nullopt;
    return "CUDA out of memory: " + format_mib(working_set_mib) + " MiB working set exceeds the " +
           format_mib(allocation) + " MiB allocation (gpu-fraction " + shortest(g.fraction) + " of a " +
           format_mib(device_mib) + " MiB GPU, HAMi-core memory isolation)";
  }
  double reserve = std::clamp(driver_reserve_mib, 0.0, device_mib);
  double capacity = static_cast<double>(g.gpus) * (device_mib - reserve);
  if (g.gpus <= 0 || working_set_mib <= capacity + kEpsilon) return std::nullopt;
  return "CUDA out of memory: " + format_mib(working_set_mib) + " MiB working set exceeds the " +
         format_mib(capacity) + " MiB of its " + std::to_string(g.gpus) + " GPU" + (g.gpus == 1 ? "" : "s") +
         (reserve > 0
              ? " (" + format_mib(device_mib) + " MiB each less the driver's " + format_mib(reserve) + " MiB)"
              : "");
}

Demand container_demand(const cluster::SimPod& pod, const std::string& container, common::TimePoint now,
                        PatternCache& patterns, std::vector<std::pair<std::string, std::string>>* invalid) {
  Demand d;
  // A pod without a start time is just starting.
  auto since = pod.started == common::TimePoint{}
                   ? std::chrono::nanoseconds(0)
                   : std::chrono::duration_cast<std::chrono::nanoseconds>(now - pod.started);
  for (auto [base, out] :
       {std::pair{kSmPercentAnnotation, &d.sm_percent}, std::pair{kMemoryMibAnnotation, &d.memory_mib}}) {
    const auto* a = demand_annotation(pod, base, container);
    if (!a) continue;
    auto pattern = patterns.get(a->second);
    if (*pattern) {
      *out = (*pattern)->at(since);
    } else if (invalid) {
      invalid->emplace_back(a->first, (*pattern).error().message);
    }
  }
  return d;
}

Evaluation evaluate(const std::vector<std::shared_ptr<const cluster::SimPod>>& pods,
                    const std::vector<std::shared_ptr<const cluster::SimNode>>& nodes,
                    MemoryIsolation isolation, common::TimePoint now, PatternCache& patterns) {
  Evaluation ev;
  std::unordered_map<std::string, const cluster::SimNode*> node_by_name;
  node_by_name.reserve(nodes.size());
  for (const auto& n : nodes) {
    if (n) node_by_name.emplace(n->name, n.get());
  }
  // One pass over every pod touches only numbers until a pod holds GPUs (most pods of a big cluster do not):
  // reservation pods name the physical GPU of each fraction group; the others are candidates.
  // group -> its reservation pods (one per group in practice); views into the pods, which outlive this call.
  std::unordered_map<std::string_view, std::vector<const cluster::SimPod*>> reservations;
  std::vector<const std::shared_ptr<const cluster::SimPod>*> candidates;
  for (const auto& p : pods) {
    // KAI's reservation pods hold one whole nvidia.com/gpu each, so this filter keeps them.
    if (!p || (p->gpu_whole <= 0 && !(p->gpu_fraction > 0)) || p->node.empty()) continue;
    if (p->ns == api::keys::kDefaultReservationNamespace) {
      std::string_view group = group_of(*p);
      if (!p->terminal() && !group.empty()) reservations[group].push_back(p.get());
    } else if (p->phase == "Running" && p->started != common::TimePoint{}) {
      candidates.push_back(&p);
    }
  }

  std::vector<Device> devices;                                    // in order of first use
  std::unordered_map<const std::string*, std::size_t> device_at;  // node-owned UUID -> position
  for (const auto* candidate : candidates) {
    const auto& sp = *candidate;
    const cluster::SimPod& pod = *sp;
    auto gpu = gpu_containers(pod);
    if (gpu.empty()) continue;
    auto node_it = node_by_name.find(pod.node);
    if (node_it == node_by_name.end()) continue;
    const cluster::SimNode& node = *node_it->second;

    std::set<std::string> reported;
    auto report = [&](const std::string& key, const std::string& message) {
      if (!reported.insert(key).second) return;
      auto value = pod.annotations.count(key) ? pod.annotations.at(key) : std::string();
      ev.findings.push_back({sp, key, value, message});
    };
    for (const char* base : {kSmPercentAnnotation, kMemoryMibAnnotation}) {
      for (const auto& key : stray_container_keys(pod, base, gpu)) {
        report(key, "annotation " + key + " names no GPU container of the pod; it is ignored");
      }
    }

    std::vector<Demand> demands;  // per GPU container; invalid annotations are reported even before placement
    for (const auto& g : gpu) {
      const auto& c = pod.containers[g.index];
      std::vector<std::pair<std::string, std::string>> invalid;
      demands.push_back(container_demand(pod, c.name, now, patterns, &invalid));
      for (const auto& [key, error] : invalid) {
        report(key, "invalid annotation " + key + ": " + error + "; container " + c.name +
                        " has no demand from it");
      }
    }

    std::vector<int> indices;
    bool fraction_pod = std::any_of(
        gpu.begin(), gpu.end(), [](const GpuContainer& g) { return g.type == AllocationType::kFraction; });
    std::string_view group = fraction_pod ? group_of(pod) : std::string_view();
    if (auto it = group.empty() ? reservations.end() : reservations.find(group); it != reservations.end()) {
      for (const cluster::SimPod* r : it->second) {
        if (r->node == pod.node && (indices = r->gpu_indices(), !indices.empty())) break;
      }
    }
    if (indices.empty()) indices = pod.gpu_indices();
    std::erase_if(indices,
                  [&](int i) { return i < 0 || static_cast<std::size_t>(i) >= node.gpu_uuids.size(); });
    if (indices.empty()) continue;

    std::size_t cursor = 0;  // whole-GPU containers take consecutive slices of the pod's indices
    for (std::size_t gi = 0; gi < gpu.size(); ++gi) {
      const GpuContainer& g = gpu[gi];
      const Demand& d = demands[gi];
      std::vector<int> mine;
      if (g.type == AllocationType::kFraction) {
        mine.push_back(indices.front());
      } else {
        for (std::int64_t k = 0; k < g.gpus && cursor < indices.size(); ++k)
          mine.push_back(indices[cursor++]);
      }
      if (mine.empty()) continue;
      double k = static_cast<double>(mine.size());
      for (int index : mine) {
        const std::string& uuid = node.gpu_uuids[static_cast<std::size_t>(index)];
        auto [it, inserted] = device_at.try_emplace(&uuid, devices.size());
        if (inserted) devices.push_back({&node, index, {}});
        devices[it->second].tenants.push_back(
            {&pod, g, std::min(100.0, d.sm_percent / k), d.memory_mib / k});
      }
    }
  }

  for (const Device& dev : devices) {
    const std::string& uuid = dev.node->gpu_uuids[static_cast<std::size_t>(dev.index)];
    const double device_mib = static_cast<double>(dev.node->gpu_memory_mib);
    const double usable_mib = static_cast<double>(dev.node->usable_gpu_memory_mib());
    std::vector<double> demands;
    std::vector<const Placed*> running;
    for (const auto& t : dev.tenants) {
      if (!t.pod->containers[t.gpu.index].running) continue;
      running.push_back(&t);
      demands.push_back(t.sm_demand);
    }
    auto shares = share_sm(demands);
    for (std::size_t i = 0; i < running.size(); ++i) {
      const Placed& t = *running[i];
      const auto& c = t.pod->containers[t.gpu.index];
      Sample s;
      s.ns = t.pod->ns;
      s.pod = t.pod->name;
      s.container = c.name;
      s.node = dev.node->name;
      s.gpu_uuid = uuid;
      s.gpu_model = dev.node->gpu_product;
      s.allocation_type = allocation_type_label(t.gpu.type);
      s.sm_percent = shares[i];
      // A fraction container sits on one GPU, so its working set there is its whole working set.
      s.memory_bytes = std::llround(t.memory_mib * kMiB);
      // TEL-3: the exported allocation and footprint follow the rule `kubex gpu-exporter` uses (api/gpu_series.h).
      s.memory_total_bytes = api::gpu_allocation_bytes(s.allocation_type, t.gpu.fraction,
                                                       dev.node->gpu_memory_mib * std::int64_t{1024 * 1024});
      s.memory_footprint_percent = api::gpu_footprint_percent(s.memory_bytes, s.memory_total_bytes);
      s.pod_uid = t.pod->uid;
      s.restart_count = c.restart_count;
      ev.samples.push_back(std::move(s));
    }
    if (isolation == MemoryIsolation::kHamiCore || device_mib <= 0) continue;
    // Without HAMi-core every tenant of the GPU holds its working set, running or restarting: a
    // persistent over-commit keeps crashing the same pod (the newest; under NvFractions the one furthest
    // above its request).
    std::vector<Tenant> tenants;
    double total = 0;
    for (const auto& t : dev.tenants) {
      Tenant tenant{t.pod->started, t.pod->key(), t.gpu.index, t.memory_mib};
      if (t.gpu.type == AllocationType::kFraction) tenant.request_mib = t.gpu.fraction * device_mib;
      tenants.push_back(std::move(tenant));
      total += std::max(0.0, t.memory_mib);
    }
    // CUDA allocates from what the driver leaves (SIM-5).
    std::string capacity_text = format_mib(usable_mib) + " MiB";
    if (usable_mib < device_mib) {
      capacity_text += " usable (" + format_mib(device_mib) + " MiB less the driver's " +
                       format_mib(device_mib - usable_mib) + " MiB)";
    }
    std::vector<Victim> victims;
    if (isolation == MemoryIsolation::kNvFractions) {
      victims = reclaim_victims(tenants, usable_mib);
    } else {
      for (std::size_t v : overflow_victims(tenants, usable_mib)) victims.push_back({v, false});
    }
    for (const Victim& v : victims) {
      const Placed& t = dev.tenants[v.index];
      std::string key = t.pod->uid + "/" + t.pod->containers[t.gpu.index].name;
      std::string why =
          v.excess ? "pod " + t.pod->name + " uses " + format_mib(t.memory_mib - tenants[v.index].request_mib) +
                         " MiB above its request of " + format_mib(tenants[v.index].request_mib) +
                         " MiB (gpu-fraction " + shortest(t.gpu.fraction) +
                         "), reclaimed first under NvFractions"
                   : "pod " + t.pod->name + " is the newest on it";
      ev.crashes.try_emplace(key, "CUDA out of memory: GPU " + uuid + " (index " + std::to_string(dev.index) +
                                      " on node " + dev.node->name + ") is over-committed: working sets total " +
                                      format_mib(total) + " MiB of " + capacity_text + " and " + why);
    }
  }
  // Sort positions rather than the (large) samples themselves, then move each sample once.
  std::vector<std::size_t> order(ev.samples.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    const Sample& a = ev.samples[x];
    const Sample& b = ev.samples[y];
    return std::tie(a.ns, a.pod, a.container, a.gpu_uuid) < std::tie(b.ns, b.pod, b.container, b.gpu_uuid);
  });
  std::vector<Sample> sorted;
  sorted.reserve(order.size());
  for (std::size_t i : order) sorted.push_back(std::move(ev.samples[i]));
  ev.samples = std::move(sorted);
  return ev;
}

}  // namespace kubex::sim::gpu
