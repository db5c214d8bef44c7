#include "decide/status/strategy_hold.h"

namespace kubex::decide {

StrategyHold strategy_hold(const StrategyHoldInput& in) {
  StrategyHold out;
  if (in.referenced_by.empty()) {
    if (in.has_finalizer) out.finalizer = StrategyHold::Finalizer::kRemove;
    return out;
  }
  if (!in.has_finalizer) {
    if (!in.deleting) out.finalizer = StrategyHold::Finalizer::kAdd;
    return out;  // deleted before the finalizer was added: nothing holds it
  }
  if (in.deleting) {
    std::string by;
    for (const auto& r : in.referenced_by) by += (by.empty() ? "" : ", ") + r;
    out.terminating = ConditionState{kCondTerminating, "True", kReasonStillReferenced, "still referenced by " + by};
  }
  return out;
}

}  // namespace kubex::decide
