// Safe actuation (SPEC §8, ACT-1…ACT-8) as one pure decision per workload and reconcile, VPA-updater style:
// which controller-owned pods differ from what admission would give them now (ACT-1), which of them may be
// evicted and why the others may not (ACT-2, ACT-3, ACT-5 memory, ACT-7 back-off), in what order (ACT-3),
// what each pod's `automation-constraints` should say (OBS-3), the summary result (OBS-4) and when to look
// again. The controller fills Input from observe/ and carries Plan out through act/; nothing here reads a
// clock or the network (DESIGN §3). The per-rule steps are in steps.h, the rollback state machine (RBK) in
// rollback.h.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "api/objects.h"
#include "common/clock.h"
#include "decide/admission/pause.h"
#include "decide/admission/pod_resources.h"
#include "decide/packing/model.h"
#include "decide/packing/gpu_device.h"

namespace kubex::decide {
struct AdmissionInput;
struct AdmissionDecision;
}  // namespace kubex::decide

namespace kubex::decide::actuation {

// ACT-1: per target container with a GPU, its value in hundredths and whether it is a fraction
// (decide::gpu_allocation of read_pod_resources).
using Allocation = std::vector<GpuAllocation>;

// ---------------------------------------------------------------- results and check names

// OBS-4 rightsizingResult of the actuation and rollback phases.
enum class Result { kEvicted, kBlockedRetrying, kBlocked, kInSync, kWouldEvict, kRolledBack };
const char* result_name(Result r);  // "EVICTED", "BLOCKED_RETRYING", …

// failedChecks names (ACT-2, ACT-3, ACT-5, ACT-7). Where SPEC names a check, its name is used; SPEC gives
// none for the automationEnabled and protected-namespace checks, so "automation-disabled" and
// "protected-namespace" are ours. Which checks are also written as constraints: see steps.h.
namespace check {
inline constexpr const char* kAutomationDisabled = "automation-disabled";  // our name (SPEC gives none)
inline constexpr const char* kProtectedNamespace = "protected-namespace";  // our name (SPEC gives none)
inline constexpr const char* kPauseActive = "pause-active";
inline constexpr const char* kPodEvictionDisabled = "pod-eviction-disabled";
inline constexpr const char* kWebhookUnhealthy = "webhook-unhealthy";
inline constexpr const char* kMinReadyDurationNotMet = "min-ready-duration-not-met";
inline constexpr const char* kPodTerminating = "pod-terminating";
inline constexpr const char* kOwnerPodsNotReady = "owner-pods-not-ready";
inline constexpr const char* kJobPodNotEvicted = "job-pod-not-evicted";
inline constexpr const char* kMaxUnavailableExceeded = "max-unavailable-exceeded";
inline constexpr const char* kPdbBlocked = "pdb-blocked";
inline constexpr const char* kReplacementNotMutated = "replacement-not-mutated";
inline constexpr const char* kReplacementDoesNotFit = "replacement-does-not-fit";  // ACT-2a
inline constexpr const char* kResizeHarmedWorkload = "resize-harmed-workload";  // ACT-10 (1): our name
inline constexpr const char* kEvictionFailed =
    "eviction-failed";  // our name: an answer other than 2xx/404/429
}  // namespace check

// One failed check: its name (failedChecks) and the constraint reason it writes on the pod ("" when the
// check is logged only: OBS-3's transient waits).
struct Check {
  std::string name;
  std::string constraint;
  friend bool operator==(const Check&, const Check&) = default;
};

// ---------------------------------------------------------------- inputs

// What one decision needs from the governing strategy (or, in a rollback, the recorded one; built-in defaults
// when it is gone, RBK-2), GlobalConfiguration, webhook health and the engine's flags.
struct Settings {
  bool automation_enabled = true;    // GlobalConfiguration spec.automationEnabled
  bool protected_namespace = false;  // the namespace matches spec.protectedNamespacePatterns
  bool webhook_healthy = true;       // PodAdmissionWebhookHealthy=True (Unknown counts as unhealthy)
  bool dry_run = false;              // --dry-run (ACT-8)
  // The strategy (SPEC §1.1).
  bool pause_check = true;       // safetyChecks.enablePauseUntilAnnotationCheck
  bool eviction_enabled = true;  // podEviction.enabled
  bool retry_pdb = true;         // podEviction.retryPodDisruptionBudget
  bool in_place_resize = true;   // inPlaceResize.enabled
  common::Duration min_ready_duration = std::chrono::seconds(10);
  bool require_owner_pods_ready = false;
  bool respect_max_unavailable = true;
  common::Duration resize_retry_interval = std::chrono::seconds(30);
};

// The strategy half of Settings from a strategy spec; the other fields keep their defaults. A default
// api::StrategySpec gives the built-in defaults.
Settings settings_of(const api::StrategySpec& strategy);

struct PodFacts {
  std::string name;
  std::string uid;
  std::string phase;             // status.phase
  bool controller_owned = true;  // an ownerReference with controller: true (ACT-1)
  common::TimePoint created{};
  bool ready = false;
  common::TimePoint ready_since{};  // lastTransitionTime of Ready=True
  // ACT-3b, ACT-10: when a container of the pod last terminated (lastState.terminated.finishedAt; epoch = never),
  // and the target containers' restarts and exits.
  common::TimePoint last_restart{};
  common::TimePoint started{};  // status.startTime (epoch = not started)
  struct ContainerExit {
    std::string name;
    int restarts = 0;
    bool oom = false;  // lastState.terminated is an out-of-memory exit (OOMKilled, or a CUDA out-of-memory message)
    common::TimePoint last_terminated{};
    friend bool operator==(const ContainerExit&, const ContainerExit&) = default;
  };
  std::vector<ContainerExit> exits;  // target containers that restarted at least once
  bool terminating = false;         // metadata.deletionTimestamp set
  // The pod's annotations kubex reads: pause-until, automation-constraints, pod-rightsizing-info.
  AnnotationMap annotations;
  Allocation live;  // gpu_allocation(read_pod_resources(pod))
  // ACT-1 for Model and StrimziPodSet: the admission decision on this live pod; nullopt = the workload's.
  std::optional<Allocation> desired;

