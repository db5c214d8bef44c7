// What every part of the simulated cluster shares: the cluster (through ClusterIo and a controller Client), the
// pod and node caches, feeds of store events, the clock and an Event recorder.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "common/clock.h"
#include "sim/cluster/config.h"
#include "sim/cluster/model.h"
#include "sim/cluster/runtime.h"

namespace kubex::sim::cluster {

// Reference to the object an Event is about.
struct ObjectRef {
  std::string api_version, kind, ns, name, uid;
};
ObjectRef pod_ref(const SimPod& p);

class ClusterIo;

class ClusterContext {
 public:
  ClusterContext(ClusterIo& io, ClusterConfig config);
  ~ClusterContext();

  // How the cluster is read and written (SIM-3): the in-process store or an API server's REST.
  ClusterIo& io() { return io_; }
  const Client& client() const { return client_; }
  const ClusterConfig& config() const { return config_; }
  const common::Clock& clock() const { return clock_; }
  common::TimePoint now() const { return clock_.now(); }
  PodCache& pods() { return pods_; }
  NodeCache& nodes() { return nodes_; }

  // The feed of a storage ("/pods", "apps/deployments", "kubeai.org/models"); created on first use,
  // started by start_feeds(). Register handlers before starting.
  Feed& feed(const std::string& storage);
  void start_feeds();
  void stop_feeds();
  bool feeds_synced() const;
  // Every feed has delivered every retained event of its storage.
  bool feeds_caught_up() const;

  // Records a core/v1 Event (aggregated: a repeat bumps count and lastTimestamp).
  void record_event(const ObjectRef& ref, const std::string& type, const std::string& reason,
                    const std::string& message, const std::string& component);

 private:
  ClusterIo& io_;
  Client client_;
  ClusterConfig config_;
  const common::Clock& clock_;
  PodCache pods_;
  NodeCache nodes_;
  std::mutex feeds_mu_;
  std::map<std::string, std::unique_ptr<Feed>> feeds_;
  std::mutex events_mu_;
  std::map<std::string, std::pair<std::string, int>> event_names_;  // aggregation key -> (event name, count)
};

}  // namespace kubex::sim::cluster
