// The REST implementation of the simulation's ClusterIo (SIM-2, SIM-3): LIST+WATCH feeds, GETs and writes through
// kube/client against any Kubernetes API server, as `kubex-sim agent`. Node feeds see only the agent's own nodes
// (label sim.kubex.ai/agent=<name>), so the kubelet, the KAI-like scheduler and the GPU model never touch others.
#pragma once

#include <memory>
#include <string>

#include "sim/cluster/cluster_io.h"

namespace kubex::kube {
class Client;
}

namespace kubex::sim::agent {

class RestIo final : public cluster::ClusterIo {
 public:
  RestIo(std::shared_ptr<kube::Client> client, std::string agent_name);
  cluster::Client::Response call(const std::string& user, const std::string& method, const std::string& path,
                                 std::string body, const std::string& content_type) override;
  std::unique_ptr<cluster::Feed> make_feed(const std::string& storage) override;
  std::optional<nlohmann::json> read(const std::string& storage, const std::string& key) override;
  bool exists(const std::string& storage, const std::string& key) override;
  std::optional<nlohmann::json> read_kind(const std::string& api_version, const std::string& kind,
                                          const std::string& ns, const std::string& name) override;
  const common::Clock& clock() const override;
  bool owns_every_node() const override { return false; }

 private:
  std::shared_ptr<kube::Client> client_;
  std::string agent_name_;
};

// The REST path of the object `key` of `storage` ("/pods" + "ns/name", "scheduling.run.ai/queues" + "name"), or of
// the collection when `key` is empty. Empty for a storage whose group version the agent does not know.
std::string storage_path(const std::string& storage, const std::string& key);

}  // namespace kubex::sim::agent
