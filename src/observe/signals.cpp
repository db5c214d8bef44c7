#include "observe/signals.h"

#include <algorithm>
#include <chrono>
#include <unordered_map>

#include "api/keys.h"
#include "decide/gpu_value.h"
#include "kube/cache/informer.h"
#include "observe/caches.h"
#include "observe/workloads.h"
#include "prom/client.h"
#include "prom/promql.h"

namespace kubex::observe {

namespace {

using decide::reactive::ContainerInput;
using decide::reactive::PodInput;

// The kinds whose pods hang off an intermediate controller (SEL-1 chains of two links).
std::shared_ptr<kube::Informer> middle_informer(const Caches& caches, std::string_view kind) {
  if (kind == "Deployment" || kind == "Rollout") return caches.replicasets;
  if (kind == "CronJob" || kind == "AnalysisRun") return caches.jobs;
  return nullptr;
}

bool controlled_by(const std::vector<api::OwnerRef>& owners, const std::string& uid) {
  for (const auto& o : owners) {
    if (o.controller && o.uid == uid) return true;
  }
  return false;
}

void add_pods_of(const Caches& caches, const std::string& uid,
                 std::vector<std::shared_ptr<const api::PodView>>& out) {
  for (const auto& o : caches.pods->by_index(kIndexOwnerUid, uid)) {
    auto p = kube::as<api::PodView>(o);
    if (p && controlled_by(p->owners, uid)) out.push_back(std::move(p));
  }
}

}  // namespace

std::vector<std::shared_ptr<const api::PodView>> pods_of(const Caches& caches, const api::WorkloadView& w) {
  std::vector<std::shared_ptr<const api::PodView>> out;
  if (!caches.pods) return out;
  if (auto middle = middle_informer(caches, w.kind.view())) {
    for (const auto& o : middle->by_index(kIndexOwnerUid, w.uid)) {
      auto m = kube::as<api::WorkloadView>(o);
      if (m && controlled_by(m->owners, w.uid)) add_pods_of(caches, m->uid, out);
    }
    return out;
  }
  add_pods_of(caches, w.uid, out);
  return out;
}

PodFraction pod_fraction(const api::PodView& pod) {
  PodFraction out;
  if (const api::IStr* f = pod.annotation(api::keys::kGpuFraction)) {
    if (auto v = decide::parse_gpu_fraction(f->view())) out.value = *v;
  }
  if (const api::IStr* n = pod.annotation(api::keys::kGpuFractionContainerName)) {
    out.container = n->str();
    return out;
  }
  for (const auto& c : pod.containers) {
    if (!c.init) {
      out.container = c.name.str();
      break;
    }
  }
  return out;
}

std::vector<ContainerInput> pod_containers(const api::PodView& pod) {
  const PodFraction f = pod_fraction(pod);
  const std::optional<decide::Hundredths>& fraction = f.value;
  const std::string& fraction_container = f.container;
  std::vector<ContainerInput> out;
  for (const auto& c : pod.containers) {
    if (!c.is_target()) continue;
    ContainerInput in;
    in.name = c.name.str();
    if (fraction && !c.init && in.name == fraction_container) {
      in.allocation = *fraction;
    } else if (c.gpu_request || c.gpu_limit) {
      in.allocation = decide::from_whole(c.gpu_request ? *c.gpu_request : *c.gpu_limit);
    }
    if (c.last_terminated != common::TimePoint{}) in.last_terminated_at = c.last_terminated;
    in.oom_exit = c.last_oom;
    out.push_back(std::move(in));
  }
  return out;
}

WorkloadPods eligible_pods(const Caches& caches, const api::WorkloadView& w, common::Duration min_age,
                           common::TimePoint now) {
  WorkloadPods out;
  out.ns = w.ns.str();
  for (const auto& p : pods_of(caches, w)) {
    decide::reactive::PodFacts facts;
    facts.phase = p->phase.str();
    facts.terminating = p->deleting;
    if (p->started != common::TimePoint{}) facts.start_time = p->started;
    if (!decide::reactive::eligible(facts, min_age, now)) continue;  // REA-2
    PodInput pod;
    pod.name = p->name;
    for (auto& c : pod_containers(*p)) {
      if (c.allocation > 0) pod.containers.push_back(std::move(c));  // REA-2: included containers
    }
    if (pod.containers.empty()) continue;
    // TEL-4: the GPU a KAI fraction pod shares (its node and KAI's GPU group).
    const api::IStr* group = p->label(api::keys::kGpuGroupLabel);
    if (group && !group->view().empty() && !p->node_name.view().empty()) {
      pod.gpu = p->node_name.str() + "/" + group->str();
    }
    out.pods.push_back(std::move(pod));
  }
  std::sort(out.pods.begin(), out.pods.end(), [](const PodInput& a, const PodInput& b) { return a.name < b.name; });
  return out;
}

namespace {

class CachedSignalPods final : public SignalPods {
 public:
  explicit CachedSignalPods(const Caches& caches) : caches_(caches) {}
  std::vector<std::shared_ptr<const api::WorkloadView>> workloads() const override {
    return list_workloads(caches_);
  }
  WorkloadPods eligible(const api::WorkloadView& w, common::Duration min_age,
                        common::TimePoint now) const override {
    return eligible_pods(caches_, w, min_age, now);
  }

