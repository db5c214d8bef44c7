// RBK-2…RBK-4: the rollback state machine.
#include "decide/actuation/rollback.h"

#include <algorithm>

#include "api/keys.h"
#include "decide/desired_annotations.h"

namespace kubex::decide::actuation {

namespace {

// The stored state: nullopt when absent; `invalid` when present but unreadable (VAL-7).
std::optional<RollbackState> stored(const RollbackInput& in, bool& invalid) {
  invalid = false;
  if (!in.state_text) return std::nullopt;
  auto s = parse_rollback_state(*in.state_text);
  if (s) return *s;
  invalid = true;
  return std::nullopt;
}

void managed_step(const RollbackInput& in, const std::optional<RollbackState>& state, RollbackPlan& plan) {
  if (in.dry_run) return;  // RBK-1: outside dry-run only
  if (!state) {            // first time managed, or VAL-7: rebuilt with an empty history
    if (in.initial) {
      RollbackState fresh = *in.initial;
      fresh.phase = Phase::kManaged;
      if (!in.strategy.empty()) fresh.strategy = in.strategy;
      plan.write_state = format_rollback_state(fresh);
    }
    return;
  }
  RollbackState next = *state;
  next.phase = Phase::kManaged;  // RBK-3
  if (!in.strategy.empty()) next.strategy = in.strategy;
  if (next != *state) plan.write_state = format_rollback_state(next);
}

void leaving_step(const RollbackInput& in, const std::optional<RollbackState>& state, bool invalid,
                  RollbackPlan& plan) {
  if (!state && !invalid) return;  // never managed, or already rolled back
  RollbackState next;
  if (state) {
    next = *state;
  } else if (in.initial) {
    next = *in.initial;  // VAL-7: rebuilt, then rolled back like a Managed one
    next.strategy.clear();
  }
  const bool starting = !state || state->phase == Phase::kManaged;
  plan.rolling_back = true;
  plan.recorded_strategy = next.strategy;
  if (in.dry_run) {  // nothing is written; decide() reports what would be evicted
    plan.roll_pods = in.pods_with_rightsizing_info;
    return;
  }
  for (const std::string& key : in.owner_annotation_keys) {
    if (rollback_removes(key)) plan.remove_annotations.push_back(key);  // RBK-2 (1)
  }
  plan.event_started = starting;
  if (!in.strategy_allows_eviction || in.pods_with_rightsizing_info.empty()) {  // RBK-2 (3)
    plan.remove_state = true;
    plan.event_completed = true;
    plan.result = Result::kRolledBack;
    if (in.annotate_pods) plan.clear_constraints = in.pods_with_stale_constraints;  // OBS-3: nothing kubex said holds
    return;
  }
  next.phase = Phase::kRollingBack;
  if (!state || next != *state) plan.write_state = format_rollback_state(next);
  plan.roll_pods = in.pods_with_rightsizing_info;  // RBK-2 (2)
}

}  // namespace

std::vector<std::string> stale_constraint_pods(const std::vector<PodFacts>& pods) {
  std::vector<std::string> out;
  for (const PodFacts& p : pods) {
    if (!p.controller_owned || p.finished() || p.has_rightsizing_info()) continue;
    if (p.annotations.count(api::keys::kAutomationConstraints)) out.push_back(p.name);
  }
  return out;
}

bool rollback_removes(std::string_view key) {
  for (std::string_view state : {std::string_view(api::keys::kReactiveStateSuffix),
                                 std::string_view(api::keys::kProactiveStateSuffix)}) {
    if (key.size() > state.size() && key.ends_with(state)) return true;
  }
  return is_desired_key(key);
}

RollbackPlan rollback_step(const RollbackInput& in) {
  RollbackPlan plan;
  if (in.on_hold) return plan;  // RBK-4
  bool invalid = false;
  const std::optional<RollbackState> state = stored(in, invalid);
  if (in.managed) {
    managed_step(in, state, plan);
  } else {
    leaving_step(in, state, invalid, plan);
  }
  return plan;
}

}  // namespace kubex::decide::actuation
