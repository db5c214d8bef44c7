#include "observe/actuation.h"

#include <nlohmann/json.hpp>

#include "api/keys.h"
#include "decide/gpu_value.h"
#include "kube/cache/informer.h"
#include "observe/caches.h"
#include "observe/gpu_inventory.h"
#include "observe/signals.h"
#include "observe/workloads.h"

namespace kubex::observe {

decide::actuation::Allocation live_allocation(const api::PodView& pod) {
  decide::actuation::Allocation out;
  const PodFraction f = pod_fraction(pod);
  const std::optional<decide::Hundredths>& fraction = f.value;
  const std::string& fraction_container = f.container;
  for (const auto& c : pod.containers) {
    if (!c.is_target()) continue;
    if (fraction && !c.init && c.name.view() == fraction_container) {
      out.push_back({c.name.str(), *fraction, true});
    } else if (c.gpu_request || c.gpu_limit) {
      decide::Hundredths v = decide::from_whole(c.gpu_request ? *c.gpu_request : *c.gpu_limit);
      if (v > 0) out.push_back({c.name.str(), v, false});
    }
  }
  return out;
}

decide::actuation::PodFacts pod_facts(const api::PodView& p) {
  decide::actuation::PodFacts f;
  f.name = p.name;
  f.uid = p.uid;
  f.phase = p.phase.str();
  f.controller_owned = p.controller() != nullptr;
  f.created = p.created;
  f.ready = p.ready;
  f.ready_since = p.ready_since;
  f.started = p.started;
  for (const auto& c : p.containers) {
    if (c.last_terminated == common::TimePoint{}) continue;
    f.last_restart = std::max(f.last_restart, c.last_terminated);
    if (c.is_target()) f.exits.push_back({c.name.str(), c.restarts, c.last_oom, c.last_terminated});
  }
  f.terminating = p.deleting;
  for (const auto& [k, v] : p.annotations) f.annotations[k.str()] = v.str();
  f.live = live_allocation(p);
  return f;
}

namespace {

std::string key_of(const std::string& kind, const std::string& ns, const std::string& name) {
  return kind + "/" + ns + "/" + name;
}

class CachedActuationFacts final : public ActuationFacts {
 public:
  explicit CachedActuationFacts(const Caches& caches) : caches_(caches) {}

  std::vector<std::shared_ptr<const api::WorkloadView>> workloads() const override {
    return list_workloads(caches_);
  }
  std::shared_ptr<const api::WorkloadView> find(const std::string& key) const override {
    return find_workload(caches_, key);
  }
  std::optional<nlohmann::json> pod_template(const api::WorkloadView& w) const override {
    return pod_template_of(caches_, w);
  }
  std::optional<nlohmann::json> original(const api::WorkloadView& w) const override {
    return original_of(caches_, w);
  }
  std::vector<decide::actuation::PodFacts> pods(const api::WorkloadView& w) const override {
    std::vector<decide::actuation::PodFacts> out;
    for (const auto& p : pods_of(caches_, w)) out.push_back(pod_facts(*p));
    return out;
  }
  std::map<std::string, std::string> namespace_annotations(const std::string& ns) const override {
    return observe::namespace_annotations(caches_, ns);
  }
  std::string workload_key_of(const api::PodView& pod) const override {
    const api::OwnerRef* c = pod.controller();
    if (!c) return "";
    const std::string ns = pod.ns.str();
    const std::string kind = c->kind.str();
    if (kind == "ReplicaSet" || kind == "Job") {
      auto inf = kind == "ReplicaSet" ? caches_.replicasets : caches_.jobs;
      auto mid = inf ? kube::as<api::WorkloadView>(inf->get(ns + "/" + c->name.str())) : nullptr;
      if (!mid) return "";
      const api::OwnerRef* top = mid->controller();
      if (!top) return kind == "Job" ? key_of("Job", ns, mid->name) : "";
      return key_of(top->kind.str(), ns, top->name.str());
    }
    return key_of(kind, ns, c->name.str());
  }

  decide::packing::Pool gpu_pool(const std::string& reservation_namespace) const override {
    return cached_gpu_inventory(caches_)->pool(api::LabelSelector{}, reservation_namespace);
  }

 private:
  const Caches& caches_;
};

}  // namespace

std::unique_ptr<ActuationFacts> cached_actuation_facts(const Caches& caches) {
  return std::make_unique<CachedActuationFacts>(caches);
}

}  // namespace kubex::observe
