// What one owner holds under the winning proactive policy's prefix (SPEC §7 PRO-5, PRO-7, §2): the GPU values in
// `desired-resource-requests`, the memory peaks in `desired-resource-limits` (the KAI-2 burst limit's `p`) and the
// `proactive-state` that says where each value came from. Pure: the controller passes the ConfigMap entries, this
// evaluation's history outcome per container and the annotations the owner holds now, and writes what comes back.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "decide/gates.h"
#include "decide/gpu_value.h"
#include "decide/proactive/history.h"
#include "decide/proactive/proactive.h"

namespace kubex::decide {

// `<proactive|cwproactive>.rightsizing.kubex.ai/proactive-state`:
// {"historySpan":{"app":"96h"},"peak":{"app":"0.3"},"source":{"app":"history"},"updatedAt":"<RFC3339>"}.
struct ProactiveState {
  std::map<std::string, std::string> source;        // container -> "history" | "configmap"
  std::map<std::string, std::string> history_span;  // history containers -> whole hours ("96h")
  std::map<std::string, std::string> peak;          // history containers -> memory peak in GPUs (GPU-2)
  std::string updated_at;
  friend bool operator==(const ProactiveState&, const ProactiveState&) = default;
};
// nullopt when the text is not a JSON object (VAL-7: read as absent). Entries that are not strings are skipped.
std::optional<ProactiveState> parse_proactive_state(std::string_view text);
// Compact JSON with sorted keys; historySpan and peak are written even when empty, updatedAt when set.
std::string format_proactive_state(const ProactiveState& s);

// "96h": whole hours, rounded down.
std::string span_text(std::chrono::seconds span);

// RBK-1: the time of the newest allocation transition in a rollback-state value (its last history entry), nullopt
// when there is none or the value is unreadable. PRO-2 trims the memory lookback there.
std::optional<common::TimePoint> last_allocation_transition(std::string_view rollback_state);

// One target container's sources for this evaluation.
struct ContainerSources {
  std::string name;
  std::optional<Hundredths> configmap;  // its ConfigMap entry, clamped (PRO-6)
  Clamp configmap_clamp = Clamp::kNone;
  // This evaluation's history outcome (history_value); nullopt when the history could not be read (Prometheus down,
  // a failed query, not evaluated yet): a previous history value then stays.
  std::optional<HistoryValue> history;
};

// What one workload's containers stand on in an evaluation: its ConfigMap entries (null: no set loaded), the history
// read for it (null: not read or the read failed) with the allocations of that read, the headroom and the strategy
// (null: no strategy, so no value).
struct WorkloadSources {
  const RecommendationSet* configmap = nullptr;
  std::string ns, kind, name;
  const std::map<std::string, ContainerHistory>* history = nullptr;
  const std::map<std::string, Allocation>* allocations = nullptr;
  int headroom_percent = 20;
  const api::StrategySpec* strategy = nullptr;
};
// ContainerSources of each target container: the ConfigMap entry clamped (PRO-6), the history value (PRO-2…PRO-4;
// a container without samples is NO_DATA, one without an allocation has none).
std::vector<ContainerSources> container_sources(const std::vector<std::string>& containers, const WorkloadSources& w);

struct OwnerInput {
  std::vector<ContainerSources> containers;  // the target containers, in pod order
  // What the owner holds now under the winner's prefix (nullopt: absent).
  std::optional<std::string> requests, limits, state;
  common::TimePoint now;
};

struct ContainerOutcome {
  std::string name;
  ProactiveChoice choice;
  std::string span, peak;  // history values: what the state records
  std::string reason;      // why there is no value (history's reason), for the summary and `kubex explain`
};

struct OwnerValues {
  // The three annotations as they should be: nullopt = absent (remove when present).
  std::optional<std::string> requests, limits, state;
  bool write = false;             // any of them differs from what the owner holds
  bool requests_changed = false;  // the GPU values themselves changed (RECOMMENDED)
  std::vector<ContainerOutcome> containers;
  std::vector<std::string> clamps;  // "floor-clamped" / "ceiling-clamped", sorted, for values from this evaluation
  std::map<std::string, std::string> after;  // container -> GPU-2 value held afterwards (summary)
  std::map<std::string, std::string> sources;  // container -> "history" | "configmap" (summary `source`)
  // OBS-4 rightsizingResult: RECOMMENDED when a GPU value changed, NO_DATA when no container has one, else
  // UNCHANGED.
  std::string result;
};

// PRO-5 + PRO-7 for one owner. Each container's value: choose_proactive over its ConfigMap entry, this evaluation's
// history and the previous value (its source read from the stored proactive-state; a value without a recorded
// source counts as a ConfigMap value, so it goes when its entry does). The peak goes to limits.gpu (kept with a
// kept value); a ConfigMap value gets the peak of this evaluation's history too, when there is one. `updatedAt`
// is `now` when something changed, else the stored one.
OwnerValues owner_values(const OwnerInput& in);

}  // namespace kubex::decide
