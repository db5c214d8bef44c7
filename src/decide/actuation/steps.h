// The steps decide() (actuation.h) is composed of, one pure function per SPEC rule, each with its own table
// test: the in-sync check and the candidates (ACT-1), the preconditions (ACT-2), the budget, in-flight count
// and order (ACT-3), the in-place note (ACT-6), the loop guard (ACT-7) and the constraint annotation update
// (OBS-3).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "decide/actuation/actuation.h"

namespace kubex::decide::actuation {

// ---------------------------------------------------------------- ACT-1

// True when every container has the same value in hundredths and the same form (fraction or whole) on both
// sides; a container present on one side only differs. Order does not matter; cpu, memory, queue, scheduler
// and vLLM are not part of an Allocation and so never matter.
bool in_sync(const Allocation& desired, const Allocation& live);

// The desired allocation of `pod`: its own (Model, StrimziPodSet), else the workload's; nullopt when neither.
const std::optional<Allocation>& desired_for(const PodFacts& pod, const std::optional<Allocation>& workload);

// ACT-1: the controller-owned, unfinished pods whose live allocation differs from their desired one (a pod
// with no desired value is never a candidate). Indexes into `pods`, in input order.
std::vector<std::size_t> candidates(const std::vector<PodFacts>& pods,
                                    const std::optional<Allocation>& desired);

// ---------------------------------------------------------------- ACT-2

// The failed checks of one pod, in SPEC order: automation-disabled, protected-namespace, pause-active (when
// the strategy checks pause-until on the pod, owner, owner template or namespace), pod-eviction-disabled,
// webhook-unhealthy, min-ready-duration-not-met (not Ready, or Ready for less than minReadyDuration),
// pod-terminating, owner-pods-not-ready (requireOwnerPodsReady and an unfinished pod of the workload is not
// Ready), job-pod-not-evicted (owner kind Job, CronJob or AnalysisRun).
// Constraints: pause-active, pod-eviction-disabled, webhook-unhealthy and job-pod-not-evicted are written
// (ACT-2 puts them in parentheses and OBS-3 lists the first three; job-pod-not-evicted is no transient wait,
// so ACT-2's parentheses decide); automation-disabled and protected-namespace (the engine keeps its hands
// off) and the transient waits min-ready-duration-not-met, pod-terminating, owner-pods-not-ready are logged
// only (OBS-3).
std::vector<Check> preconditions(const PodFacts& pod, const WorkloadFacts& workload, const Settings& settings,
                                 common::TimePoint now);

// True when the pod-until pause applies to `pod` (pod, owner, owner template, namespace; ADM-4's sources).
bool paused(const PodFacts& pod, const WorkloadFacts& workload, const Settings& settings,
            common::TimePoint now);

// True for the owner kinds whose pods are never evicted: Job, CronJob, AnalysisRun.
bool never_evicted(std::string_view owner_kind);

// ---------------------------------------------------------------- ACT-3

// 1 without respectWorkloadMaxUnavailable; else max(1, maxUnavailable): an integer as is, a percentage of
// spec.replicas (1 when absent) rounded down. Empty, negative or unreadable text (and percentages above 100
// %) give 1.
int budget(bool respect_max_unavailable, std::string_view max_unavailable,
           std::optional<std::int64_t> replicas);

// ACT-3b: a replacement (created after the workload's last eviction) that is not settled yet: not Ready, or Ready
// for less than `min_ready`, or a container of it restarted less than `min_ready` ago. A crash-looping container
// that is briefly Ready between restarts stays unsettled.
bool unsettled_replacement(const PodFacts& p, std::optional<common::TimePoint> last_eviction, common::Duration min_ready,
                           common::TimePoint now);
// When an unsettled replacement that is Ready now settles (nullopt: it is not Ready, or it is settled).
std::optional<common::TimePoint> settles_at(const PodFacts& p, std::optional<common::TimePoint> last_eviction,
                                            common::Duration min_ready, common::TimePoint now);

// ACT-3: the unfinished pods that are not Ready, are terminating or are unsettled replacements (ACT-3b); with
// spec.replicas, at least the replicas that are not Ready-and-staying, counting those with no pod yet (an evicted
// pod is gone and its ReplicaSet has not created the replacement).
struct Settling {
  std::optional<common::TimePoint> last_eviction;
  common::Duration min_ready{};
  common::TimePoint now{};
};
int in_flight(const std::vector<PodFacts>& pods, std::optional<std::int64_t> replicas, const Settling& settling);
// The pods alone (no spec.replicas, no ACT-3b).
int in_flight(const std::vector<PodFacts>& pods);

// Indexes of `pods` in eviction order: Ready pods first, oldest ready_since first, then by name; pods that
// are not Ready after them by name.
std::vector<std::size_t> order(const std::vector<PodFacts>& pods);

// The ACT-3 check: one more eviction is allowed while in_flight < budget.
bool within_budget(int in_flight, int budget);

// How long a sent eviction is expected at most: after this the cache has surely caught up, so a pod still shown
// running was not evicted (client-go's ExpectationsTimeout).
inline constexpr common::Duration kEvictionExpectationTimeout = std::chrono::minutes(5);

// ACT-3 expectations: the entries of `sent` (pod uid → when sent) whose pod the cache still shows unfinished and
// not terminating, sent less than kEvictionExpectationTimeout before `now`. A pod the cache shows terminating or
// no longer has is no longer expected (its own state counts from then on).
std::map<std::string, common::TimePoint> pending_evictions(const std::map<std::string, common::TimePoint>& sent,
                                                            const std::vector<PodFacts>& pods, common::TimePoint now);

// The pods as ACT-2/ACT-3 judge them: a pod whose eviction is pending counts as terminating (in flight, and never
// evicted again).
std::vector<PodFacts> with_pending_evictions(std::vector<PodFacts> pods,
                                             const std::map<std::string, common::TimePoint>& pending);

// ---------------------------------------------------------------- ACT-2a

// True when the replacement would hold more GPU than `live`: a larger total, or a fraction becoming whole GPUs.
bool upsize(const Allocation& desired, const Allocation& live);

// The size a replacement asks KAI for: the fraction in hundredths (1..99) when every container's value is a
// fraction below one GPU (their sum, capped at 99), else 0 with the whole GPUs in `whole` (whole values plus
// fractions rounded up).
struct ReplacementSize {
  Hundredths fraction = 0;
  std::int64_t whole = 0;
};
ReplacementSize replacement_size(const Allocation& desired);

// ---------------------------------------------------------------- ACT-6

// True when both sides name the same containers, every one a fraction on both sides, and some value differs:
// "only the GPU fraction changes".
bool fraction_only_change(const Allocation& desired, const Allocation& live);

// kai-fraction-requires-restart when inPlaceResize.enabled and only the fraction changes; "" otherwise.
std::string in_place_note(bool in_place_resize, const Allocation& desired, const Allocation& live);

// ---------------------------------------------------------------- ACT-7

// resizeRetryInterval × 2^k, capped at 1h (a negative k counts as 0).
common::Duration backoff(common::Duration interval, int k);

// A pod as the loop guard sees it.
struct GuardPod {
  std::string name;
  common::TimePoint created{};
  bool lacks_desired = false;  // a candidate: its live allocation is not the desired one
};

struct GuardOutcome {
  GuardState state;
  bool backing_off = false;            // evictions wait (now < state.until)
  bool emit = false;                   // ReplacementNotMutated: true only when a step starts
  std::vector<std::string> unmutated;  // pods created after the eviction that set the current step, lacking
                                       // the desired allocation (they carry replacement-not-mutated)
};

// ACT-7. A desired value other than state.desired resets the guard (k = 0, no back-off) and counts
// `last_eviction` as judged: its replacements rightly carry the old value. When a pod created after
// `last_eviction` lacks the desired allocation and that eviction has not been judged yet, a step starts:
// until = now + backoff(interval, k), k + 1, emit. One eviction sets off at most one step.
GuardOutcome loop_guard(const GuardState& state, std::string_view desired,
                        std::optional<common::TimePoint> last_eviction, const std::vector<GuardPod>& pods,
                        common::Duration interval, common::TimePoint now);

// ---------------------------------------------------------------- OBS-3 constraints

// The reasons actuation owns on a pod: every one it may write (ACT-2, ACT-5, ACT-6, ACT-7). pause-active is
// shared with admission.
bool actuation_reason(std::string_view reason);

// The pod's automation-constraints after actuation: entries of reasons actuation does not own are kept as
// they are, actuation's are replaced by `mine` (whole-pod entries, `targets: []`). nullopt when the set of
// reasons does not change; "" when nothing is left (remove the annotation). Text that is not a JSON array of
// entries counts as empty.
std::optional<std::string> updated_constraints(std::string_view current,
                                               const std::vector<std::string>& mine);

// The distinct reasons of an automation-constraints value, sorted (unreadable text: none).
std::vector<std::string> constraint_reasons(std::string_view current);

}  // namespace kubex::decide::actuation
