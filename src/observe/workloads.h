// The workloads the engine reconciles (SEL-1 top owners: Deployments, StatefulSets, DaemonSets, CronJobs,
// Jobs without a CronJob/AnalysisRun owner, Rollouts, AnalysisRuns, Models, StrimziPodSets), read from the
// informer caches, and what a new pod of each would look like (its pod template; Models and StrimziPodSets have
// none, so one of their live pods stands in, ACT-1). Read-only (DESIGN §3 observe/).
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api/views.h"
#include "decide/policy/candidate.h"
#include "decide/policy/desired.h"

namespace kubex::observe {

struct Caches;

// "Deployment/ml/train": the work-queue key of a workload.
std::string workload_key(const api::WorkloadView& w);

// Every workload of the caches (decide::is_workload_root), in no particular order: a Job owned by a CronJob
// or an AnalysisRun is part of that workload, and a Job owned by anything else is no recognised chain.
std::vector<std::shared_ptr<const api::WorkloadView>> list_workloads(const Caches& caches);
// The workload of a key from workload_key(), or nullptr.
std::shared_ptr<const api::WorkloadView> find_workload(const Caches& caches, const std::string& key);

// The pod a new replica would start from ({metadata, spec}): the pod template, or for owners without one a
// live pod they own (nullopt when there is none).
std::optional<nlohmann::json> pod_template_of(const Caches& caches, const api::WorkloadView& w);
// RBK-1 `original`'s source: the pod template, or for owners without one (Models, StrimziPodSets) the first
// pod of theirs without pod-rightsizing-info (one admission left alone), else one with it (whose recorded
// `from` values decide::actuation::original_from_template puts back), with its spec.schedulerName.
std::optional<nlohmann::json> original_of(const Caches& caches, const api::WorkloadView& w);

// The target containers of that pod (SPEC §0) with their GPU allocations; empty when there is no template.
std::vector<decide::policy::TargetContainer> target_containers_of(const Caches& caches, const api::WorkloadView& w);

// The workloads as the controllers that reconcile them read them: the informer caches in the engine
// (cached_workload_views, over the functions above), a fake in controller tests.
class WorkloadViews {
 public:
  virtual ~WorkloadViews() = default;
  // Every workload (list_workloads).
  virtual std::vector<std::shared_ptr<const api::WorkloadView>> list() const = 0;
  // The workload of a workload_key(), or nullptr (find_workload).
  virtual std::shared_ptr<const api::WorkloadView> find(const std::string& key) const = 0;
  // The target containers of its pod template (target_containers_of).
  virtual std::vector<decide::policy::TargetContainer> target_containers(
      const api::WorkloadView& w) const = 0;
};
std::shared_ptr<const WorkloadViews> cached_workload_views(const Caches& caches);

// The workload as the policy decisions see it.
decide::policy::Workload decision_workload(const api::WorkloadView& w);

// Calls `fn(view)` for every added or updated workload of the caches (not for deletions: a deleted workload
// has no annotations to keep). Register before the informers start.
void on_workload_changes(const Caches& caches, std::function<void(const api::WorkloadView&)> fn);

}  // namespace kubex::observe
