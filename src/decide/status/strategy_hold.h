// VAL-4 "strategy DELETE": a strategy that policies reference carries the finalizer
// `rightsizing.kubex.ai/referenced`, so deleting it is allowed and only completes once its last referencing
// policy is gone (`kubectl delete -f` of a file holding the strategy and its policies completes in any order).
// Pure: what the `strategyhold` controller (controllers/strategy_hold.h) does with one strategy.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "decide/status/object_status.h"

namespace kubex::decide {

// The finalizer (SPEC VAL-4; kept here rather than in api/keys.h, which nearly every file includes).
inline constexpr const char* kReferencedFinalizer = "rightsizing.kubex.ai/referenced";
inline constexpr const char* kCondTerminating = "Terminating";
inline constexpr const char* kReasonStillReferenced = "StillReferenced";

struct StrategyHoldInput {
  bool has_finalizer = false;  // metadata.finalizers holds rightsizing.kubex.ai/referenced
  bool deleting = false;       // metadata.deletionTimestamp is set
  std::vector<std::string> referenced_by;  // the referencing policies, "Kind/name", sorted
};

struct StrategyHold {
  enum class Finalizer { kKeep, kAdd, kRemove };
  Finalizer finalizer = Finalizer::kKeep;
  // While a deleted strategy is held: `Terminating=True/StillReferenced`, "still referenced by <Kind>/<name>, …".
  std::optional<ConditionState> terminating;
};

// Adds the finalizer to a referenced strategy that is not being deleted (the API server refuses new finalizers on
// an object being deleted); removes it once nothing references the strategy, deleted or not.
StrategyHold strategy_hold(const StrategyHoldInput& in);

}  // namespace kubex::decide
