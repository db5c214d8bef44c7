// What `kubex explain` (SPEC CLI-1) found out about one pod or workload, as data: explain_cmd.cpp fills it from
// the engine's own observe/ and decide/ code, explain_report.cpp prints it as a table or as the
// cli.kubex.ai/v1alpha1 `Explanation` document. Plain values only, so the report is easy to test.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kubex::engine {

// A constraint reason, a failed check or an exit, with the one sentence that explains it.
struct ExplainReason {
  std::string name;
  std::string sentence;
};

// ADM-4 / ACT-2: the `rightsizing.kubex.ai/pause-until` annotation that pauses a pod, and the object carrying it
// (decide::paused_by's order: the pod, its owner, the owner's pod template, the namespace).
struct ExplainPause {
  std::string source;   // pod | owner | owner template | namespace
  std::string object;   // "Pod/chat-1", "Deployment/chat", "Deployment/chat (pod template)", "Namespace/ml"
  std::string value;    // the annotation's value as written
  std::string meaning;  // "no end", "until <RFC3339>", or why an unreadable value still pauses
  bool checked = true;  // the governing strategy's safetyChecks.enablePauseUntilAnnotationCheck
};

// ADM-3 (7) not-managed: the policy that came closest to matching the workload (decide::policy::nearest_miss) and
// the SEL-3 checks it fails (issue 34 item 8).
struct ExplainNearMiss {
  std::string policy;                 // "ClusterProactivePolicy/kai-gpu-sharing-baseline"
  std::vector<ExplainReason> misses;  // name: the check ("labelSelector"), sentence: why it fails
  std::vector<std::string> labels;    // the label keys its labelSelector misses
  std::string invalid_reason;         // SEL-4: it would not count even if it matched ("" when valid)
  std::size_t more = 0;               // other policies that fail as few checks
};

// One matching policy, in SEL-5 order.
struct ExplainPolicy {
  std::string ref;  // "GpuReactivePolicy/chat" (namespaced kinds: the workload's namespace)
  bool valid = false;
  std::string invalid_reason;      // why SEL-4 does not count it ("" when valid)
  std::string strategy;            // "ClusterAutomationStrategy/kai", "" when missing
  std::vector<std::string> wins;   // SEL-6 slots it provides: "app requests.gpu"
  std::string note;                // SEL-7 loser, or "provides nothing …"
};

// One container and SEL-6 slot.
struct ExplainResource {
  std::string container, slot;  // slot: "requests.gpu", "limits.cpu", …
  std::string current;          // what the pod (or template) has: GPU-2 or a quantity, "unspecified"
  std::string desired;          // the clamped-before value a policy provides; "" = none
  std::string source;           // the providing policy "<Kind>/<name>"; "" = none
  std::string annotation;       // the owner annotation it was read from ("" = the policy's spec)
  std::string applied;          // after clamps and gates: what a new pod gets
  std::vector<ExplainReason> constraints;
};

struct ExplainSample {
  std::string pod, container, allocation;
  std::optional<double> compute_upsize, compute_scale_back, memory_upsize, memory_scale_back;
};

// One signal's offer this cycle (REA-6 upsize, REA-7 scale back, REA-11 out of memory).
struct ExplainRule {
  std::string rule, signal, direction, total, pod;
  bool won = false;  // REA-8 picks it (written when it passes REA-8's acceptance and differs from the stored)
};

// REA-2 for one pod: when it starts to count (its start + minPodMetricsAge).
struct ExplainEligibility {
  std::string pod, eligible_at;  // RFC3339; "" when the pod has not started
  bool eligible = false;         // Running, not terminating, started at least minPodMetricsAge ago
};

struct ExplainReactive {
  std::string policy;
  std::string min_pod_metrics_age;             // "10m"
  std::vector<ExplainEligibility> eligibility;  // every live pod of the workload
  std::string next_cycle;                       // lastEvaluationTime + the check interval ("" = at engine start)
  bool state_present = false;
  std::string state_error;                    // the stored value does not parse (VAL-7: treated as absent)
  std::map<std::string, std::string> baseline;  // container -> GPU-2
  std::string driver, updated_at;
  std::string last_evaluation;  // the policy's status.lastEvaluationTime ("" = never)
  std::string prometheus_url;
  bool queried = false;          // Prometheus answered every query
  std::string prometheus_error;  // why not
  std::vector<ExplainSample> samples;
  std::vector<ExplainRule> rules;
  std::map<std::string, std::string> stored;   // the owner's desired-resource-requests now (container -> GPU-2)
  std::string result;                          // RECOMMENDED | UNCHANGED | NO_DATA (when queried)
  std::map<std::string, std::string> would_write;  // container -> GPU-2 when RECOMMENDED
};

// One target container in the proactive section (PRO-2…PRO-7): what its history says now and what it would hold.
struct ExplainProactiveContainer {
  std::string container;
  std::string allocation;  // "1 (whole GPUs)", "0.36 (KAI fraction)", "none"
  std::optional<double> sm_p95, memory_max;  // percent, as the PRO-2 queries answer
  std::string compute_span, memory_span;     // "96h", "40m"; "" = no samples
  std::string configmap;                     // its ConfigMap entry (clamped), "" = none
  std::string value, source, peak;           // what this evaluation gives it; "" = no value
  std::string reason;                        // why there is no history value
};

