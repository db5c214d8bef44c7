// GPU node consolidation planning (SPEC §9): per-GPU occupancy (CON-2, CON-3), candidates (CON-4), destinations
// (CON-5), feasibility by a placement strategy (CON-6, CON-6a; KAI binpack in drain order by default, strategy.h), the
// NoCandidate message (CON-10) and the status numbers (CON-11); and, for `kubex plan consolidation` (CLI-2),
// the sequence of drains the policy would take if each drain succeeded in turn. Pure: no I/O, no clock.
//
// Controller use (CON-7…CON-9): `Options o; o.threshold_percent = T; o.policy = name; Plan p = plan(pool, o);` then drain
// `p.first_feasible()` if any, else report NoCandidate with `p.message`. Status: p.pool_nodes, p.gpu_capacity,
// format_allocated(p.gpu_allocated), p.estimated_reclaimable_gpus.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "decide/gpu_value.h"
#include "decide/packing/gpu_device.h"
#include "decide/packing/model.h"

namespace kubex::decide::packing {

struct Options {
  std::int32_t threshold_percent = 75;  // spec.utilizationThresholdPercent (CON-4)
  // The planning policy's name. No rule depends on it today: CON-6a's exception for the drained node's own
  // consolidation taint needs no special case, because a node with any consolidation taint is never a
  // destination (CON-5) and is skipped as a candidate (CON-7).
  std::string policy;
  std::string strategy = "kai-binpack";  // a registered PlacementStrategy (strategy.h)
  // Evaluate feasibility only up to the first feasible candidate (what CON-7 needs); later candidates are
  // listed with feasible false and reason "not evaluated".
  bool stop_at_first_feasible = false;
  MemoryReserve reserve;  // CON-2a: GlobalConfiguration spec.consolidation.gpuMemoryReserve
};

// Per node, as CON-2/CON-3 see it.
struct NodeUsage {
  std::string name;
  std::int64_t gpu_capacity = 0;
  Hundredths allocated = 0;             // Σ GPU allocations of counted pods
  std::vector<Hundredths> gpus;         // occupancy per GPU index (CON-3), size gpu_capacity
  bool over_capacity = false;           // occupancy does not fit the GPUs (CON-3: never a destination)
  bool destination = false;             // CON-5 (and not over capacity)
  std::string not_destination;          // why not ("" when it is one): "empty", "not ready", …
  Hundredths cap = kOneGpu;             // CON-2a: how far a fraction may fill one of its GPUs
  std::string product;                  // CON-5a: nvidia.com/gpu.product ("" when unlabelled)
  std::vector<std::string> gpu_modes;   // CON-5b: per GPU, its fractions' compute mode (gpu_device.h)
  // Utilization in hundredths of a percent, rounded down: allocated / capacity (6667 = 66.67 %); 0 when capacity 0.
  std::int64_t utilization_centi_percent() const;
};

// One pod moved by a plan.
struct Placement {
  std::string ns, name;
  Hundredths size = 0;   // allocation (CON-2)
  std::string to;        // destination node
  std::vector<int> gpus;  // GPU indexes on `to`: one for a fraction, k for k whole GPUs
  friend bool operator==(const Placement&, const Placement&) = default;
};

// A pool node as a consolidation candidate (CON-4), in the order they are tried.
struct Candidate {
  std::string node;
  std::int64_t utilization_centi_percent = 0;  // NodeUsage::utilization_centi_percent
  bool candidate = false;  // CON-4 holds; false: `reason` says why it is not one and it is not tried
  bool feasible = false;   // CON-6/CON-6a: every movable GPU pod has a place
  // Not a candidate: "no GPU capacity", "no GPU pods", "utilization 80% is not below 75%", "unmovable pod
  // ns/name: <unmovable>", "already draining for policy <p>". Infeasible: `pod <ns>/<name> (<size>) does not
  // fit[: cpu|memory|node selector|node affinity|taint <key>|gpu]` (CON-6, CON-6a). Feasible: "".
  std::string reason;
  // Feasible: every GPU pod of the node, in placement order, which is the order the drain evicts them in (CON-7)
  // and so the order KAI places their replacements in (CON-6).
  std::vector<Placement> placements;
  // CON-12: `feasible`, `infeasible`, `unmovable` or `above_threshold`; "" for nodes that are none of them (no
  // GPU capacity, no GPU pods, already draining).
  std::string result;
  // CON-12: the first reason: "none" when feasible or above the threshold; for an infeasible node the check that
  // stopped its first unplaceable pod (`gpu`, `cpu`, `memory`, `node selector`, `node affinity`, `taint`,
  // `gpu model`, `compute mode`, `reserve`); for an unmovable one movability.h's unmovable_blocker().
  std::string blocker;
};

// CON-5a: the GPU products of a pool with their node counts, by product ("" = nodes without the label).
struct GpuModelCount {
  std::string product;
  std::int64_t nodes = 0;
  friend bool operator==(const GpuModelCount&, const GpuModelCount&) = default;
};

struct Plan {
  std::int64_t pool_nodes = 0;               // CON-11 poolNodes
  std::int64_t gpu_capacity = 0;             // CON-11 gpuCapacity
  Hundredths gpu_allocated = 0;              // CON-11 gpuAllocated (format_allocated)
  std::int64_t estimated_reclaimable_gpus = 0;  // max(0, capacity - ceil(allocated)) (CON-11)
  std::vector<NodeUsage> nodes;              // by name
  // Candidates first (lowest utilization, then name; CON-4), then the other nodes by name with their reason.
  // Feasibility is evaluated for every candidate (not only up to the first feasible one).
  std::vector<Candidate> candidates;
  std::vector<GpuModelCount> gpu_models;     // CON-5a status.gpuModels
  // `pool: <N> nodes, <C> GPUs, <A> allocated; <why>` (CON-10) when no candidate is feasible; "" otherwise.
  // When more than one node is below the threshold, or the only ones are unmovable, `<why>` goes on with
  // `; <k> below <T>%: <n> <blocker>, …` (most frequent first); a pool of several GPU products adds
  // `; mixed GPU models: <product> (<n> nodes), …; drains stay within one model` (CON-5a).
  std::string message;
  std::string error;  // an unknown strategy name; nothing else is computed then

  const Candidate* first_feasible() const;  // the node CON-7 drains, or nullptr
};

Plan plan(const Pool& pool, const Options& options);

// "1.50": a hundredths amount with exactly two decimals (CON-10, CON-11 gpuAllocated).
std::string format_allocated(Hundredths h);
// "50%", "66.67%", "3.1%": a utilization_centi_percent value.
std::string format_percent(std::int64_t centi_percent);

// CLI-2: drains taken one after the other, each assumed to succeed: the moved pods land where the plan put
// them, the drained node keeps only its pods without GPU (so it is empty and no destination). Stops at the
// first plan with no feasible candidate (`final_plan`), or after `max_steps`.
struct DrainStep {
  std::string node;
  std::int64_t utilization_centi_percent = 0;
  std::vector<Placement> placements;
};
struct DrainSequence {
  std::vector<DrainStep> steps;
  Plan final_plan;                      // the plan after the last drain (its `message` says why it stops)
  std::int64_t gpus_freed = 0;          // Σ capacity of the drained nodes
  std::int64_t lower_bound_gpus = 0;    // ⌈Σ allocations⌉ of the pool
  std::int64_t gpus_in_use_after = 0;   // capacity of nodes still holding a GPU allocation after the drains
};
DrainSequence drain_sequence(const Pool& pool, const Options& options, std::size_t max_steps = 10'000);

}  // namespace kubex::decide::packing
