// Pure placement logic of kubex-sim's schedulers (DESIGN §2: no I/O, no clock, no globals).
//
// Filters follow kube-scheduler's plugin order and wording: NodeUnschedulable, TaintToleration (NoSchedule and
// NoExecute; a NotReady node carries node.kubernetes.io/not-ready:NoSchedule like the node lifecycle controller
// sets it), NodeAffinity (nodeSelector plus required nodeSelectorTerms), NodeResourcesFit (pods, cpu, memory,
// whole nvidia.com/gpu). An unschedulable pod gets kube's message:
//   0/4 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 3 Insufficient nvidia.com/gpu.
//
// Scoring:
//  - default-scheduler: LeastAllocated over cpu and memory (the mean of the free percentages after placing the
//    pod), minus 50 per PreferNoSchedule taint the pod does not tolerate; ties go to the node name.
//  - kai-scheduler (binpack, placed like KAI v0.13, SPEC SIM-9): a node's GPUs are whole GPUs (held by whole-GPU
//    pods) and GPU groups (`runai-gpu-group`: one physical GPU shared by fractions whose sum stays <= 1.00, in
//    integer hundredths). A fraction goes to a node that has an existing group it fits in (flat: how full that
//    group is does not matter), then to the node with fewer free whole GPUs, then by node name; on that node it
//    joins the fullest group that fits (first in GPU order on ties), and opens a new group on a free GPU only when
//    none fits. Under KAI 0.18 fractions of different compute modes never share a GPU (CON-5b): a group takes only
//    fractions of its members' mode (an empty one takes any). Whole-GPU pods go to the node with the fewest free
//    GPUs that still has enough (binpack), then by node name. Pods without GPUs go first to nodes without GPUs,
//    then to the node with the fewest free millicores (KAI's CPU binpack), then by node name; kai-scheduler does
//    not score PreferNoSchedule taints.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/cluster/config.h"

namespace kubex::sim::cluster::sched {

struct Toleration {
  std::string key, op = "Equal", value, effect;  // op: Equal | Exists; empty effect tolerates every effect
};

struct SelectorRequirement {
  std::string key, op;  // In NotIn Exists DoesNotExist Gt Lt
  std::vector<std::string> values;
};

struct NodeSelectorTerm {
  std::vector<SelectorRequirement> match_expressions, match_fields;
};

// What placement needs of a pod.
struct PlacementPod {
  std::map<std::string, std::string> node_selector;
  std::vector<Toleration> tolerations;
  bool has_required_affinity = false;  // requiredDuringSchedulingIgnoredDuringExecution present
  std::vector<NodeSelectorTerm> required_terms;  // ORed
  std::int64_t cpu_milli = 0, memory_bytes = 0;
  std::int64_t gpus = 0;  // whole nvidia.com/gpu
  int fraction = 0;       // KAI gpu-fraction in hundredths (0 = none)
  std::string compute_mode{};  // KAI 0.18 compute mode of a fraction ("" = time-slicing), CON-5b
};

// What placement needs of a node.
struct PlacementNode {
  std::string name;
  std::map<std::string, std::string> labels;
  std::vector<Taint> taints;
  bool ready = true, unschedulable = false;
  std::int64_t cpu_milli = 0, memory_bytes = 0, pods = 110, gpus = 0;  // allocatable
};

// One physical GPU shared by fraction pods (a KAI GPU group).
struct GpuGroupUse {
  std::string id;
  int hundredths = 0;     // sum of the members' fractions
  int members = 0;        // bound, non-terminal fraction pods
  int index = -1;         // physical GPU index (from the reservation pod), -1 while unknown
  int reservations = 0;   // reservation pods holding the GPU (normally 0 or 1)
  bool dying = false;     // the reservation pod is being removed: never chosen
  std::string compute_mode{};  // the members' compute mode ("" = time-slicing); meaningless without members
};

// What the pods bound to a node hold.
struct NodeUse {
  std::int64_t cpu_milli = 0, memory_bytes = 0, pods = 0;
  // Requests with kube-scheduler's scoring defaults (100m cpu, 200Mi memory) for pods that ask for none.
  std::int64_t nonzero_cpu_milli = 0, nonzero_memory_bytes = 0;
  std::int64_t whole_gpus = 0;       // GPUs of whole-GPU pods (reservation pods count through their group)
  std::vector<GpuGroupUse> groups;   // ordered by (index, id); unknown indices last
  std::int64_t gpus_held() const { return whole_gpus + static_cast<std::int64_t>(groups.size()); }
};

struct NodeSlot {
  const PlacementNode* node = nullptr;
  const NodeUse* use = nullptr;
};

enum class Strategy { kDefault, kKai };

struct Decision {
  bool scheduled = false;
  std::string node;
  std::string group;       // KAI fraction placed in an existing group
  bool new_group = false;  // KAI fraction needs a new group (a reservation pod) on `node`
  std::string message;     // when not scheduled
};

// --- parsing (tolerant: malformed parts are skipped, never thrown) ---
std::vector<Toleration> parse_tolerations(const nlohmann::json& list);
std::vector<Taint> parse_taints(const nlohmann::json& list);
// Reads spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution into `pod`.
void parse_required_node_affinity(const nlohmann::json& affinity, PlacementPod& pod);
// GPU-1 hundredths of a fraction (rounded to the nearest hundredth, at least 1).
int fraction_hundredths(double fraction);

// --- filters ---
bool tolerates(const Toleration& t, const Taint& taint);
// The first NoSchedule/NoExecute taint the pod does not tolerate (the implicit not-ready taint included).
std::optional<Taint> untolerated_taint(const PlacementPod& pod, const PlacementNode& node);
int untolerated_prefer_no_schedule(const PlacementPod& pod, const PlacementNode& node);
bool matches_requirement(const SelectorRequirement& r, const std::map<std::string, std::string>& labels);
bool matches_node_affinity(const PlacementPod& pod, const PlacementNode& node);

// Why a node cannot take a pod, in kube's words; empty when it can. Resource reasons may be several.
std::vector<std::string> filter_node(const PlacementPod& pod, const PlacementNode& node, const NodeUse& use,
                                     Strategy strategy);

// For a KAI fraction on one node: the best existing group (fullest that fits, of the same compute mode), "" for
// a new group on a free GPU, or nullopt when neither exists.
std::optional<std::string> fraction_slot(int fraction, const PlacementNode& node, const NodeUse& use,
                                         const std::string& compute_mode = "");

// "0/4 nodes are available: 1 node(s) ..., 3 Insufficient nvidia.com/gpu."
std::string unschedulable_message(std::size_t total_nodes, const std::map<std::string, int>& reasons);

// Filters every node, scores the feasible ones and picks one (deterministically).
Decision place(const PlacementPod& pod, const std::vector<NodeSlot>& nodes, Strategy strategy);

}  // namespace kubex::sim::cluster::sched
