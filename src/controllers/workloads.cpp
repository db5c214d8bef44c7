#include "controllers/workloads.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>

#include <nlohmann/json.hpp>

#include "act/owner_annotations.h"
#include "common/log.h"
#include "decide/desired_annotations.h"
#include "decide/admission/pod_resources.h"
#include "decide/status/policy_status.h"
#include "kube/cache/informer.h"
#include "kube/runtime/metrics.h"

namespace kubex::controllers {

using nlohmann::json;

std::string workload_key(const api::WorkloadView& w) {
  return w.kind.str() + "/" + w.ns.str() + "/" + w.name;
}

std::vector<std::shared_ptr<const api::WorkloadView>> list_workloads(const WorkloadCaches& caches) {
  std::vector<std::shared_ptr<const api::WorkloadView>> out;
  for (const auto& inf : caches.workloads) {
    if (!inf) continue;
    for (const auto& o : inf->list()) {
      auto w = kube::as<api::WorkloadView>(o);
      if (w && decide::is_workload_root(*w)) out.push_back(std::move(w));
    }
  }
  return out;
}

std::shared_ptr<const api::WorkloadView> find_workload(const WorkloadCaches& caches, const std::string& key) {
  auto a = key.find('/');
  auto b = a == std::string::npos ? a : key.find('/', a + 1);
  if (b == std::string::npos) return nullptr;
  std::string kind = key.substr(0, a), cache_key = key.substr(a + 1);
  for (const auto& inf : caches.workloads) {
    if (!inf) continue;
    auto w = kube::as<api::WorkloadView>(inf->get(cache_key));
    if (w && w->kind.view() == kind && decide::is_workload_root(*w)) return w;
  }
  return nullptr;
}

std::optional<json> pod_template_of(const WorkloadCaches& caches, const api::WorkloadView& w) {
  if (!w.template_json.empty()) {
    json t = json::parse(w.template_json, nullptr, false);
    if (t.is_object()) return t;
    return std::nullopt;
  }
  if (!caches.pods) return std::nullopt;
  // Models and StrimziPodSets: a live pod they own stands in for the template. Only the fields the decisions
  // read are rebuilt from the pod view.
  for (const auto& o : caches.pods->by_index(caches.pod_owner_index, w.uid)) {
    auto p = kube::as<api::PodView>(o);
    if (!p || p->deleting) continue;
    json pod = {{"metadata", {{"annotations", json::object()}, {"labels", json::object()}}},
                {"spec", {{"containers", json::array()}}}};
    for (const auto& [k, v] : p->annotations) pod["metadata"]["annotations"][k.str()] = v.str();
    for (const auto& [k, v] : p->labels) pod["metadata"]["labels"][k.str()] = v.str();
    for (const auto& c : p->containers) {
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
  return std::nullopt;
}

std::vector<decide::policy::TargetContainer> target_containers_of(const WorkloadCaches& caches,
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

std::expected<OwnerWrite, std::string> write_owner_annotations(kube::Client& client,
                                                               const api::WorkloadView& w,
                                                               const std::map<std::string, std::string>& set,
                                                               const std::vector<std::string>& remove,
                                                               bool dry_run, const common::Logger& log,
                                                               const std::string& what) {
  if (set.empty() && remove.empty()) return OwnerWrite::kNothing;
  std::string owner = w.kind.str() + "/" + w.name;
  json fields = {{"owner", owner}, {"namespace", w.ns.str()}, {"set", set}, {"remove", remove}};
  if (dry_run) {
    log.info("dry run: would update " + what, fields);
    return OwnerWrite::kDryRun;
  }
  act::OwnerRef ref{act::owner_api_version(w.kind.str()), w.kind.str(), w.ns.str(), w.name,
                    w.resource_version};
  auto r = act::patch_owner_annotations(client, ref, set, remove);
  if (!r) {
    if (r.error().not_found()) return OwnerWrite::kGone;
    if (r.error().conflict()) return OwnerWrite::kStale;
    return std::unexpected("patching " + what + " of " + owner + ": " + r.error().str());
  }
  log.info("updated " + what, fields);
  return OwnerWrite::kWritten;
}

GpuRecommendationsCounter::GpuRecommendationsCounter(kube::Metrics* metrics) {
  if (metrics) {
    family_ = &metrics->counter_family(
        "kubex_gpu_recommendations_total",
        "GPU values written to workloads' desired-resource-requests annotations when they change, by policy "
        "kind and direction (initial, upsize, downsize).");
  }
}

void GpuRecommendationsCounter::written(const api::WorkloadView& w,
                                        const std::map<std::string, std::string>& set) {
  if (!family_) return;
  using api::Kind;
  for (Kind kind : {Kind::kStaticPolicy, Kind::kClusterStaticPolicy, Kind::kProactivePolicy,
                    Kind::kClusterProactivePolicy, Kind::kGpuReactivePolicy, Kind::kClusterGpuReactivePolicy}) {
    auto it = set.find(decide::desired_requests_key(kind));
    if (it == set.end()) continue;
    const common::IStr* before = w.annotation(it->first);
    std::optional<std::string> old;
    if (before) old = before->str();
    for (const std::string& direction : decide::gpu_recommendation_directions(old, it->second)) {
      family_->Add({{"policy_kind", api::info(kind).name}, {"direction", direction}}).Increment();
    }
  }
}

}  // namespace kubex::controllers