struct ExplainProactive {
  std::string policy;
  std::string lookback, memory_lookback;  // "120h"; the memory lookback is trimmed at the last allocation transition
  std::string last_transition;            // RBK-1's newest history entry, "" = none
  std::string ready;                      // the policy's Ready condition: "True Reconciled: …"
  std::string last_evaluation;            // status.lastEvaluationTime ("" = never)
  std::string prometheus_url;
  bool queried = false;
  std::string prometheus_error;
  std::vector<ExplainProactiveContainer> containers;
  std::map<std::string, std::string> stored, stored_source;  // the owner's values now and their recorded source
  std::string result;                                         // RECOMMENDED | UNCHANGED | NO_DATA
  std::map<std::string, std::string> would_write;             // container -> GPU-2 when RECOMMENDED
  // History shorter than PRO-2's span: when kubex reads it again (issue 34 item 11), "" = not waiting.
  std::string history_wait;  // "37m of 1h needed; kubex reads it again at 14:23 UTC (in 23m)"
  std::string next_read;     // RFC 3339
};

struct ExplainPodActuation {
  std::string pod;
  bool in_sync = true;  // ACT-1
  std::string live, desired;
  bool evict_now = false;  // every check passes and the budget has room: the next reconcile evicts it
  std::vector<ExplainReason> blocked_by;  // ACT-2 / ACT-3 checks that fail
  std::optional<ExplainPause> pause;      // what pauses it, when pause-active blocks it
  // ACT-10: how kubex's resize down harmed this pod ("container app, resized from 1 to 0.3 GPU, had an out-of-memory
  // exit within 10 minutes of starting"); "" when it did not.
  std::string harm;
};

// ACT-3b: a replacement kubex's last eviction brought that is not stable yet, so it counts as in flight.
struct ExplainSettling {
  std::string pod;
  bool ready = false;
  std::string ready_since, restarted_at;  // RFC3339, "" = not Ready / never restarted
  std::string stable_at;                  // max(ready since, restarted at) + minReadyDuration; "" while not Ready
};

struct ExplainActuation {
  std::string note;     // why nothing was evaluated ("" = evaluated)
  std::string desired;  // what admission gives a new pod now
  std::string result;   // the workload's OBS-4 result now: IN_SYNC, EVICTED (would), BLOCKED, …
  int budget = 1, in_flight = 0;
  bool webhook_healthy = false;
  std::vector<ExplainPodActuation> pods;
  std::string last_eviction;             // the newest kubex eviction event of the workload's pods ("" = none seen)
  std::string min_ready_duration;        // the strategy's, "10s"
  std::vector<ExplainSettling> settling;  // ACT-3b
  std::vector<std::string> notes;
};

// ACT-10: a harm-guard floor on the owner's actuation-state.
struct ExplainHarmFloor {
  std::string container, floor, until;
};

struct ExplainHistory {
  std::string at, container, from, to, source;
};

struct ExplainRollback {
  bool present = false;
  std::string error;  // the stored value does not parse
  std::string phase, strategy;
  std::map<std::string, std::string> last_applied;
  std::map<std::string, std::string> original;  // container -> its nvidia.com/gpu before kubex
  std::vector<ExplainHistory> history;          // newest last, at most the last 5
};

struct Explanation {
  std::string kind, ns, name;  // the target: "Pod" or a workload kind
  std::vector<std::string> owner_chain;  // "Pod/x", "ReplicaSet/x-5d", "Deployment/x"
  std::string workload;                  // "Deployment/x" ("" = none)
  // ADM-3's exit for an unmanaged target (one line); nullopt when kubex manages it.
  std::optional<ExplainReason> not_managed;
  std::optional<ExplainNearMiss> near_miss;  // with not_managed `not-managed`: the closest policy, if any
  bool on_hold = false;  // RBK-4
  std::vector<ExplainPolicy> policies;
  std::string strategy, mode;
  std::string kai_mode;   // KAI-1: the cluster's gpuSharingMode, for KAI-mode strategies
  std::string kai_limit;  // KAI-2: the burst limit a new pod gets and why, or why it gets none
  std::string kai_warning;  // KAI-2a: api::kFractionLimitOffWarning when it applies to this pod
  std::vector<ExplainHarmFloor> harm_guard;  // ACT-10: the owner's floors in force
  std::string admission_result;  // what admission does to a new pod now: MUTATED, UNCHANGED, SKIPPED
  std::vector<ExplainReason> admission_stops;  // why it stops early (pause-active, …)
  // What pauses the explained pod (its own annotations first) or, for a workload, a pod created now; nullopt when
  // no pause-until is in force.
  std::optional<ExplainPause> pause;
  std::vector<ExplainResource> resources;
  std::vector<ExplainReason> pod_constraints;  // whole-pod reasons (targets: [])
  std::vector<std::string> notes;
  std::optional<ExplainProactive> proactive;
  std::optional<ExplainReactive> reactive;
  std::optional<ExplainActuation> actuation;
  std::optional<ExplainRollback> rollback;
};

}  // namespace kubex::engine
