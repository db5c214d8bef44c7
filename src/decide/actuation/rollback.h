// Rollback (SPEC §8, RBK-1…RBK-4): the owner annotation `rightsizing.kubex.ai/rollback-state` (what the
// workload looked like before kubex, what kubex last applied, a bounded history), and the state machine that
// puts a workload back when it leaves management. Pure: the controller reads the owner and its pods, calls
// rollback_step(), writes what it says and runs the evictions through actuation::decide() with
// Purpose::kRollback and the recorded strategy's settings.
#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "decide/actuation/actuation.h"

namespace kubex::decide::actuation {

// ---------------------------------------------------------------- RBK-1 rollback-state

enum class Phase { kManaged, kRollingBack };
const char* phase_name(Phase p);  // "Managed", "RollingBack"

// One container's nvidia.com/gpu before kubex, as written ("1"); nullopt = absent.
struct OriginalContainer {
  std::optional<std::string> gpu_request, gpu_limit;
  friend bool operator==(const OriginalContainer&, const OriginalContainer&) = default;
};

struct Original {
  std::string scheduler_name = "default-scheduler";  // spec.schedulerName; Kubernetes' default when absent
  std::optional<std::string> queue;                  // label kai.scheduler/queue
  std::optional<std::string> gpu_fraction;           // annotation gpu-fraction
  // Containers (init containers included) with nvidia.com/gpu in requests or limits, by name.
  std::map<std::string, OriginalContainer> containers;
  friend bool operator==(const Original&, const Original&) = default;
};

struct HistoryEntry {
  std::string at;  // RFC3339
  std::string container, from, to;
  std::string mode;    // kai | vanilla | none (no pod-rightsizing-info for the container)
  std::string source;  // "<Kind>/<name>" of the policy, "none" when unknown
  friend bool operator==(const HistoryEntry&, const HistoryEntry&) = default;
};

inline constexpr std::size_t kMaxHistory = 20;

struct RollbackState {
  Phase phase = Phase::kManaged;
  std::string strategy;  // "<Kind>/<name>" of the governing strategy
  Original original;
  std::map<std::string, std::string> last_applied;  // container -> GPU-2 string ("0.7", "1")
  std::vector<HistoryEntry> history;                // oldest first, at most kMaxHistory
  friend bool operator==(const RollbackState&, const RollbackState&) = default;
};

// The stored value. Anything but a JSON object with a phase of Managed/RollingBack is an error (VAL-7: the
// caller rebuilds it from the current template with an empty history). Missing parts read as empty, unknown
// keys are ignored, history entries that are not objects are skipped.
common::Result<RollbackState> parse_rollback_state(std::string_view json);
// Compact JSON with SORTED keys at every level (SPEC shows phase, strategy, original, lastApplied, history;
// nlohmann's objects are sorted, and sorted keys keep the value stable): {"history":[…],"lastApplied":{…},
// "original":{"containers":{"app":{"limits":{"nvidia.com/gpu":"1"},"requests":{"nvidia.com/gpu":"1"}}},
// "gpuFraction":null,"queue":null,"schedulerName":"default-scheduler"},"phase":"Managed","strategy":"…"}.
// `queue` and `gpuFraction` are written as null when absent; `requests`/`limits` always (maybe {}).
std::string format_rollback_state(const RollbackState& s);

// RBK-1 `original` from a pod template, or a pod (the same {metadata, spec} shape: owners without a template
// use the first pod seen without pod-rightsizing-info). A pod that carries pod-rightsizing-info (ADM-16) has
// the `from` values recorded there put back: its scheduler, queue and each container's GPU as admission
// found them. Never throws.
Original original_from_template(const nlohmann::json& pod_or_template);

// container -> GPU-2 string of each allocated container.
std::map<std::string, std::string> applied_of(const Allocation& a);

// The state written when a workload first becomes managed (or rebuilt after VAL-7): phase Managed, the
// strategy, the original of `pod_or_template`, lastApplied = its allocation, no history.
RollbackState initial_state(std::string strategy, const nlohmann::json& pod_or_template);

// What a history entry records about a pod's change: the pod's pod-rightsizing-info (ADM-16) mode and the
// source of each container's gpu change.
struct HistorySource {
  std::string mode = "none";
  std::map<std::string, std::string> sources;  // container -> "<Kind>/<name>"
};
// From the annotation text ("" or unreadable: mode "none", no sources).
HistorySource history_source(std::string_view rightsizing_info);

// RBK-1: for each container of `live` whose GPU-2 string differs from lastApplied (absent: "unspecified"), an
// entry {at, container, from, to, mode, source} is appended and lastApplied updated; the oldest entries are
// dropped beyond kMaxHistory. Returns true when the state changed.
bool append_history(RollbackState& s, const Allocation& live, const HistorySource& src,
                    common::TimePoint now);

// The pod whose allocation the history follows: the newest Running, not terminating, controller-owned pod
// (latest created, then the greatest name), so that a rollout in progress does not flap lastApplied. nullopt
// when there is none.
std::optional<std::size_t> history_pod(const std::vector<PodFacts>& pods);

// ---------------------------------------------------------------- RBK-2…RBK-4 state machine

struct RollbackInput {
  bool managed = false;  // some policy (valid, or invalid and on hold) matches the workload
  bool on_hold = false;  // RBK-4: every matching policy is invalid, or its strategy is missing or invalid
  bool dry_run = false;  // RBK-1: no rollback-state is written in dry-run
  // The owner's rollback-state annotation text; nullopt when absent.
  std::optional<std::string> state_text;
  // What RBK-1 writes when the workload first becomes managed, or when the stored value is invalid (VAL-7):
  // initial_state() of the template (or first unmutated pod); nullopt when there is no source yet.
  std::optional<RollbackState> initial;
  std::string strategy;                            // the governing strategy "<Kind>/<name>" while managed
  std::vector<std::string> owner_annotation_keys;  // every annotation key on the owner
  // Unfinished pods carrying pod-rightsizing-info (RBK-2 (2)), by name.
  std::vector<std::string> pods_with_rightsizing_info;
  // stale_constraint_pods() of the workload's pods: left as they were, they carry a stale automation-constraints.
  std::vector<std::string> pods_with_stale_constraints;
  // OBS-3: pod annotations may be written (false while automation is off or the namespace is protected).
  bool annotate_pods = true;
  bool strategy_allows_eviction = true;  // the recorded strategy's podEviction.enabled (defaults: true)
};

struct RollbackPlan {
  std::optional<std::string> write_state;       // the rollback-state value to write
  bool remove_state = false;                    // remove rollback-state
  std::vector<std::string> remove_annotations;  // owner keys to remove: desired-resource-*, reactive-state
  // Pods to take through ACT-2…5 (actuation::decide with Purpose::kRollback) now.
  std::vector<std::string> roll_pods;
  // Pods whose automation-constraints annotation is removed now (RBK-2, OBS-3): when the rollback completes, the
  // pods_with_stale_constraints (while pods are rolled, decide() with Purpose::kRollback removes them).
  std::vector<std::string> clear_constraints;
  std::string recorded_strategy;  // whose settings the rollback uses ("" = built-in defaults)
  bool event_started = false;     // RollbackStarted (Normal) on the owner
  bool event_completed = false;   // RollbackCompleted (Normal) on the owner
  bool rolling_back = false;      // a rollback is in progress or finished in this step
  std::optional<Result> result;   // ROLLED_BACK when the rollback completes in this step
};

// One step:
//  - on hold (RBK-4): nothing at all;
//  - managed: write initial (outside dry-run) when there is no state or it is invalid; a RollingBack state
//  goes
//    back to Managed (RBK-3); a changed governing strategy is recorded;
//  - not managed with a state (RBK-2): phase RollingBack, desired-resource-*, reactive-state and proactive-state removed,
//    RollbackStarted when it was Managed; the pods carrying pod-rightsizing-info are rolled; rollback-state
//    is removed with RollbackCompleted and ROLLED_BACK when none is left, or at once when the recorded
//    strategy disables evictions. An invalid stored value is rolled back like a Managed one. In dry-run
//    nothing is written and roll_pods still lists the pods (decide() then reports WOULD_EVICT). When the
//    rollback completes, clear_constraints lists the pods_with_stale_constraints (when annotate_pods).
//  - not managed, no state: nothing.
RollbackPlan rollback_step(const RollbackInput& in);

// RBK-2, OBS-3: the pods whose automation-constraints is stale once the workload leaves management: unfinished,
// controller-owned pods that carry the annotation but no pod-rightsizing-info. kubex left them as they were, so
// they are in their original form and are not rolled; what admission or actuation recorded on them
// (no-gpu-recommendation, pause-active, …) described a managed workload. By name, in input order.
std::vector<std::string> stale_constraint_pods(const std::vector<PodFacts>& pods);

// True for "*.rightsizing.kubex.ai/desired-resource-requests|limits" and
// "*.rightsizing.kubex.ai/reactive-state|proactive-state".
bool rollback_removes(std::string_view owner_annotation_key);

}  // namespace kubex::decide::actuation
