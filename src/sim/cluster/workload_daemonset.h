// DaemonSet controller of the simulated cluster (kube-controller-manager's daemon controller): one pod per
// eligible node (nodeSelector, required node affinity, NoSchedule/NoExecute taints against the pod's
// tolerations plus the standard DaemonSet tolerations), each pinned to its node by a required node affinity
// on metadata.name and left to the default scheduler; RollingUpdate within maxUnavailable, or OnDelete.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "sim/cluster/config.h"
#include "sim/cluster/model.h"
#include "sim/cluster/workload_common.h"

namespace kubex::sim::cluster {

struct Toleration {
  std::string key, op = "Equal", value,
                   effect;  // empty effect: every effect; Exists with empty key: every taint
};
bool tolerates(const Toleration& t, const Taint& taint);
std::vector<Taint> parse_taints(const std::string& taints_json);
std::vector<Toleration> parse_tolerations(const nlohmann::json& tolerations);

struct NodeSelectorRequirement {
  std::string key, op;  // In, NotIn, Exists, DoesNotExist, Gt, Lt
  std::vector<std::string> values;
};
struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> expressions;  // on node labels
  std::vector<NodeSelectorRequirement> fields;       // on metadata.name
};
std::vector<NodeSelectorTerm> parse_node_selector_terms(const nlohmann::json& terms);
// Terms are ORed; within a term every requirement must hold; an empty term matches nothing.
bool node_selector_terms_match(const std::vector<NodeSelectorTerm>& terms, const SimNode& node);

// Where a DaemonSet's pods may run, from its pod template.
struct DaemonPlacement {
  std::map<std::string, std::string> node_selector;
  bool has_required_affinity = false;
  std::vector<NodeSelectorTerm> required;  // requiredDuringSchedulingIgnoredDuringExecution terms
  std::vector<Toleration> tolerations;     // the template's plus the DaemonSet defaults
};
DaemonPlacement daemon_placement(const nlohmann::json& pod_template);
bool node_should_run_daemon(const DaemonPlacement& p, const SimNode& node);

// The template's tolerations plus those the DaemonSet controller adds (not-ready/unreachable NoExecute;
// disk/memory/pid-pressure and unschedulable NoSchedule; network-unavailable for hostNetwork pods).
nlohmann::json daemon_tolerations(const nlohmann::json& pod_spec);
// The pod's affinity with the required node affinity replaced by matchFields metadata.name In [node].
nlohmann::json pin_to_node(const nlohmann::json& affinity, const std::string& node);
// The node a daemon pod is for: spec.nodeName, else the metadata.name of its required node affinity.
std::string daemon_pod_node(const SimPod& pod);

std::unique_ptr<Subsystem> make_daemonset_controller(WorkloadEnv& env);

}  // namespace kubex::sim::cluster
