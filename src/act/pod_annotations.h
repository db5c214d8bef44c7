// Pod annotation writes outside admission (OBS-3): the actuation controller's `automation-constraints`, patched
// only when a pod's set of reasons changes. One JSON merge patch of metadata.annotations per write.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "common/log.h"
#include "kube/client/client.h"

namespace kubex::act {

class PodAnnotationWriter {
 public:
  virtual ~PodAnnotationWriter() = default;
  // Sets each `set` entry; a nullopt value removes the key. A pod that is gone is not an error.
  virtual kube::KResult<void> write(const std::string& ns, const std::string& pod,
                                    const std::map<std::string, std::optional<std::string>>& set) = 0;
};

// Through `client`; each write is logged with `log`.
std::shared_ptr<PodAnnotationWriter> client_pod_annotation_writer(std::shared_ptr<kube::Client> client,
                                                                  common::Logger log);

}  // namespace kubex::act
