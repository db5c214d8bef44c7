// The drain lifecycle of one GpuConsolidationPolicy as one pure function (SPEC CON-7, CON-7a, CON-8, CON-9, CON-10,
// CON-11; DESIGN §7 "Karpenter disruption"): from the pool snapshot, the drain the policy has under way and `now`,
// what the controller does next: taint a node, evict which pods, wait, report the drain done, blocked or aborted,
// report why nothing is drained, or (dry run) what would be. The controller observes, calls next_drain_step() and
// carries the step out; right before the taint and before each eviction it reads the pool again and asks
// recheck_drain() (CON-7a).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "decide/packing/model.h"
#include "decide/packing/plan.h"

namespace kubex::decide::packing {

// A drain under way: the node and when it started (status drainingNode, drainStartTime).
struct DrainUnderWay {
  std::string node;
  common::TimePoint start{};
};

struct DrainInput {
  Pool pool;        // the policy's pool now (CON-1, CON-2)
  Options options;  // threshold, policy name, reserve (CON-2a)
  std::optional<DrainUnderWay> drain;
  // CON-9: another policy is draining a node of an overlapping pool ("<policy> (node <n>)"); "" when none.
  std::string other_draining;
  bool dry_run = false;                                       // CON-11
  common::Duration drain_timeout = std::chrono::minutes(10);  // CON-8
  common::TimePoint now{};
};

enum class DrainAction {
  kReport,    // nothing to do but write the status (NoCandidate, or waiting for another policy's drain)
  kTaint,     // CON-7 (1)…(4): taint `node`, record the drain, then evict (after recheck_drain)
  kEvict,     // CON-7 (3): evict `evict` (the drain's pods not yet leaving; 429s are retried here)
  kWait,      // every pod of the drain is leaving: wait
  kComplete,  // CON-8: no GPU pod left: remove the taint, Drained
  kBlock,     // CON-8: GPU pods left after the timeout: remove the taint, DrainBlocked
  kAbort,     // CON-7a: the drain is no longer feasible: remove the taint, DrainAborted
  kWouldDrain,  // CON-11 dry run
};
const char* action_name(DrainAction a);  // "report", "taint", …

struct DrainDecision {
  DrainAction action = DrainAction::kReport;
  std::string node;                 // the node tainted, evicted from, completed, blocked or aborted
  std::vector<PoolPod> evict;       // kEvict: the pods to evict, in placement order (= KAI's order, CON-6)
  std::vector<Placement> placements;  // kTaint, kWouldDrain: where the pods go
  // The `Available` condition to write ("" = keep the current one: waiting for another policy) and its message.
  std::string reason, message;
  bool warning = false;  // the event is a Warning (DrainBlocked, DrainAborted)
  Plan plan;             // this reconcile's plan: status numbers (CON-11), candidates (CON-12), gpuModels (CON-5a)
};

DrainDecision next_drain_step(const DrainInput& in);

// CON-7a: can every GPU pod still on `node` that is not already leaving go to the other destinations of the pool
// now? A pod already leaving is not placed again (its replacement is counted where it lands); a pod whose
// PodDisruptionBudget the drain's own evictions spent is placed, after the others (the drain's evictions pass over
// it and retry it later, CON-7 (3), so KAI places it last), but does not stop the drain. Any other unmovable pod
// does. The result's `feasible`, `reason` (CON-6a wording, or "unmovable pod <ns>/<name>: <why>" for a pod that
// became unmovable) and `blocker`.
Candidate recheck_drain(const Pool& pool, const std::string& node, const Options& options);

}  // namespace kubex::decide::packing
