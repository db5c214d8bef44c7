// What kubex's own objects report about themselves (OBS-1, OBS-2, VAL-1, VAL-6, API-4): the condition that
// follows from a validation verdict, and the events that follow from a change of conditions. Pure: the
// controllers (controllers/validity_status.h, controllers/policy_status.h) read the verdicts from the caches,
// write the conditions through act::update_status and hand its `previous` conditions back here.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "api/kinds.h"
#include "api/validate.h"

namespace kubex::decide {

// VAL-6: an invalid object is looked at again after this long (and on every change), never in a loop.
inline constexpr std::chrono::minutes kInvalidRequeue{5};

// OBS-1 condition types and reasons kubex's status controllers write.
inline constexpr const char* kCondValid = "Valid";
inline constexpr const char* kCondAvailable = "Available";
inline constexpr const char* kCondResolved = "AutomationStrategyResolved";
inline constexpr const char* kCondReady = "Ready";
inline constexpr const char* kReasonValid = "Valid";
inline constexpr const char* kReasonInvalidSpec = "InvalidSpec";
inline constexpr const char* kReasonInvalidContract = "InvalidContract";
inline constexpr const char* kReasonResolved = "Resolved";
inline constexpr const char* kReasonStrategyNotFound = "StrategyNotFound";
inline constexpr const char* kReasonStrategyInvalid = "StrategyInvalid";
inline constexpr const char* kReasonReconciled = "Reconciled";
inline constexpr const char* kReasonPrometheusQueryFailed = "PrometheusQueryFailed";
inline constexpr const char* kReasonMetricsNotPerPod = "MetricsNotPerPod";  // TEL-4
inline constexpr const char* kReasonNotEvaluated = "NotEvaluated";
// OBS-2 event reasons.
inline constexpr const char* kEventStrategyResolved = "StrategyResolved";
inline constexpr const char* kEventStrategyNotFound = "StrategyNotFound";

// A condition as kubex writes or reads it (API-1 without observedGeneration and lastTransitionTime).
struct ConditionState {
  std::string type, status, reason, message;  // status: True | False | Unknown
  bool operator==(const ConditionState&) const = default;
};

// The validator's judgement of one object (VAL-1): the False reason is InvalidContract when any error is a
// contract error (VAL-3), else InvalidSpec; the message is the validator's, unchanged.
struct Verdict {
  bool valid = true;
  bool contract = false;
  std::string message;
  const char* reason() const { return contract ? kReasonInvalidContract : kReasonInvalidSpec; }
};
Verdict verdict_of(const api::ValidationReport& report);

// API-4 / VAL-4 for GlobalConfiguration and PolicyEvaluation. The validator checks the built-in singleton
// name (`metadata.name: must be "global-config"`); the engine's singleton is the one named by
// --global-config-name / --policy-evaluation-name. The name rule is re-stated against `configured`, in the
// validator's words and position; every other error is kept as it is. With the default flags this is the
// validator's verdict unchanged.
Verdict singleton_verdict(const api::ValidationReport& report, const std::string& name,
                          const std::string& builtin, const std::string& configured);

// OBS-1 `Valid` of AutomationStrategy, ClusterAutomationStrategy, PolicyEvaluation, and (a kubex addition:
// OBS-1 lists no validity condition for it) GlobalConfiguration: True/Valid, or False with the verdict's
// reason and message.
ConditionState valid_condition(const Verdict& v);

// GpuConsolidationPolicy (CON-11): `Available=False` with InvalidContract/InvalidSpec for an invalid
// object. A valid one gets `Available=Unknown/NotEvaluated` until the consolidation controller, which owns
// Available from its first pass on, has evaluated it.
ConditionState consolidation_condition(const Verdict& v);
// True for an `Available` condition that validation writes (InvalidSpec, InvalidContract, NotEvaluated):
// validation may replace it. Any other Available is the consolidation controller's and is left alone.
bool is_validation_condition(const ConditionState& c);

// OBS-2: one event to record on the object.
struct EventPlan {
  bool warning = false;  // Warning, else Normal
  std::string reason, message;
  bool operator==(const EventPlan&) const = default;
};

// OBS-2: the events that `after` (the conditions just written) calls for, given `before` (the conditions read
// just before the write, act::StatusResult::previous). A condition "changed" when it is new or its status,
// reason or message differs. Then:
//   AutomationStrategyResolved becomes True                     -> Normal  StrategyResolved (its message)
//   AutomationStrategyResolved False/StrategyNotFound, changed  -> Warning StrategyNotFound (its message)
//   any condition False/InvalidSpec|InvalidContract, changed     -> Warning InvalidSpec|InvalidContract
// Identical events are listed once. Re-writing the same conditions (a restart, a requeue) gives no event.
std::vector<EventPlan> condition_events(const std::vector<ConditionState>& before,
                                        const std::vector<ConditionState>& after);

}  // namespace kubex::decide
