// The owner-annotation writer (DESIGN §3 act/): sets and removes annotations of a workload object with one
// JSON merge patch guarded by the object's resourceVersion, so a concurrent change is never overwritten with
// stale values (409 -> re-read by the caller's next reconcile).
#pragma once

#include <expected>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/log.h"
#include "kube/client/client.h"

namespace kubex::api {
struct WorkloadView;
}

namespace kubex::act {

struct OwnerRef {
  std::string api_version, kind, ns, name, resource_version;
};

// apiVersion of a workload kind ("Deployment" -> "apps/v1"), "" for kinds kubex does not own.
const char* owner_api_version(const std::string& kind);

// The REST path of a workload object ("/apis/apps/v1/namespaces/ml/deployments/train").
std::string owner_path(const OwnerRef& owner);

// `set` values are written as given; `remove` keys are deleted. No request when both are empty.
kube::KResult<void> patch_owner_annotations(kube::Client& client, const OwnerRef& owner,
                                            const std::map<std::string, std::string>& set,
                                            const std::vector<std::string>& remove);

// What writing a workload's annotations came to. A workload that is gone is done; a 409 means the cache is
// behind the object (kStale: reconcile again once the informer has the new version, not an error).
enum class OwnerWrite { kNothing, kDryRun, kWritten, kGone, kStale };

// Sets and removes annotations of a workload (AnnotationWriter in production over patch_owner_annotations,
// guarded by the cached resourceVersion; a fake in tests). `what` names the change in logs and errors
// ("owner annotations", "proactive recommendations").
class AnnotationWriter {
 public:
  virtual ~AnnotationWriter() = default;
  virtual std::expected<OwnerWrite, std::string> write(const api::WorkloadView& w,
                                                       const std::map<std::string, std::string>& set,
                                                       const std::vector<std::string>& remove,
                                                       const std::string& what) = 0;
};

// Through `client`; with `dry_run` only logs what it would do (ADM-15, ACT-8). Each write is logged with
// `log` (the caller's logger name).
std::shared_ptr<AnnotationWriter> client_annotation_writer(std::shared_ptr<kube::Client> client, bool dry_run,
                                                           common::Logger log);

}  // namespace kubex::act
