// The occupancy ledger kubex-sim's default and KAI schedulers share: per-node summaries (cpu, memory, pod
// count, whole GPUs, KAI GPU groups) kept current from the pod and node feeds, plus the pods a scheduler
// assumed while its binding is in flight (like kube-scheduler's assumed pods). A decision and its assumption
// happen under one lock, so two schedulers never hand out the same GPU and nvidia.com/gpu allocatable is
// never overcommitted. Work per event is O(1) (plus the node's few GPU groups); a decision is O(nodes).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/cluster/kai_modes.h"
#include "sim/cluster/model.h"
#include "sim/cluster/sched_placement.h"

namespace kubex::sim::cluster::sched {

// "gpu-reservation-<node>-<suffix>", KAI's name for the pod that holds a GPU group's device.
std::string reservation_pod_name(const std::string& node, const std::string& suffix);

class Ledger {
 public:
  // What one pod holds on its node.
  struct Holding {
    std::string node;
    std::int64_t cpu_milli = 0, memory_bytes = 0, nonzero_cpu_milli = 0, nonzero_memory_bytes = 0;
    std::int64_t gpus = 0;     // whole GPUs held outside GPU groups
    int fraction = 0;          // hundredths, as a member of `group`
    std::string compute_mode{};  // a member's KAI 0.18 compute mode ("" = time-slicing), CON-5b
    std::string group;         // the GPU group it belongs to (member or reservation)
    bool reservation = false;  // a KAI reservation pod: holds the group's GPU
    int gpu_index = -1;        // reservation pods: the physical GPU the kubelet gave it
    bool operator==(const Holding&) const = default;
  };
  // The KAI version decides whether pods have compute modes (0.18) or not (0.17).
  explicit Ledger(KaiVersion kai_version = KaiVersion::k0_18) : kai_version_(kai_version) {}

  // Nullopt for pods holding nothing (unbound or terminal).
  static std::optional<Holding> holding_of(const SimPod& p, KaiVersion kai_version = KaiVersion::k0_18);

  // Feed side.
  void upsert_pod(const SimPod& p);
  void remove_pod(const std::string& key);
  void upsert_node(const SimNode& n);
  void remove_node(const std::string& name);
  bool has_node(const std::string& name) const;

  // Places `pod` and, when it fits, assumes it on the chosen node. A KAI fraction that needs a new group gets
  // group id `new_group_id` and an assumed reservation pod named reservation_pod_name(node, suffix).
  Decision schedule(const std::string& pod_key, const PlacementPod& pod, Strategy strategy,
                    const std::string& new_group_id = "", const std::string& reservation_suffix = "");
  // Whether `pod_key` holds anything here, assumed or confirmed. A pod the caches still show unbound may be
  // held already: its binding is in flight or not yet seen by the pod cache, and it must not be placed twice.
  bool holds(const std::string& pod_key) const;
  // Drops an assumption (the binding or reservation failed). Confirmed holdings are left alone.
  void forget(const std::string& key);

  // Reservation pods (keys) of GPU groups that lost their last member; the groups are marked dying so no
  // new fraction is placed there while the reservation pod goes away.
  std::vector<std::string> claim_empty_groups();
  // Keys of holdings confirmed by the feed (for resyncs against the store).
  std::vector<std::string> confirmed_keys() const;

  NodeUse use_of(const std::string& node) const;
  std::size_t node_count() const;

  // Called (outside the lock) when capacity may have been freed: a holding went away or shrank, a node
  // changed. Register before the feeds start.
  void on_capacity_freed(std::function<void()> cb);
  // Called (outside the lock) when a reserved GPU group lost its last member.
  void on_group_emptied(std::function<void()> cb);

 private:
  struct Entry {
    Holding h;
    bool assumed = false;
  };
  // Both return whether the change freed capacity / emptied a reserved group.
  void add(const std::string& key, const Holding& h);
  void sub(const std::string& key, const Holding& h, bool& emptied);
  void notify(bool freed, bool emptied);

  const KaiVersion kai_version_;
  mutable std::mutex mu_;
  std::map<std::string, PlacementNode> nodes_;  // name order: deterministic ties
  // Entries are never erased, so the cached slots' pointers stay valid (unordered_map nodes do not move).
  std::unordered_map<std::string, NodeUse> uses_;
  std::vector<NodeSlot> slots_;  // nodes_ with their uses, rebuilt when a node or a use entry appears
  bool slots_dirty_ = true;
  std::unordered_map<std::string, Entry> pods_;
  std::unordered_map<std::string, std::set<std::string>> reservation_pods_;  // group id -> pod keys
  std::vector<std::function<void()>> freed_cbs_, emptied_cbs_;
};

}  // namespace kubex::sim::cluster::sched
