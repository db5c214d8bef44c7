// The node-local resources the kubelet emulation hands out: physical GPU indices (like the NVIDIA device
// plugin's Allocate) and pod IPs from the node's podCIDR. Thread-safe; O(1) per pod event.
//
// Whole-GPU pods (KAI reservation pods included) hold their indices exclusively; fraction pods share the GPU of
// their `runai-gpu-group`, which is the index of the group's reservation pod. Indices come back from the
// pods' sim.kubex.ai/gpu-indices annotations, so a restarted simulator resumes with the same assignment.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/cluster/model.h"

namespace kubex::sim::cluster::kubelet {

struct NodeNet {
  std::string host_ip;   // InternalIP
  std::string pod_cidr;  // spec.podCIDR ("10.244.3.0/24")
  std::int64_t gpus = 0;
};

// "10.244.3.0/24" + 5 -> "10.244.3.5" ("" for a malformed CIDR or an offset outside it).
std::string cidr_address(const std::string& cidr, int offset);
// "0,1"
std::string format_indices(const std::vector<int>& indices);

class NodeDevices {
 public:
  void set_node(const std::string& name, NodeNet net);
  void remove_node(const std::string& name);
  std::optional<NodeNet> node(const std::string& name) const;

  // Feed side: records what a pod holds (from its annotation) or releases it when it no longer runs.
  void observe(const SimPod& p);
  void release(const std::string& key);

  struct Allocation {
    bool ok = false;
    std::vector<int> indices;
    std::int64_t used = 0;  // GPUs already held on the node (for the rejection message)
  };
  // Lowest free indices for a pod holding `count` whole GPUs (the same ones again for a pod that has them).
  Allocation allocate_exclusive(const std::string& key, const std::string& node, std::int64_t count);

  enum class GroupState { kKnown, kPending, kNoReservation };
  // The physical GPU of a fraction group: kKnown (index set), kPending (its reservation pod has no index yet),
  // kNoReservation.
  GroupState group_index(const std::string& node, const std::string& group, int& index) const;
  // A GPU for a fraction without a usable reservation: the first one nobody holds exclusively, else 0.
  int shared_fallback(const std::string& node) const;

  // Pod IPs: offsets 2.. of the node's podCIDR, reused after release.
  std::string allocate_ip(const std::string& key, const std::string& node);

 private:
  struct NodeState {
    NodeNet net;
    std::map<int, std::string> exclusive;  // GPU index -> pod key
    std::set<int> ip_offsets;
  };
  struct PodState {
    std::string node;
    std::vector<int> exclusive;
    std::string group_key;  // node|group for reservation pods
    int ip_offset = 0;
  };
  void release_locked(const std::string& key);
  Allocation allocate_unlocked(const std::string& key, const std::string& node, std::int64_t count);

  mutable std::mutex mu_;
  std::unordered_map<std::string, NodeState> nodes_;
  std::unordered_map<std::string, PodState> pods_;
  std::unordered_map<std::string, std::pair<std::string, int>> groups_;  // node|group -> (reservation key, index)
};

}  // namespace kubex::sim::cluster::kubelet
