// ACT-4/ACT-5: what an Eviction answer means; ACT-6: the in-place note.
#include <map>

#include "decide/actuation/steps.h"
#include "decide/admission/constraints.h"

namespace kubex::decide::actuation {

EvictionOutcome on_eviction_result(EvictionAnswer answer, bool retry_pdb, common::Duration retry_interval) {
  EvictionOutcome o;
  if (answer == EvictionAnswer::kAccepted) {
    o.event_evicted = true;
    return o;
  }
  if (answer == EvictionAnswer::kGone) return o;  // success, nothing to announce on a pod that is not there
  if (answer == EvictionAnswer::kRefusedByBudget) {
    o.metric = "pdb_blocked";
    o.event_blocked = true;
    if (retry_pdb) {
      o.result = Result::kBlockedRetrying;
      o.retry_after = retry_interval;
    } else {
      o.result = Result::kBlocked;
      o.constraint = reason::kPdbBlocked;
      o.remember = true;
    }
    return o;
  }
  o.metric = "error";
  o.result = Result::kBlockedRetrying;
  o.retry_after = retry_interval;
  return o;
}

bool fraction_only_change(const Allocation& desired, const Allocation& live) {
  if (desired.size() != live.size() || desired.empty()) return false;
  std::map<std::string, const GpuAllocation*> l;
  for (const GpuAllocation& g : live) l.emplace(g.container, &g);
  bool differs = false;
  for (const GpuAllocation& d : desired) {
    auto it = l.find(d.container);
    if (it == l.end() || !d.fraction || !it->second->fraction) return false;
    differs = differs || d.value != it->second->value;
  }
  return differs && l.size() == desired.size();
}

std::string in_place_note(bool in_place_resize, const Allocation& desired, const Allocation& live) {
  return in_place_resize && fraction_only_change(desired, live) ? reason::kKaiFractionRequiresRestart : "";
}

}  // namespace kubex::decide::actuation
