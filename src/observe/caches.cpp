#include "observe/caches.h"

#include <nlohmann/json.hpp>

#include "api/views.h"
#include "kube/cache/discovery.h"
#include "kube/cache/informer.h"
#include "kube/runtime/predicates.h"

namespace kubex::observe {

namespace {

// Index keys are views into the cached object (kube::IndexFunc).
std::vector<std::string_view> by_namespace(const kube::CachedObject& o) {
  if (o.ns.empty()) return {};
  return {o.ns.view()};
}

std::shared_ptr<kube::Informer> workload_informer(const std::shared_ptr<kube::Client>& client,
                                                  const std::string& group, const std::string& version,
                                                  const std::string& plural, bool optional = false,
                                                  std::shared_ptr<kube::ApiDiscovery> discovery = nullptr) {
  kube::InformerOptions io;
  io.absent_ok = optional;
  if (optional) io.discovery = std::move(discovery);
  auto inf = std::make_shared<kube::Informer>(
      client, kube::resource_path(group, version, plural),
      [](const nlohmann::json& o) -> kube::ObjectPtr { return api::project_workload(o); }, io);
  // Only the owner-uid index: nothing looks workloads up by namespace (an index costs ~50 B per object).
  inf->add_index(kIndexOwnerUid, [](const kube::CachedObject& o) {
    return kube::owner_uids(static_cast<const api::WorkloadView&>(o).owners);
  });
  return inf;
}

}  // namespace

std::vector<std::pair<std::string, std::shared_ptr<kube::Informer>>> Caches::all() const {
  return {{"pods", pods},
          {"nodes", nodes},
          {"namespaces", namespaces},
          {"replicasets", replicasets},
          {"deployments", deployments},
          {"statefulsets", statefulsets},
          {"daemonsets", daemonsets},
          {"jobs", jobs},
          {"cronjobs", cronjobs},
          {"rollouts", rollouts},
          {"analysisruns", analysisruns},
          {"models", models},
          {"strimzipodsets", strimzipodsets},
          {"queues", queues},
          {"poddisruptionbudgets", pdbs}};
}

std::shared_ptr<kube::Informer> Caches::owner_informer(const std::string& kind) const {
  if (kind == "ReplicaSet") return replicasets;
  if (kind == "Deployment") return deployments;
  if (kind == "StatefulSet") return statefulsets;
  if (kind == "DaemonSet") return daemonsets;
  if (kind == "Job") return jobs;
  if (kind == "CronJob") return cronjobs;
  if (kind == "Rollout") return rollouts;
  if (kind == "AnalysisRun") return analysisruns;
  if (kind == "Model") return models;
  if (kind == "StrimziPodSet") return strimzipodsets;
  return nullptr;
}

Caches make_caches(const std::shared_ptr<kube::Client>& client) {
  Caches c;
  c.pods = std::make_shared<kube::Informer>(
      client, kube::resource_path("", "v1", "pods"),
      [](const nlohmann::json& o) -> kube::ObjectPtr { return api::project_pod(o); });
  c.pods->add_index(kIndexOwnerUid, [](const kube::CachedObject& o) {
    return kube::owner_uids(static_cast<const api::PodView&>(o).owners);
  });
  c.pods->add_index(kIndexNodeName, [](const kube::CachedObject& o) -> std::vector<std::string_view> {
    const auto& node = static_cast<const api::PodView&>(o).node_name;
    if (node.empty()) return {};
    return {node.view()};
  });
  c.nodes = std::make_shared<kube::Informer>(
      client, kube::resource_path("", "v1", "nodes"),
      [](const nlohmann::json& o) -> kube::ObjectPtr { return api::project_node(o); });
  // Namespaces: their labels and rightsizing annotations (pause-until, ADM-4), as workload-like views.
  c.namespaces = std::make_shared<kube::Informer>(
      client, kube::resource_path("", "v1", "namespaces"),
      [](const nlohmann::json& o) -> kube::ObjectPtr { return api::project_workload(o); });
  // The optional APIs (Argo Rollouts, KubeAI, Strimzi, KAI) are found through one shared look at API discovery.
  auto discovery = std::make_shared<kube::ApiDiscovery>(client);
  c.replicasets = workload_informer(client, "apps", "v1", "replicasets");
  c.deployments = workload_informer(client, "apps", "v1", "deployments");
  c.statefulsets = workload_informer(client, "apps", "v1", "statefulsets");
  c.daemonsets = workload_informer(client, "apps", "v1", "daemonsets");
  c.jobs = workload_informer(client, "batch", "v1", "jobs");
  c.cronjobs = workload_informer(client, "batch", "v1", "cronjobs");
  c.rollouts = workload_informer(client, "argoproj.io", "v1alpha1", "rollouts", true, discovery);
  c.analysisruns = workload_informer(client, "argoproj.io", "v1alpha1", "analysisruns", true, discovery);
  c.models = workload_informer(client, "kubeai.org", "v1", "models", true, discovery);
  c.strimzipodsets = workload_informer(client, "core.strimzi.io", "v1beta2", "strimzipodsets", true, discovery);
  c.queues = workload_informer(client, "scheduling.run.ai", "v2", "queues", true, discovery);
  c.pdbs = std::make_shared<kube::Informer>(
      client, kube::resource_path("policy", "v1", "poddisruptionbudgets"),
      [](const nlohmann::json& o) -> kube::ObjectPtr { return api::project_pdb(o); });
  c.pdbs->add_index(kIndexNamespace, by_namespace);
  return c;
}

std::vector<std::shared_ptr<kube::Informer>> Caches::workload_informers() const {
  return {deployments, statefulsets, daemonsets, cronjobs, jobs, rollouts, analysisruns, models, strimzipodsets};
}

std::map<std::string, std::string> namespace_annotations(const Caches& caches, const std::string& ns) {
  std::map<std::string, std::string> out;
  if (!caches.namespaces) return out;
  if (auto v = kube::as<api::WorkloadView>(caches.namespaces->get(ns))) {
    for (const auto& [k, val] : v->annotations) out[k.str()] = val.str();
  }
  return out;
}

}  // namespace kubex::observe
