// The workloads controllers reconcile (SEL-1 top owners: Deployments, StatefulSets, DaemonSets, CronJobs,
// Jobs without a CronJob/AnalysisRun owner, Rollouts, AnalysisRuns, Models, StrimziPodSets) from the informer
// caches, and what a new pod of each would look like (its pod template; Models and StrimziPodSets have none,
// so one of their live pods stands in, ACT-1).
#pragma once

#include <expected>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api/views.h"
#include "decide/policy/candidate.h"
#include "decide/policy/desired.h"

namespace kubex::common {
class Logger;
}
namespace kubex::kube {
class Client;
class Informer;
class Metrics;
}  // namespace kubex::kube
namespace prometheus {
class Counter;
template <typename T>
class Family;
}  // namespace prometheus

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

// Every workload of the caches (decide::is_workload_root), in no particular order: a Job owned by a CronJob
// or an AnalysisRun is part of that workload, and a Job owned by anything else is no recognised chain.
std::vector<std::shared_ptr<const api::WorkloadView>> list_workloads(const WorkloadCaches& caches);
// The workload of a key from workload_key(), or nullptr.
std::shared_ptr<const api::WorkloadView> find_workload(const WorkloadCaches& caches, const std::string& key);

// The pod a new replica would start from ({metadata, spec}): the pod template, or for owners without one a
// live pod they own (nullopt when there is none).
std::optional<nlohmann::json> pod_template_of(const WorkloadCaches& caches, const api::WorkloadView& w);

// The target containers of that pod (SPEC §0) with their GPU allocations; empty when there is no template.
std::vector<decide::policy::TargetContainer> target_containers_of(const WorkloadCaches& caches,
                                                                  const api::WorkloadView& w);

// The workload as the policy decisions see it.
decide::policy::Workload decision_workload(const api::WorkloadView& w);

// Sets and removes annotations of a workload (guarded by the cached resourceVersion), or only logs what it
// would do under --dry-run. A workload that is gone is done; a 409 means the cache is behind the object
// (kStale: reconcile again once the informer has the new version, not an error).
enum class OwnerWrite { kNothing, kDryRun, kWritten, kGone, kStale };
std::expected<OwnerWrite, std::string> write_owner_annotations(
    kube::Client& client, const api::WorkloadView& w, const std::map<std::string, std::string>& set,
    const std::vector<std::string>& remove, bool dry_run, const common::Logger& log, const std::string& what);

// OBS-5 kubex_gpu_recommendations_total{policy_kind,direction}: the GPU values the engine wrote into owners'
// desired-resource-requests annotations, counted when a written value changes
// (decide::gpu_recommendation_directions: initial, upsize, downsize). Every writer of those annotations
// holds one; the family is listed on /metrics from construction, before its first sample.
class GpuRecommendationsCounter {
 public:
  explicit GpuRecommendationsCounter(kube::Metrics* metrics);  // nullptr: counts nothing
  // After `set` was written to `w` (the cached object, so its annotations are the values before): counts
  // each desired-resource-requests key of `set` under the policy kind the key belongs to.
  void written(const api::WorkloadView& w, const std::map<std::string, std::string>& set);

 private:
  prometheus::Family<prometheus::Counter>* family_ = nullptr;
};

}  // namespace kubex::controllers
