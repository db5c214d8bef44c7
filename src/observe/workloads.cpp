#include "observe/workloads.h"

#include <nlohmann/json.hpp>

#include "api/keys.h"
#include "decide/admission/pod_resources.h"
#include "decide/status/policy_status.h"
#include "kube/cache/informer.h"
#include "observe/caches.h"

namespace kubex::observe {

using nlohmann::json;

std::string workload_key(const api::WorkloadView& w) {
  return w.kind.str() + "/" + w.ns.str() + "/" + w.name;
}

std::vector<std::shared_ptr<const api::WorkloadView>> list_workloads(const Caches& caches) {
  std::vector<std::shared_ptr<const api::WorkloadView>> out;
  for (const auto& inf : caches.workload_informers()) {
    if (!inf) continue;
    for (const auto& o : inf->list()) {
      auto w = kube::as<api::WorkloadView>(o);
      if (w && decide::is_workload_root(*w)) out.push_back(std::move(w));
    }
  }
  return out;
}

std::shared_ptr<const api::WorkloadView> find_workload(const Caches& caches, const std::string& key) {
  auto a = key.find('/');
  auto b = a == std::string::npos ? a : key.find('/', a + 1);
  if (b == std::string::npos) return nullptr;
  std::string kind = key.substr(0, a), cache_key = key.substr(a + 1);
  for (const auto& inf : caches.workload_informers()) {
    if (!inf) continue;
    auto w = kube::as<api::WorkloadView>(inf->get(cache_key));
    if (w && w->kind.view() == kind && decide::is_workload_root(*w)) return w;
  }
  return nullptr;
}

namespace {

// A cached pod rebuilt with the fields the decisions read (annotations, labels, containers' GPUs) and, with
// `scheduler`, spec.schedulerName.
json pod_json(const api::PodView& p, bool scheduler) {
  json pod = {{"metadata", {{"annotations", json::object()}, {"labels", json::object()}}},
              {"spec", {{"containers", json::array()}}}};
  for (const auto& [k, v] : p.annotations) pod["metadata"]["annotations"][k.str()] = v.str();
  for (const auto& [k, v] : p.labels) pod["metadata"]["labels"][k.str()] = v.str();
  if (scheduler && !p.scheduler_name.empty()) pod["spec"]["schedulerName"] = p.scheduler_name.str();
  for (const auto& c : p.containers) {
    json cj = {{"name", c.name.str()}, {"image", c.image.str()}, {"resources", json::object()}};
    if (c.gpu_request) cj["resources"]["requests"]["nvidia.com/gpu"] = std::to_string(*c.gpu_request);
    if (c.gpu_limit) cj["resources"]["limits"]["nvidia.com/gpu"] = std::to_string(*c.gpu_limit);
    if (c.init) {
      if (c.restartable) cj["restartPolicy"] = "Always";
      pod["spec"]["initContainers"].push_back(std::move(cj));
    } else {
      pod["spec"]["containers"].push_back(std::move(cj));
    }
  }
  return pod;
}

std::optional<json> template_json(const api::WorkloadView& w) {
  json t = json::parse(w.template_json, nullptr, false);
  if (t.is_object()) return t;
  return std::nullopt;
}

}  // namespace

std::optional<json> pod_template_of(const Caches& caches, const api::WorkloadView& w) {
  if (!w.template_json.empty()) return template_json(w);
  if (!caches.pods) return std::nullopt;
  // Models and StrimziPodSets: a live pod they own stands in for the template. Only the fields the decisions
  // read are rebuilt from the pod view.
  for (const auto& o : caches.pods->by_index(kIndexOwnerUid, w.uid)) {
    auto p = kube::as<api::PodView>(o);
    if (p && !p->deleting) return pod_json(*p, false);
  }
  return std::nullopt;
}

std::optional<json> original_of(const Caches& caches, const api::WorkloadView& w) {
  if (!w.template_json.empty()) return template_json(w);
  if (!caches.pods) return std::nullopt;
  std::shared_ptr<const api::PodView> admitted;  // a pod admission changed: its pod-rightsizing-info tells how
  for (const auto& o : caches.pods->by_index(kIndexOwnerUid, w.uid)) {
    auto p = kube::as<api::PodView>(o);
    if (!p) continue;
    if (!p->annotation(api::keys::kPodRightsizingInfo)) return pod_json(*p, true);
    if (!admitted) admitted = p;
  }
  if (admitted) return pod_json(*admitted, true);
  return std::nullopt;
}

std::vector<decide::policy::TargetContainer> target_containers_of(const Caches& caches,
                                                                  const api::WorkloadView& w) {
  auto t = pod_template_of(caches, w);
  if (!t) return {};
  return decide::read_pod_resources(*t).target_containers();
}

decide::policy::Workload decision_workload(const api::WorkloadView& v) {
  decide::policy::Workload w;
  w.kind = v.kind.str();
  w.name = v.name;
  w.ns = v.ns.str();
  for (const auto& [k, val] : v.labels) w.labels[k.str()] = val.str();
  for (const auto& [k, val] : v.annotations) w.annotations[k.str()] = val.str();
  if (!v.template_json.empty()) {
    json t = json::parse(v.template_json, nullptr, false);
    if (t.is_object() && t.contains("metadata") && t["metadata"].is_object() &&
        t["metadata"].contains("annotations") && t["metadata"]["annotations"].is_object()) {
      for (auto& [k, val] : t["metadata"]["annotations"].items()) {
        if (val.is_string()) w.template_annotations[k] = val.get<std::string>();
      }
    }
  }
  w.model_engine = v.model_engine.str();
  return w;
}

namespace {

class CachedWorkloadViews final : public WorkloadViews {
 public:
  explicit CachedWorkloadViews(const Caches& caches) : caches_(caches) {}
  std::vector<std::shared_ptr<const api::WorkloadView>> list() const override {
    return list_workloads(caches_);
  }
  std::shared_ptr<const api::WorkloadView> find(const std::string& key) const override {
    return find_workload(caches_, key);
  }
  std::vector<decide::policy::TargetContainer> target_containers(const api::WorkloadView& w) const override {
    return target_containers_of(caches_, w);
  }

 private:
  const Caches& caches_;
};

}  // namespace

std::shared_ptr<const WorkloadViews> cached_workload_views(const Caches& caches) {
  return std::make_shared<CachedWorkloadViews>(caches);
}

void on_workload_changes(const Caches& caches, std::function<void(const api::WorkloadView&)> fn) {
  for (const auto& inf : caches.workload_informers()) {
    if (!inf) continue;
    kube::InformerHandlers h;
    h.on_add = [fn](const kube::ObjectPtr& o) { fn(*kube::as<api::WorkloadView>(o)); };
    h.on_update = [fn](const kube::ObjectPtr&, const kube::ObjectPtr& o) { fn(*kube::as<api::WorkloadView>(o)); };
    inf->add_handlers(std::move(h));
  }
}

}  // namespace kubex::observe
