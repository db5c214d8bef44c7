// The validating webhook of the rightsizing.kubex.ai kinds (VAL-1..4, HLM-2): CREATE and UPDATE run the one
// validator (api/validate.h) and deny with 422 Invalid and its message; warnings (VAL-2) are returned either
// way. DELETE is allowed (VAL-4: a referenced strategy is held by the engine's finalizer instead).
#pragma once

#include <memory>

#include "api/kinds.h"
#include "api/validate.h"
#include "decide/policy/catalog.h"
#include "webhook/admission_review.h"

namespace kubex::observe {
class CatalogView;
class KaiQueueNames;
}  // namespace kubex::observe

namespace kubex::webhook {

struct CrValidationDeps {
  const observe::CatalogView* catalog = nullptr;  // VAL-2: global-config's gpuSharingMode
  // VAL-2 inputs: the cluster's KAI queues (null: unknown) and --early-webhook-enabled.
  std::shared_ptr<const observe::KaiQueueNames> kai_queues;
  bool early_webhook_enabled = true;
};

class CrValidation {
 public:
  explicit CrValidation(CrValidationDeps deps) : deps_(std::move(deps)) {}
  AdmissionResponse handle(const AdmissionRequest& req, api::Kind kind) const;

 private:
  CrValidationDeps deps_;
};

}  // namespace kubex::webhook
