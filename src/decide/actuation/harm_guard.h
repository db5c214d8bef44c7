// ACT-10 "Never leave a workload worse than kubex found it": which pods a downsize harmed, and the floor that keeps
// their containers at the allocation they had before (source `harm-guard`). The floors live in the owner's
// actuation-state (`"harmGuard":{"<container>":{"floor":"1","until":"<RFC3339>"}}`, ACT-9) for 24 h; admission
// reads them from there (floor_of), the actuation controller finds new harm (find_harm) and keeps the floors
// (merge_floors). Pure; light on purpose: the admission decision includes it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "decide/gpu_value.h"

namespace kubex::decide::actuation {

struct PodFacts;
struct HistoryEntry;

// How soon after a pod starts an out-of-memory exit or a second restart counts as harm, and how long a floor lasts.
inline constexpr common::Duration kHarmWindow = std::chrono::minutes(10);
inline constexpr common::Duration kHarmFloorKept = std::chrono::hours(24);
inline constexpr const char* kHarmGuardSource = "harm-guard";

struct HarmFloor {
  Hundredths floor = 0;
  common::TimePoint until{};
  friend bool operator==(const HarmFloor&, const HarmFloor&) = default;
};
using HarmFloors = std::map<std::string, HarmFloor>;  // container -> floor

// One pod a downsize harmed.
struct Harm {
  std::string pod;
  std::string container;  // the container kubex resized down
  Hundredths from = 0;    // the floor: the allocation before this change
  Hundredths to = 0;      // what kubex gave it
  std::string signal;     // what showed it: "OOMKilled", "out of memory", "restarted 3 times"
  friend bool operator==(const Harm&, const Harm&) = default;
};

// The pods of a workload that kubex resized DOWN (pod-rightsizing-info: a gpu `to` below its `from`) and whose target
// container was OOM-killed (or exited with a CUDA out-of-memory) or restarted at least twice within kHarmWindow of
// the pod's start. `history` (RBK-1, oldest first) gives the allocation before this change (the `from` of the
// newest entry that reached the pod's value), else pod-rightsizing-info's `from`. `predecessor_crashing`: the pod
// kubex evicted for this change was crashing too, so the resize is not to blame and nothing is found.
std::vector<Harm> find_harm(const std::vector<PodFacts>& pods, const std::vector<HistoryEntry>& history,
                            bool predecessor_crashing, common::TimePoint now);

// Whether kubex resized the pod DOWN: its pod-rightsizing-info has a gpu `to` below its `from` (ACT-10 looks for harm
// only on such pods).
bool resized_down(const PodFacts& pod);

// Whether the pod was crashing when kubex evicted it (an out-of-memory exit or two restarts): its replacement's
// crashes are then not the resize's doing.
bool crashing(const PodFacts& pod);

// The floors to keep: `current` without the expired ones, raised by `found` (until = now + kHarmFloorKept).
HarmFloors merge_floors(const HarmFloors& current, const std::vector<Harm>& found, common::TimePoint now);

// One reconcile's ACT-10 step: the harm found now against the floors the engine remembers and the owner's cached
// actuation-state text (nullopt: none).
struct HarmStep {
  HarmFloors floors;                // the floors to remember and keep on the owner
  std::vector<std::string> harmed;  // the harmed pods (decide() evicts them without waiting for readiness)
  std::vector<Harm> raised;         // harm that raised a floor now: announce it (event, metric, log)
  bool wait_for_owner = false;      // a floor is not on the cached owner yet: evict nothing this reconcile
};
HarmStep harm_step(const HarmFloors& remembered, const std::vector<Harm>& found,
                   const std::optional<std::string_view>& owner_state, bool dry_run, common::TimePoint now);

// The floor of `container` in an owner's actuation-state text (absent, unreadable or expired: nullopt).
std::optional<Hundredths> floor_of(std::string_view actuation_state, std::string_view container, common::TimePoint now);

}  // namespace kubex::decide::actuation