 private:
  const Caches& caches_;
};

}  // namespace

std::unique_ptr<SignalPods> cached_signal_pods(const Caches& caches) {
  return std::make_unique<CachedSignalPods>(caches);
}

prom::SignalSelector selector_of(const api::PrometheusSignal& p) {
  prom::SignalSelector s;
  s.metric = p.metric;
  s.namespace_label = p.namespace_label;
  s.pod_label = p.pod_label;
  s.container_label = p.container_label;
  s.agg = p.interpretation == "currentAllocation" ? prom::Aggregation::kAvg : prom::Aggregation::kSum;  // REA-3
  return s;
}

namespace {

// Where a sample lands: (namespace, pod, container) -> the container's Samples.
struct SampleIndex {
  struct Key {
    std::string ns, pod, container;
    bool operator==(const Key&) const = default;
  };
  struct Hash {
    std::size_t operator()(const Key& k) const {
      std::hash<std::string> h;
      return h(k.ns) ^ (h(k.pod) * 31) ^ (h(k.container) * 131);
    }
  };
  std::unordered_map<Key, decide::reactive::Samples*, Hash> by_key;
};

std::chrono::seconds seconds_of(common::Duration d) {
  return std::chrono::duration_cast<std::chrono::seconds>(d);
}

using Field = std::optional<double> decide::reactive::Samples::*;

// One reduction of one signal for `names` (⌈names/500⌉ queries), each sample stored in its container's `field`.
// False after the first failed query (REA-10: the read stops there).
bool read_one(prom::Querier& prometheus, const api::PrometheusSignal& p, prom::Reduction reduction,
              common::Duration window, const std::vector<prom::PodName>& names, const SampleIndex& index,
              Field field, SignalRead& read) {
  for (const std::string& promql : prom::signal_queries(selector_of(p), reduction, names, seconds_of(window))) {
    auto v = prometheus.instant(promql);
    if (!v) {
      ++read.failed;
      read.error = v.error();
      return false;
    }
    ++read.succeeded;
    read.non_finite += v->non_finite;
    for (const prom::Sample& s : v->samples) {
      auto label = [&](const std::string& name) -> std::string {
        auto it = s.labels.find(name);
        return it == s.labels.end() ? std::string() : it->second;
      };
      auto it = index.by_key.find({label(p.namespace_label), label(p.pod_label), label(p.container_label)});
      if (it != index.by_key.end()) (*it->second).*field = s.value;
    }
  }
  return true;
}

}  // namespace

SignalRead read_signals(prom::Querier& prometheus, const api::ReactiveSpec& spec,
                        std::vector<WorkloadPods>& workloads) {
  SignalRead read;
  SampleIndex index;
  std::vector<prom::PodName> names;
  for (auto& w : workloads) {
    for (auto& p : w.pods) {
      names.push_back({w.ns, p.name});
      for (auto& c : p.containers) index.by_key[{w.ns, p.name, c.name}] = &c.samples;
    }
  }
  if (names.empty()) return read;

  struct Query {
    const api::SignalConfig* signal;
    prom::Reduction reduction;
    common::Duration window;
    Field field;
  };
  const Query queries[] = {
      {&spec.compute, prom::Reduction::kQuantile95, spec.compute.upsize.metrics_window,
       &decide::reactive::Samples::compute_upsize},
      {&spec.compute, prom::Reduction::kQuantile95, spec.compute.scale_back.metrics_window,
       &decide::reactive::Samples::compute_scale_back},
      {&spec.memory, prom::Reduction::kMax, spec.memory.upsize.metrics_window,
       &decide::reactive::Samples::memory_upsize},
      {&spec.memory, prom::Reduction::kMax, spec.memory.scale_back.metrics_window,
       &decide::reactive::Samples::memory_scale_back},
  };
  for (const Query& q : queries) {
    // REA-10: a failed query ends the read; nothing changes this cycle.
    if (!read_one(prometheus, q.signal->prometheus, q.reduction, q.window, names, index, q.field, read)) break;
  }
  return read;
}

SignalRead read_compute_spread(prom::Querier& prometheus, const api::ReactiveSpec& spec,
                               std::vector<WorkloadPods>& workloads,
                               const std::set<std::pair<std::string, std::string>>& only) {
  SignalRead read;
  SampleIndex index;
  std::vector<prom::PodName> names;
  for (auto& w : workloads) {
    for (auto& p : w.pods) {
      if (!only.contains({w.ns, p.name})) continue;
      names.push_back({w.ns, p.name});
      for (auto& c : p.containers) index.by_key[{w.ns, p.name, c.name}] = &c.samples;
    }
  }
  if (names.empty()) return read;
  read_one(prometheus, spec.compute.prometheus, prom::Reduction::kStddev, spec.compute.upsize.metrics_window, names,
           index, &decide::reactive::Samples::compute_spread, read);
  return read;
}

}  // namespace kubex::observe
