#include "webhook/cr_validation.h"

#include <nlohmann/json.hpp>

#include "observe/catalog_view.h"
#include "observe/kai_queues.h"

namespace kubex::webhook {

AdmissionResponse CrValidation::handle(const AdmissionRequest& req, api::Kind kind) const {
  // VAL-4 "strategy DELETE": allowed; the engine's finalizer rightsizing.kubex.ai/referenced holds a strategy
  // that policies still reference until the last one is gone (controllers/strategy_hold.h).
  if (req.operation != Operation::kCreate && req.operation != Operation::kUpdate)
    return AdmissionResponse::allow();
  api::ValidationContext ctx;
  ctx.early_webhook_enabled = deps_.early_webhook_enabled;
  if (deps_.kai_queues) ctx.kai_queues = deps_.kai_queues->names();
  if (deps_.catalog) ctx.gpu_sharing_mode = std::string(api::gpu_sharing_mode(deps_.catalog->catalog()->global()));
  api::ValidationReport report = api::validate(kind, *req.object, ctx);
  AdmissionResponse r =
      report.ok() ? AdmissionResponse::allow() : AdmissionResponse::deny(422, "Invalid", report.message());
  r.warnings = report.warnings;
  return r;
}

}  // namespace kubex::webhook