  bool finished() const { return phase == "Succeeded" || phase == "Failed"; }
  bool has_rightsizing_info() const;  // carries automation-webhook.kubex.ai/pod-rightsizing-info
};

struct WorkloadFacts {
  std::string kind;  // SEL-1 owner kind: Deployment, StatefulSet, Job, CronJob, AnalysisRun, Model, …
  std::string ns;    // the workload's (and its pods') namespace
  std::string name;
  std::optional<std::int64_t> replicas;  // spec.replicas
  std::string max_unavailable;           // rolling-update maxUnavailable as written, "" if none
  AnnotationMap annotations;             // the owner's (pause-until)
  AnnotationMap template_annotations;    // the owner's pod template's (pause-until)
  AnnotationMap namespace_annotations;   // the namespace's (pause-until)
  std::vector<PodFacts> pods;            // every pod of the workload
};

// ACT-7 memory, kept by the controller per workload between reconciles (in memory; lost on restart).
struct GuardState {
  std::string desired;                     // desired_key() the back-off belongs to
  int step = 0;                            // k of the next back-off
  std::optional<common::TimePoint> until;  // evictions wait until then
  // The last eviction already judged: its unmutated replacement set off the current step, or it came before
  // the desired value changed.
  std::optional<common::TimePoint> reacted_to;
  friend bool operator==(const GuardState&, const GuardState&) = default;
};

// What the candidates are compared against.
enum class Purpose {
  kResize,    // ACT-1: pods whose live allocation differs from the desired one
  kRollback,  // RBK-2: pods carrying pod-rightsizing-info (no ACT-6, no ACT-7)
};

struct Input {
  Purpose purpose = Purpose::kResize;
  WorkloadFacts workload;
  Settings settings;
  // ACT-1: the allocation admission gives the pod template now (CronJob: its jobTemplate). nullopt = it could
  // not be computed: no pod is a candidate unless it has its own PodFacts::desired.
  std::optional<Allocation> desired;
  std::set<std::string> pdb_blocked;  // ACT-5 memory: pdb_key()s refused with retryPodDisruptionBudget off
  GuardState guard;                   // ACT-7 memory
  std::optional<common::TimePoint> last_eviction;  // the workload's last accepted eviction
  // ACT-5 memory: after a refused (retried) or failed eviction, no eviction before this time (BLOCKED_RETRYING).
  std::optional<common::TimePoint> retry_at;
  // ACT-3 expectations, as client-go's controllers keep them: the evictions the engine has sent (pod uid → when),
  // kept until the cache shows the pod terminating or gone. A pod whose eviction is still expected counts as in
  // flight and is never sent a second one (steps.h pending_evictions()).
  std::map<std::string, common::TimePoint> sent_evictions;
  // ACT-2a: the cluster's GPU nodes and the pods on them, with GlobalConfiguration's memory reserve (CON-2a). The
  // controller fills it whenever needs_pool() says an upsize is possible; an upsize is gated only when it is set.
  std::optional<packing::Pool> pool;
  packing::MemoryReserve reserve;
  // ACT-10: the pods a downsize harmed (harm_guard.h find_harm). They serve nothing, so their eviction waits for
  // no readiness (ACT-3 still counts it); `harm_found_now`: the harm is new this reconcile, its floor is not on the
  // owner yet, and nothing is evicted until it is.
  std::set<std::string> harmed;
  bool harm_found_now = false;
  common::TimePoint now;
};

// ---------------------------------------------------------------- plan

struct PodPlan {
  std::string name;
  bool candidate = false;  // ACT-1 (or RBK-2 in a rollback)
  bool evict = false;      // evict now (never in dry-run)
  Result result = Result::kInSync;
  std::vector<Check> failed;                 // failedChecks, in check order
  std::vector<std::string> applied_filters;  // kai-fraction-requires-restart (ACT-6)
  std::vector<std::string> constraints;      // the actuation reasons this pod carries now, sorted
  // OBS-3: the pod's new automation-constraints value, only when its set of reasons changes ("" = remove the
  // annotation). Never in dry-run (ACT-8) nor while automation is off or the namespace protected. In a rollback, a
  // pod that is no candidate (no pod-rightsizing-info: already in its original form) loses the annotation (RBK-2).
  std::optional<std::string> write_constraints;
  std::string pdb_key;  // pdb_key() of this pod and its desired value (candidates only)
  // ACT-2a: where its replacement would land ("" when not checked), or why it does not fit (CON-6a wording).
  std::string fit_node;
  std::string fit_reason;
};

struct Plan {
  Result result = Result::kInSync;       // the workload's summary line
  std::string pod;                       // the pod the summary line names ("" when no candidate)
  std::vector<Check> failed;             // that pod's failed checks
  std::vector<PodPlan> pods;             // controller-owned, unfinished pods, in eviction order (ACT-3)
  std::vector<std::string> evict;        // pods to evict now, in order; at most budget − in_flight
  std::vector<std::string> would_evict;  // dry-run: the pods a real run would evict now (WouldEvict)
  int budget = 1;
  int in_flight = 0;
  GuardState guard;                           // ACT-7 memory to keep
  bool emit_replacement_not_mutated = false;  // ReplacementNotMutated (Warning) on the owner, once per step
  std::set<std::string> pdb_blocked;          // ACT-5 memory to keep: the keys of current candidates only
  // ACT-3 expectations to keep: the sent evictions the cache does not show yet (the controller adds the ones it
  // sends now).
  std::map<std::string, common::TimePoint> pending_evictions;
  common::Duration requeue_after = std::chrono::minutes(1);  // in [1s, 1m]
};

// The decision for one workload. Candidates run through ACT-2 (and the ACT-5 memory and ACT-7 back-off); the
// ones left are taken in ACT-3 order while in flight + chosen < budget, the rest get
// max-unavailable-exceeded. Dry-run (ACT-8) chooses the same pods but puts them in would_evict with
// WOULD_EVICT and writes nothing.
Plan decide(const Input& in);

// ACT-1: the admission decision (ADM-5…13) for a new pod of the workload now, with pause-until lifted on the pod
// template, the workload, its template and the namespace, and automationEnabled on: ACT-2 judges both itself
// (pause-active, automation-disabled).
AdmissionDecision desired_admission(const AdmissionInput& in);

// ACT-2a: does any candidate of `in` want more GPU than it holds (an upsize, or a fraction becoming whole)? The
// controller then reads the pool snapshot into Input::pool before calling decide(). False in a rollback.
bool needs_pool(const Input& in);

// ---------------------------------------------------------------- ACT-5 eviction outcome

// The memory key for "do not retry until the desired value or the pod changes": the pod uid and the
// desired_key() of its desired value ("rollback" in a rollback).
std::string pdb_key(std::string_view pod_uid, std::string_view desired_key);
// A canonical text of an allocation, containers by name: "app=0.5f,side=2w" (f fraction, w whole).
std::string desired_key(const Allocation& a);

struct EvictionOutcome {
  Result result = Result::kEvicted;
  std::optional<common::Duration> retry_after;  // reconcile again after this
  std::string constraint;                       // "pdb-blocked" when the refusal is recorded
  bool remember = false;           // store the pod's pdb_key (no retry until the value or the pod changes)
  const char* metric = "success";  // kubex_evictions_total result: success | pdb_blocked | error
  bool event_evicted = false;      // PolicyEvaluationEvictResize (Normal) on the pod (ACT-4)
  bool event_blocked = false;      // EvictionBlocked (Warning) on the pod (429)
};

// What the API server answered a policy/v1 Eviction, as act::Evictor reports it.
enum class EvictionAnswer {
  kAccepted,         // 200/201: the pod is now terminating
  kGone,             // 404, or the uid precondition failed: the pod meant is gone
  kRefusedByBudget,  // 429: a PodDisruptionBudget refused it
  kFailed,           // anything else, no answer included
};

// ACT-4/ACT-5: accepted and gone are EVICTED (only an accepted eviction is announced on the pod); a budget's
// refusal is BLOCKED_RETRYING after `retry_interval` with retryPodDisruptionBudget, else BLOCKED with pdb-blocked
// remembered; a failure is BLOCKED_RETRYING after `retry_interval`.
EvictionOutcome on_eviction_result(EvictionAnswer answer, bool retry_pdb, common::Duration retry_interval);

// Folds the outcome of evicting `pod` (one of plan.evict) back into `plan`: the pod's result and failed
// checks (pdb-blocked, or eviction-failed for other errors), its constraints and write_constraints
// (pdb-blocked when recorded), the ACT-5 memory, the requeue (at most retry_after) and the summary.
void apply_outcome(Plan& plan, const Input& in, std::string_view pod, const EvictionOutcome& outcome);

}  // namespace kubex::decide::actuation
