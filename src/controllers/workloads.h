// The workloads controllers reconcile (SEL-1 top owners: Deployments, StatefulSets, DaemonSets, CronJobs, Jobs
// without a CronJob/AnalysisRun owner, Rollouts, AnalysisRuns, Models, StrimziPodSets) from the informer
// caches, and what a new pod of each would look like (its pod template; Models and StrimziPodSets have none, so
// one of their live pods stands in, ACT-1).
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api/views.h"
#include "decide/policy/candidate.h"
#include "decide/policy/desired.h"

namespace kubex::kube {
class Informer;
}

namespace kubex::controllers {

struct WorkloadCaches {
  // One informer per workload kind above (optional kinds may be absent APIs: they are simply empty).
  std::vector<std::shared_ptr<kube::Informer>> workloads;
  std::shared_ptr<kube::Informer> pods;        // indexed by owner UID ("owner-uid")
  std::shared_ptr<kube::Informer> namespaces;  // for protected namespaces and pause annotations
  std::string pod_owner_index = "owner-uid";
};

// "Deployment/ml/train": the work-queue key of a workload.
std::string workload_key(const api::WorkloadView& w);

// Every workload of the caches, in no particular order. A Job owned by a CronJob or an AnalysisRun is part of
// that workload, not one itself.
std::vector<std::shared_ptr<const api::WorkloadView>> list_workloads(const WorkloadCaches& caches);
// The workload of a key from workload_key(), or nullptr.
std::shared_ptr<const api::WorkloadView> find_workload(const WorkloadCaches& caches, const std::string& key);

// The pod a new replica would start from ({metadata, spec}): the pod template, or for owners without one a live
// pod they own (nullopt when there is none).
std::optional<nlohmann::json> pod_template_of(const WorkloadCaches& caches, const api::WorkloadView& w);

// The target containers of that pod (SPEC §0) with their GPU allocations; empty when there is no template.
std::vector<decide::policy::TargetContainer> target_containers_of(const WorkloadCaches& caches,
                                                                  const api::WorkloadView& w);

// The workload as the policy decisions see it.
decide::policy::Workload decision_workload(const api::WorkloadView& w);

}  // namespace kubex::controllers
