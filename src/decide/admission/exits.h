// ADM-3 exits (3)-(5): the ones decided from the pod, its namespace and global-config alone, before anything
// about the pod's owner is known. Computed by one function for the webhook and the decision both: the
// webhook reads the owner, the namespace annotations and the policies only when there is no such exit
// (`needs_owner`), and decide_admission() skips with the exit's check name. The two cannot disagree.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string_view>

#include "api/objects.h"

namespace kubex::decide {

enum class EarlyExit {
  kNone,                // past (3)-(5): the decision needs the owner (SEL-1, SEL-2)
  kProbePod,            // (3) the webhook-probe annotation is "true" (WHH-2): only the pass marker is written
  kAutomationDisabled,  // (4) global-config automationEnabled is false
  kProtectedNamespace,  // (5) the namespace matches a protectedNamespacePatterns entry
};

// In ADM-3 order: probe, automationEnabled, protected namespace. `pod` may be any JSON (a non-object has
// no probe annotation); `ns` is the pod's namespace (request.namespace).
EarlyExit early_exit(const nlohmann::json& pod, std::string_view ns, const api::GlobalConfigSpec& global);

// OBS-4 failed_checks entry of the exit: "probe-pod", "automation-disabled", "protected-namespace";
// "" for kNone.
const char* exit_check(EarlyExit e);

// Whether the decision goes on to the owner (ADM-3 (6)): only when no exit applies.
inline bool needs_owner(EarlyExit e) {
  return e == EarlyExit::kNone;
}

}  // namespace kubex::decide
