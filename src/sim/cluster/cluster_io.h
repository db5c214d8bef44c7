// How the simulated cluster reads and writes the cluster (SIM-3, DESIGN §3 sim/): one narrow interface with two
// implementations, the in-process store of `kubex-sim serve` (StoreIo, below) and LIST/WATCH/REST of any API
// server for `kubex-sim agent` (sim/agent/rest_io.h). Nodes, kubelet, schedulers and sim/gpu see only this.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "common/clock.h"
#include "sim/cluster/runtime.h"

namespace kubex::sim {
class ApiServer;
}

namespace kubex::sim::cluster {

class ClusterIo {
 public:
  virtual ~ClusterIo() = default;
  // One API call. `user` is the identity in-process calls act as (a REST implementation acts as its
  // kubeconfig's identity). `path` may carry a query string.
  virtual Client::Response call(const std::string& user, const std::string& method, const std::string& path,
                                std::string body, const std::string& content_type) = 0;
  // A new, unstarted feed of `storage` ("/pods", "/nodes", "apps/deployments", "scheduling.run.ai/queues").
  virtual std::unique_ptr<Feed> make_feed(const std::string& storage) = 0;
  // The object `key` ("ns/name" or "name") of `storage` now, or nullopt when it is missing or unreadable.
  virtual std::optional<nlohmann::json> read(const std::string& storage, const std::string& key) = 0;
  // False only when the object is known to be gone: an unreadable one counts as present, so resyncs never
  // forget a live pod because of one failed request.
  virtual bool exists(const std::string& storage, const std::string& key) = 0;
  // Any object by apiVersion and kind (owner walks), or nullopt when unknown, missing or not readable.
  virtual std::optional<nlohmann::json> read_kind(const std::string& api_version, const std::string& kind,
                                                  const std::string& ns, const std::string& name) = 0;
  virtual const common::Clock& clock() const = 0;
  // True when every node of the cluster is the simulation's (`serve`); false when it shares the cluster with
  // nodes it must not touch (`agent`).
  virtual bool owns_every_node() const = 0;
};

// The in-process store of `kubex-sim serve`: calls go through ApiServer::handle (defaulting, admission
// webhooks, validation) as `user`; feeds follow the store's events.
class StoreIo final : public ClusterIo {
 public:
  explicit StoreIo(ApiServer& api) : api_(api) {}
  Client::Response call(const std::string& user, const std::string& method, const std::string& path,
                        std::string body, const std::string& content_type) override;
  std::unique_ptr<Feed> make_feed(const std::string& storage) override;
  std::optional<nlohmann::json> read(const std::string& storage, const std::string& key) override;
  bool exists(const std::string& storage, const std::string& key) override;
  std::optional<nlohmann::json> read_kind(const std::string& api_version, const std::string& kind,
                                          const std::string& ns, const std::string& name) override;
  const common::Clock& clock() const override;
  bool owns_every_node() const override { return true; }

 private:
  ApiServer& api_;
};

}  // namespace kubex::sim::cluster
