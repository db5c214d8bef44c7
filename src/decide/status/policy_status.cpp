#include "decide/status/policy_status.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "decide/policy/scope.h"

namespace kubex::decide {

namespace {

std::string strategy_invalid_message(api::Kind policy_kind, const std::string& name,
                                     const std::string& message) {
  return std::string(api::info(api::strategy_kind_for(policy_kind)).name) + " \"" + name +
         "\" is invalid: " + message;
}

}  // namespace

std::string strategy_not_found_message(api::Kind policy_kind, const std::string& ns,
                                       const std::string& name) {
  api::Kind k = api::strategy_kind_for(policy_kind);
  std::string out = std::string(api::info(k).name) + " \"" + name + "\" not found";
  if (k == api::Kind::kAutomationStrategy) out += " in namespace \"" + ns + "\"";
  return out;
}

PolicyConditions policy_conditions(const PolicyStatusInput& in) {
  using policy::Resolution;
  PolicyConditions out;
  const std::string strategy_kind = api::info(api::strategy_kind_for(in.kind)).name;
  const bool own_contract = !in.spec.valid && in.spec.contract;
  // A missing reference is reported by the validator (`spec.automationStrategyRef.name: required`); the
  // condition says the same instead of naming a strategy "".
  const std::string not_found = in.strategy_ref.empty()
                                    ? "spec.automationStrategyRef.name: required"
                                    : strategy_not_found_message(in.kind, in.ns, in.strategy_ref);
  const std::string strategy_bad = strategy_invalid_message(in.kind, in.strategy_ref, in.strategy_message);

  if (in.resolution == Resolution::kStrategyNotFound) {
    out.resolved = {kCondResolved, "False", kReasonStrategyNotFound, not_found};
  } else if (own_contract) {
    out.resolved = {kCondResolved, "False", kReasonInvalidContract, in.spec.message};
  } else if (in.resolution == Resolution::kStrategyContract) {
    out.resolved = {kCondResolved, "False", kReasonInvalidContract, strategy_bad};
  } else if (in.resolution == Resolution::kStrategyInvalid) {
    out.resolved = {kCondResolved, "False", kReasonStrategyInvalid, strategy_bad};
  } else {
    out.resolved = {kCondResolved, "True", kReasonResolved,
                    strategy_kind + " \"" + in.strategy_ref + "\" resolved"};
  }

  if (!in.spec.valid) {
    out.ready = {kCondReady, "False", in.spec.reason(), in.spec.message};
  } else if (in.resolution == Resolution::kStrategyNotFound) {
    out.ready = {kCondReady, "False", kReasonStrategyNotFound, not_found};
  } else if (in.resolution == Resolution::kStrategyContract) {
    out.ready = {kCondReady, "False", kReasonInvalidContract, strategy_bad};
  } else if (in.resolution == Resolution::kStrategyInvalid) {
    out.ready = {kCondReady, "False", kReasonInvalidSpec, strategy_bad};
  } else {
    out.ready = {kCondReady, "True", kReasonReconciled, kReadyMessage};
  }
  out.valid = in.spec.valid && in.resolution == Resolution::kResolved;
  out.stamps_evaluation = api::is_static(in.kind) || (api::is_reactive(in.kind) && !out.valid);
  return out;
}

const std::vector<std::string>& recommender_ready_reasons() {
  static const std::vector<std::string> v = {kReasonPrometheusQueryFailed, kReasonMetricsNotPerPod};
  return v;
}

bool is_workload_root(const api::WorkloadView& v) {
  static constexpr std::array<std::string_view, 8> kTop = {"Deployment",    "StatefulSet", "DaemonSet",
                                                           "CronJob",       "Rollout",     "AnalysisRun",
                                                           "StrimziPodSet", "Model"};
  const std::string_view kind = v.kind.view();
  if (std::find(kTop.begin(), kTop.end(), kind) != kTop.end()) return true;
  // SEL-1: Pod→Job→CronJob|AnalysisRun makes the owner the workload; a Job owned by anything else is no
  // recognised chain. Only a Job without a controller is a workload of its own.
  return kind == "Job" && v.controller() == nullptr;
}

policy::Workload scope_workload(const api::WorkloadView& v) {
  policy::Workload w;
  w.kind = v.kind.str();
  w.name = v.name;
  w.ns = v.ns.str();
  for (const auto& [k, val] : v.labels) w.labels.emplace(k.str(), val.str());
  return w;
}

std::int64_t count_matched_workloads(const api::Policy& policy, bool scope_evaluates,
                                     const std::vector<std::shared_ptr<const api::WorkloadView>>& views,
                                     const std::vector<std::string>& protected_patterns) {
  if (!scope_evaluates) return 0;
  std::int64_t n = 0;
  for (const auto& v : views) {
    if (!v || !is_workload_root(*v)) continue;
    if (policy::scope_matches(policy, scope_workload(*v), protected_patterns)) ++n;
  }
  return n;
}

}  // namespace kubex::decide
