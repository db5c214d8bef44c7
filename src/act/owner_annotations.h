// The owner-annotation writer (DESIGN §3 act/): sets and removes annotations of a workload object with one
// JSON merge patch guarded by the object's resourceVersion, so a concurrent change is never overwritten with
// stale values (409 -> re-read by the caller's next reconcile).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kube/client/client.h"

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

}  // namespace kubex::act
