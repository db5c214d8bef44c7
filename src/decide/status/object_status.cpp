#include "decide/status/object_status.h"

#include <algorithm>

namespace kubex::decide {

Verdict verdict_of(const api::ValidationReport& report) {
  Verdict v;
  v.valid = report.ok();
  v.contract = !v.valid && report.contract;
  v.message = report.message();
  return v;
}

Verdict singleton_verdict(const api::ValidationReport& report, const std::string& name,
                          const std::string& builtin, const std::string& configured) {
  const std::string builtin_rule = "must be \"" + builtin + "\"";
  const common::Error wanted{"metadata.name", "must be \"" + configured + "\""};
  common::Errors errors;
  bool placed = false;
  for (const auto& e : report.errors.items()) {
    if (e.path == "metadata.name" && e.message == builtin_rule) {
      // The validator's name rule, re-stated against the configured name.
      if (name != configured && !placed) errors.add(wanted);
      placed = true;
      continue;
    }
    if (name != configured && !placed && e.path.rfind("metadata", 0) != 0) {
      // The name rule comes with the metadata checks, before the spec's (the validator's order).
      errors.add(wanted);
      placed = true;
    }
    errors.add(e);
  }
  if (name != configured && !placed) errors.add(wanted);
  Verdict v;
  v.valid = errors.empty();
  // A singleton's contract errors are impossible (no contract field); a name error is InvalidSpec.
  v.contract = !v.valid && report.contract;
  v.message = errors.str();
  return v;
}

ConditionState valid_condition(const Verdict& v) {
  if (v.valid) return {kCondValid, "True", kReasonValid, "the spec passes validation"};
  return {kCondValid, "False", v.reason(), v.message};
}

ConditionState consolidation_condition(const Verdict& v) {
  if (!v.valid) return {kCondAvailable, "False", v.reason(), v.message};
  return {kCondAvailable, "Unknown", kReasonNotEvaluated,
          "the policy is valid; the consolidation controller has not evaluated it yet (it does every "
          "spec.requeueAfter on the leader)"};
}

bool is_validation_condition(const ConditionState& c) {
  return c.type == kCondAvailable &&
         (c.reason == kReasonInvalidSpec || c.reason == kReasonInvalidContract || c.reason == kReasonNotEvaluated);
}

std::vector<EventPlan> condition_events(const std::vector<ConditionState>& before,
                                        const std::vector<ConditionState>& after) {
  std::vector<EventPlan> out;
  auto add = [&](EventPlan e) {
    if (std::find(out.begin(), out.end(), e) == out.end()) out.push_back(std::move(e));
  };
  for (const auto& a : after) {
    auto it =
        std::find_if(before.begin(), before.end(), [&](const ConditionState& b) { return b.type == a.type; });
    const ConditionState* b = it == before.end() ? nullptr : &*it;
    const bool changed = !b || *b != a;
    if (!changed) continue;
    if (a.type == kCondResolved && a.status == "True") {
      if (!b || b->status != "True") add({false, kEventStrategyResolved, a.message});
      continue;
    }
    if (a.status != "False") continue;
    if (a.type == kCondResolved && a.reason == kReasonStrategyNotFound) {
      add({true, kEventStrategyNotFound, a.message});
    } else if (a.reason == kReasonInvalidSpec || a.reason == kReasonInvalidContract) {
      add({true, a.reason, a.message});
    }
  }
  return out;
}

}  // namespace kubex::decide
