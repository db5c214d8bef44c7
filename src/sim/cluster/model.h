// Projections of the objects the simulated cluster's controllers, schedulers, kubelet and GPU model read,
// kept current from store feeds (like informer caches, but holding only what the simulation needs).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "api/keys.h"
#include "common/clock.h"
#include "sim/apiserver/store.h"

namespace kubex::sim::cluster {

// The KAI and GPU keys come from api/keys.h (api::keys).

// Physical GPU indices a pod's containers use on its node ("0,1"), written by the kubelet emulation.
inline constexpr const char* kGpuIndicesAnnotation = "sim.kubex.ai/gpu-indices";
// What KAI's resourcereservation binary writes on its own pod once it runs: the UUID of the GPU it was given. KAI's
// binder waits for it before it binds the fraction pods of that GPU group (SIM-9).
inline constexpr const char* kReservedGpuAnnotation = "run.ai/reserve_for_gpu_index";
// The memory the driver keeps on each GPU of a node, in MiB (SIM-5), on the nodes kubex-sim creates.
inline constexpr const char* kDriverReserveAnnotation = "sim.kubex.ai/gpu-driver-reserve-mib";

struct SimContainer {
  std::string name;
  std::int64_t gpu = 0;  // whole nvidia.com/gpu (limit, else request)
  std::int64_t cpu_milli = 0;
  std::int64_t memory_bytes = 0;
  bool restart_always = true;  // regular containers and restartable init containers
  bool init = false;
  // Live status
  bool running = false, ready = false, terminated = false;
  int restart_count = 0;
  std::string waiting_reason, terminated_reason;
};

struct SimPod {
  std::string ns, name, uid, node, scheduler_name, phase;
  std::string owner_kind, owner_name, owner_uid;  // controller owner
  std::string restart_policy;
  std::map<std::string, std::string> labels, annotations, node_selector;
  std::vector<SimContainer> containers;  // init containers first, flagged
  std::string tolerations_json, affinity_json;  // raw, parsed by the scheduler when present
  double gpu_fraction = 0;    // gpu-fraction annotation when it parses
  bool gpu_fraction_invalid = false;
  std::int64_t gpu_whole = 0;  // sum of containers' whole GPUs
  std::int64_t cpu_milli = 0, memory_bytes = 0;  // effective requests
  bool deleting = false, scheduled = false, ready = false;
  common::TimePoint created{}, started{}, deletion{};
  std::int64_t grace_seconds = 30;
  std::uint64_t rv = 0;

  std::string key() const { return ns + "/" + name; }
  bool terminal() const { return phase == "Succeeded" || phase == "Failed"; }
  // Pods that hold node resources: bound, not terminal.
  bool active_on_node() const { return !node.empty() && !terminal(); }
  std::string gpu_group() const;
  std::vector<int> gpu_indices() const;  // from kGpuIndicesAnnotation
};

struct SimNode {
  std::string name, uid, pool;
  std::map<std::string, std::string> labels;
  std::string taints_json;
  bool unschedulable = false, ready = true;
  std::int64_t cpu_milli = 0, memory_bytes = 0, pods = 110, gpus = 0;
  std::int64_t gpu_memory_mib = 0;          // per GPU, from nvidia.com/gpu.memory (0 = unknown)
  std::int64_t gpu_driver_reserve_mib = 0;  // kDriverReserveAnnotation, else the default for the memory
  std::string gpu_product;
  int index = 0;  // position in the cluster (for IPs)
  // Physical GPU UUIDs, index order.
  std::vector<std::string> gpu_uuids;
  // What CUDA can allocate on one GPU: the memory minus the driver reserve (0 when the memory is unknown).
  std::int64_t usable_gpu_memory_mib() const {
    return gpu_memory_mib > gpu_driver_reserve_mib ? gpu_memory_mib - gpu_driver_reserve_mib : 0;
  }
};

SimPod parse_pod(const nlohmann::json& pod);
SimNode parse_node(const nlohmann::json& node);

// Thread-safe snapshot caches fed by Feeds.
class PodCache {
 public:
  void upsert(std::shared_ptr<const SimPod> p);
  void remove(const std::string& key);
  std::shared_ptr<const SimPod> get(const std::string& key) const;
  std::vector<std::shared_ptr<const SimPod>> on_node(const std::string& node) const;
  std::vector<std::shared_ptr<const SimPod>> owned_by(const std::string& owner_uid) const;
  std::vector<std::shared_ptr<const SimPod>> all() const;
  std::size_t size() const;

 private:
  mutable std::shared_mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const SimPod>> by_key_;
  std::unordered_multimap<std::string, std::string> by_node_, by_owner_;
  void unindex(const SimPod& p);
};

class NodeCache {
 public:
  void upsert(std::shared_ptr<const SimNode> n);
  void remove(const std::string& name);
  std::shared_ptr<const SimNode> get(const std::string& name) const;
  std::vector<std::shared_ptr<const SimNode>> all() const;  // name order

 private:
  mutable std::shared_mutex mu_;
  std::map<std::string, std::shared_ptr<const SimNode>> by_name_;
};

// A GPU's UUID, stable for a node name and index: "GPU-<8>-<4>-<4>-<4>-<12>" hex.
std::string gpu_uuid(const std::string& node, int index);

}  // namespace kubex::sim::cluster
