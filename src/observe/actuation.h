// What the actuation controller observes (DESIGN §3 observe/, §4 "Actuation"): the workloads, what a new pod of
// each would start from (its template, or a live pod for Models and StrimziPodSets), its pods as ACT-1…ACT-3
// read them (live GPU allocation, Ready since when, terminating, kubex's annotations), the namespace's
// annotations (pause-until) and which workload a pod belongs to. Read-only.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api/views.h"
#include "decide/actuation/actuation.h"

namespace kubex::observe {

struct Caches;

class ActuationFacts {
 public:
  virtual ~ActuationFacts() = default;
  virtual std::vector<std::shared_ptr<const api::WorkloadView>> workloads() const = 0;
  // The workload of a workload_key(), or nullptr.
  virtual std::shared_ptr<const api::WorkloadView> find(const std::string& key) const = 0;
  // The pod a new replica would start from (observe::pod_template_of).
  virtual std::optional<nlohmann::json> pod_template(const api::WorkloadView& w) const = 0;
  // What the workload looked like before kubex (observe::original_of; RBK-1).
  virtual std::optional<nlohmann::json> original(const api::WorkloadView& w) const = 0;
  // Every pod of the workload (observe::pods_of), as the actuation decision reads it.
  virtual std::vector<decide::actuation::PodFacts> pods(const api::WorkloadView& w) const = 0;
  virtual std::map<std::string, std::string> namespace_annotations(const std::string& ns) const = 0;
  // The workload_key() of the pod's SEL-1 owner chain through the caches, "" when it has none.
  virtual std::string workload_key_of(const api::PodView& pod) const = 0;
  // ACT-2a: every node of the cluster and the pods counted on it (observe/gpu_inventory.h with a selector that
  // matches every node): where an upsized replacement could land.
  virtual decide::packing::Pool gpu_pool(const std::string& reservation_namespace) const = 0;
};
std::unique_ptr<ActuationFacts> cached_actuation_facts(const Caches& caches);

// ACT-1: the GPU allocation of each target container of a cached pod that has one: its gpu-fraction for the
// fraction container (ADM-12), else its whole nvidia.com/gpu request (limit when there is no request).
decide::actuation::Allocation live_allocation(const api::PodView& pod);
// The pod as the actuation decision reads it.
decide::actuation::PodFacts pod_facts(const api::PodView& pod);

}  // namespace kubex::observe
