// ACT-9: the ACT-5 and ACT-7 memory of a workload kept on its owner, so a restarted engine or a new leader
// continues it instead of retrying. Owner annotation rightsizing.kubex.ai/actuation-state, compact JSON with
// sorted keys (as rollback-state):
//
//   {"loopGuard":{"desired":"app=0.5f","k":2,"reactedTo":"<RFC3339>","until":"<RFC3339>"},
//    "harmGuard":{"<container>":{"floor":"1","until":"<RFC3339>"}},
//    "pdbBlocked":{"<pod uid>":"<desired_key() the refusal was for, or rollback>"}}
//
// `pdbBlocked` holds the pods refused by a PodDisruptionBudget with retryPodDisruptionBudget off (ACT-5: no retry
// until the desired value or the pod changes); `loopGuard` the ACT-7 back-off once it has set off at least once
// (k ≥ 1): the desired value it belongs to, the next step k, the eviction whose unmutated replacement set it off
// and the time evictions wait until; `harmGuard` the ACT-10 floors (harm_guard.h). Any part is left out when empty; an empty state is no annotation. Pure.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "decide/actuation/actuation.h"
#include "decide/actuation/harm_guard.h"

namespace kubex::decide::actuation {

struct ActuationState {
  std::map<std::string, std::string> pdb_blocked;  // pod uid -> desired_key() ("rollback" in a rollback)
  GuardState guard;                                // kept only with step ≥ 1
  HarmFloors harm_floors;                          // ACT-10 harm-guard floors, until they expire
  bool empty() const { return pdb_blocked.empty() && guard.step < 1 && harm_floors.empty(); }
  friend bool operator==(const ActuationState&, const ActuationState&) = default;
};

// The stored value. Anything but a JSON object is an error; unreadable parts (a pdbBlocked value that is not a
// string, a loopGuard without a k ≥ 1, a time that is not RFC3339) are left out.
common::Result<ActuationState> parse_actuation_state(std::string_view text);
// Compact JSON, sorted keys; "" for an empty state (nothing to keep: the annotation goes). `until` is rounded up
// and `reactedTo` down to whole seconds, so a value read back formats the same.
std::string format_actuation_state(const ActuationState& s);

// What a reconcile starts from when the engine holds no memory of the workload (a restart, a new leader): the
// stored value (nullopt = no annotation; unreadable = empty, VAL-7's spirit), without the refusals of pods that
// are not among `pod_uids` any more.
ActuationState read_actuation_state(const std::optional<std::string>& text, const std::vector<std::string>& pod_uids);

// From and to the memory decide() works with: Input::pdb_blocked / Plan::pdb_blocked hold pdb_key()s.
ActuationState actuation_state_of(const std::set<std::string>& pdb_keys, const GuardState& guard,
                                  const HarmFloors& harm_floors = {});
std::set<std::string> pdb_keys_of(const ActuationState& s);

// The owner write that keeps `next` when the owner carries `current`: nullopt when nothing changes, else the
// new value (nullopt inside = remove the annotation).
std::optional<std::optional<std::string>> actuation_state_write(const std::optional<std::string>& current,
                                                                 const ActuationState& next);

}  // namespace kubex::decide::actuation
