// The engine's informer caches (DESIGN §2.3): pods, nodes and the owner kinds as compact projections
// (api/views.h), with secondary indexes by namespace, owner UID and node name.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace kubex::kube {
class Client;
class Informer;
}  // namespace kubex::kube

namespace kubex::engine {

inline constexpr const char* kIndexNamespace = "namespace";
inline constexpr const char* kIndexOwnerUid = "owner-uid";
inline constexpr const char* kIndexNodeName = "node-name";

struct Caches {
  std::shared_ptr<kube::Informer> pods, nodes, replicasets, deployments, statefulsets;
  // (name, informer) in start order, for the manager.
  std::vector<std::pair<std::string, std::shared_ptr<kube::Informer>>> all() const;
};

Caches make_caches(const std::shared_ptr<kube::Client>& client);

}  // namespace kubex::engine
