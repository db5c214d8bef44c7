// The validating webhook of the rightsizing.kubex.ai kinds (VAL-1..4, HLM-2): CREATE and UPDATE run the one
// validator (api/validate.h) and deny with 422 Invalid and its message; warnings (VAL-2) are returned either
// way. DELETE of a strategy that a policy still references is denied, naming the policies.
#pragma once

#include <functional>
#include <memory>

#include "api/kinds.h"
#include "api/validate.h"
#include "decide/policy/catalog.h"
#include "webhook/admission_review.h"

namespace kubex::observe {
class CatalogView;
}

namespace kubex::webhook {

struct CrValidationDeps {
  const observe::CatalogView* catalog = nullptr;  // for the strategy DELETE check
  std::function<api::ValidationContext()> context;                          // VAL-2 inputs; may be empty
};

class CrValidation {
 public:
  explicit CrValidation(CrValidationDeps deps) : deps_(std::move(deps)) {}
  AdmissionResponse handle(const AdmissionRequest& req, api::Kind kind) const;

 private:
  CrValidationDeps deps_;
};

}  // namespace kubex::webhook
