// ACT-7: the loop guard against replacements the webhook did not mutate (it failed open).
#include "decide/actuation/steps.h"

namespace kubex::decide::actuation {

common::Duration backoff(common::Duration interval, int k) {
  const common::Duration cap = std::chrono::hours(1);
  if (interval >= cap) return cap;
  common::Duration d = interval < common::Duration::zero() ? common::Duration::zero() : interval;
  for (int i = 0; i < k && d < cap; ++i) d *= 2;  // stops doubling at the cap: no overflow
  return d < cap ? d : cap;
}

namespace {

// Pod creation times have whole seconds (metadata.creationTimestamp) while the eviction time does not: a
// replacement created within the second of its eviction reads as created at the start of that second.
bool created_after(common::TimePoint created, common::TimePoint eviction) {
  return created >= std::chrono::floor<std::chrono::seconds>(eviction);
}

}  // namespace

GuardOutcome loop_guard(const GuardState& state, std::string_view desired,
                        std::optional<common::TimePoint> last_eviction, const std::vector<GuardPod>& pods,
                        common::Duration interval, common::TimePoint now) {
  GuardOutcome out;
  out.state = state;
  // A new desired value resets the guard. Evictions before it are no evidence: their replacements were
  // admitted with the old value and lack the new one rightly. A guard never used (the workload's first
  // reconcile) only learns the value.
  if (state == GuardState{}) {
    out.state.desired = std::string(desired);
  } else if (state.desired != desired) {
    out.state = GuardState{std::string(desired), 0, std::nullopt, last_eviction};
  }
  GuardState& s = out.state;

  if (last_eviction && s.reacted_to != last_eviction) {
    bool unmutated = false;
    for (const GuardPod& p : pods) unmutated = unmutated || (p.lacks_desired && created_after(p.created, *last_eviction));
    if (unmutated) {
      s.until = now + backoff(interval, s.step);
      s.reacted_to = last_eviction;
      s.step = s.step < 62 ? s.step + 1 : s.step;
      out.emit = true;
    }
  }
  if (s.until && s.reacted_to) {
    for (const GuardPod& p : pods) {
      if (p.lacks_desired && created_after(p.created, *s.reacted_to)) out.unmutated.push_back(p.name);
    }
  }
  out.backing_off = s.until && now < *s.until;
  return out;
}

}  // namespace kubex::decide::actuation
