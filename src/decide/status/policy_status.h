// The status of the six managing policy kinds (OBS-1 §1.2–1.4): `AutomationStrategyResolved` and `Ready` from
// the policy's own verdict and its strategy resolution (API-3, SEL-4), and `matchedWorkloads`: how many
// workloads (SEL-1 top owners) its scope matches now (SEL-3). Pure.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "api/objects.h"
#include "api/views.h"
#include "decide/policy/candidate.h"
#include "decide/policy/catalog.h"
#include "decide/status/object_status.h"

namespace kubex::decide {

struct PolicyStatusInput {
  api::Kind kind = api::Kind::kStaticPolicy;  // the policy's kind
  std::string ns;                             // the policy's namespace ("" for cluster kinds)
  std::string strategy_ref;                   // spec.automationStrategyRef.name
  Verdict spec;                               // the policy's own verdict (VAL-1)
  policy::Resolution resolution = policy::Resolution::kStrategyNotFound;
  std::string strategy_message;  // the strategy's validator message when it is invalid
};

struct PolicyConditions {
  ConditionState resolved;  // AutomationStrategyResolved
  ConditionState ready;     // Ready
  bool valid = false;       // SEL-4: own spec valid and strategy resolved
  // Whether this status write is the policy's evaluation (`lastEvaluationTime`): a static policy's always; a reactive
  // policy's only while it is not valid (a valid one's is its last cycle's, REA-1, which `kubex explain`'s next
  // cycle counts from); a proactive policy's never (its last completed history evaluation's, PRO-8).
  bool stamps_evaluation = false;
};

// OBS-1. AutomationStrategyResolved: True/Resolved (whether or not a workload matches); else, first match
// wins: StrategyNotFound (`AutomationStrategy "<n>" not found in namespace "<ns>"` /
// `ClusterAutomationStrategy "<n>" not found`), InvalidContract (the policy's own contract error, with the
// validator's message), InvalidContract (the strategy's contract error), StrategyInvalid.
// Ready: True/Reconciled; else, first match wins: the policy's own InvalidContract/InvalidSpec (validator's
// message), StrategyNotFound, the strategy's InvalidContract, InvalidSpec for another strategy error (OBS-1
// has no StrategyInvalid reason for Ready). Strategy messages read `<Kind> "<n>" is invalid: <message>`.
PolicyConditions policy_conditions(const PolicyStatusInput& in);

// `ClusterAutomationStrategy "kai" not found` / `AutomationStrategy "s" not found in namespace "ml"`.
std::string strategy_not_found_message(api::Kind policy_kind, const std::string& ns, const std::string& name);

// Ready=True/Reconciled's message. The reactive recommender writes the same one after a successful cycle, so
// the two writers never flip it back and forth.
inline constexpr const char* kReadyMessage = "the policy and its strategy are valid";

// Ready reasons that another writer owns while the policy is valid (the reactive recommender's
// PrometheusQueryFailed and MetricsNotPerPod): a status controller leaves such a Ready alone (act::StatusChange::keep_reasons).
const std::vector<std::string>& recommender_ready_reasons();

// SEL-1 top owners: Deployment, StatefulSet, DaemonSet, CronJob, Rollout, AnalysisRun, StrimziPodSet, Model,
// and a Job unless its controller is a CronJob or an AnalysisRun (then that owner is the workload).
// ReplicaSets and other kinds are never workloads.
bool is_workload_root(const api::WorkloadView& v);

// The view as SEL-3 sees it (kind, name, namespace, labels).
policy::Workload scope_workload(const api::WorkloadView& v);

// `matchedWorkloads`: the top owners among `views` that `policy`'s scope matches (SEL-3, protected namespaces
// excluded). 0 when the scope does not evaluate.
std::int64_t count_matched_workloads(const api::Policy& policy, bool scope_evaluates,
                                     const std::vector<std::shared_ptr<const api::WorkloadView>>& views,
                                     const std::vector<std::string>& protected_patterns);

}  // namespace kubex::decide
