// Owner resolution (SEL-1, SEL-2): from a pod's controller ownerReferences to its workload, through the
// recognised chains Pod→ReplicaSet→Deployment|Rollout, Pod→StatefulSet|DaemonSet|Model|StrimziPodSet and
// Pod→Job[→CronJob|AnalysisRun]. Owners come from the informer caches; on a miss the API server is asked
// again until the retry timeout (webhookOwnerResolutionRetryTimeout) passes.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/views.h"
#include "common/clock.h"
#include "decide/policy/candidate.h"
#include "observe/caches.h"

namespace kubex::kube {
class Client;
}

namespace kubex::observe {

struct OwnerResolution {
  bool unknown = false;                           // SEL-2: a recognised owner could not be read in time
  std::shared_ptr<const api::WorkloadView> view;  // the workload (SEL-1); null when there is none
  std::string detail;                             // what was missing, for logs
};

class OwnerResolver {
 public:
  OwnerResolver(const Caches& caches, std::shared_ptr<kube::Client> client);
  OwnerResolution resolve(const std::string& ns, const std::vector<api::OwnerRef>& owners,
                          common::Duration retry_timeout) const;

 private:
  // The owner `ref` in `ns`: from the cache, else from the API server until `deadline`.
  std::shared_ptr<const api::WorkloadView> fetch(const std::string& ns, const api::OwnerRef& ref,
                                                 std::chrono::steady_clock::time_point deadline) const;

  const Caches& caches_;
  std::shared_ptr<kube::Client> client_;
};

}  // namespace kubex::observe
