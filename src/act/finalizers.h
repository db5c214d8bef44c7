// Finalizers on kubex's own objects (SPEC §1.5: GpuConsolidationPolicy's `rightsizing.kubex.ai/consolidation-
// cleanup`, CON-9). A read-modify-write of metadata.finalizers guarded by the read resourceVersion, retried on
// conflict; skipped when nothing would change.
#pragma once

#include <memory>
#include <string>

#include "kube/client/client.h"

namespace kubex::act {

class FinalizerWriter {
 public:
  virtual ~FinalizerWriter() = default;
  // Adds `finalizer` to the object at `object_path` (an API path) when missing. A vanished object is not_found().
  virtual kube::KResult<void> add(const std::string& object_path, const std::string& finalizer) = 0;
  // Removes it when present; a vanished object is success.
  virtual kube::KResult<void> remove(const std::string& object_path, const std::string& finalizer) = 0;
};

std::shared_ptr<FinalizerWriter> client_finalizer_writer(std::shared_ptr<kube::Client> client);

}  // namespace kubex::act
