#include "engine/caches.h"

#include <nlohmann/json.hpp>

#include "api/views.h"
#include "kube/cache/informer.h"

namespace kubex::engine {

namespace {

std::vector<std::string> by_namespace(const kube::CachedObject& o) {
  if (o.ns.empty()) return {};
  return {o.ns.str()};
}

std::vector<std::string> owner_uids(const std::vector<api::OwnerRef>& owners) {
  std::vector<std::string> out;
  for (const auto& r : owners) {
    if (!r.uid.empty()) out.push_back(r.uid);
  }
  return out;
}

std::shared_ptr<kube::Informer> workload_informer(const std::shared_ptr<kube::Client>& client,
                                                  const std::string& plural) {
  auto inf = std::make_shared<kube::Informer>(
      client, kube::resource_path("apps", "v1", plural),
      [](const nlohmann::json& o) -> kube::ObjectPtr { return api::project_workload(o); });
  inf->add_index(kIndexNamespace, by_namespace);
  inf->add_index(kIndexOwnerUid, [](const kube::CachedObject& o) {
    return owner_uids(static_cast<const api::WorkloadView&>(o).owners);
  });
  return inf;
}

}  // namespace

std::vector<std::pair<std::string, std::shared_ptr<kube::Informer>>> Caches::all() const {
  return {{"pods", pods},
          {"nodes", nodes},
          {"replicasets", replicasets},
          {"deployments", deployments},
          {"statefulsets", statefulsets}};
}

Caches make_caches(const std::shared_ptr<kube::Client>& client) {
  Caches c;
  c.pods = std::make_shared<kube::Informer>(
      client, kube::resource_path("", "v1", "pods"),
      [](const nlohmann::json& o) -> kube::ObjectPtr { return api::project_pod(o); });
  c.pods->add_index(kIndexNamespace, by_namespace);
  c.pods->add_index(kIndexOwnerUid, [](const kube::CachedObject& o) {
    return owner_uids(static_cast<const api::PodView&>(o).owners);
  });
  c.pods->add_index(kIndexNodeName, [](const kube::CachedObject& o) -> std::vector<std::string> {
    const auto& node = static_cast<const api::PodView&>(o).node_name;
    if (node.empty()) return {};
    return {node.str()};
  });
  c.nodes = std::make_shared<kube::Informer>(
      client, kube::resource_path("", "v1", "nodes"),
      [](const nlohmann::json& o) -> kube::ObjectPtr { return api::project_node(o); });
  c.replicasets = workload_informer(client, "replicasets");
  c.deployments = workload_informer(client, "deployments");
  c.statefulsets = workload_informer(client, "statefulsets");
  return c;
}

}  // namespace kubex::engine
