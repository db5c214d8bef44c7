// TEL-2: the pods of this node, from a WATCH of `spec.nodeName=<node>` with the engine's own informer: for every
// running container ID, its namespace, pod, container name and the pod's GPU allocation, as kubex-sim's GPU model
// reads them (the gpu-fraction container: `gpu-fraction-container-name`, else the first container; other containers
// with an nvidia.com/gpu limit or request hold whole GPUs).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <utility>
#include <vector>

#include "telemetry/series.h"

namespace kubex::kube {
class Client;
class Informer;
}  // namespace kubex::kube

namespace kubex::telemetry {

// A pod's containers with a container ID (status.containerStatuses and initContainerStatuses of restartable init
// containers), keyed by the runtime's ID without "<runtime>://". Pure: for the informer's projection and tests.
std::vector<std::pair<std::string, NodeContainer>> node_containers_of(const nlohmann::json& pod);

class NodePods {
 public:
  NodePods(std::shared_ptr<kube::Client> client, const std::string& node);
  ~NodePods();
  NodePods(const NodePods&) = delete;
  NodePods& operator=(const NodePods&) = delete;

  void start();
  void stop();
  bool synced() const;
  // Container ID -> its container, over every pod of the node now.
  std::map<std::string, NodeContainer> containers() const;
  std::size_t pods() const;

 private:
  std::unique_ptr<kube::Informer> informer_;
};

}  // namespace kubex::telemetry
