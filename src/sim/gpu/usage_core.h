// The pure core of the GPU model: for one instant, place GPU containers on physical GPUs, share SM time on
// over-subscribed GPUs, compute memory footprints and decide CUDA out-of-memory crashes. No I/O, no clock
// reads and no state beyond the parse cache, so every rule is table-tested (tests/unit/sim/gpu).
#pragma once

#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "sim/cluster/kai_modes.h"
#include "sim/cluster/model.h"
#include "sim/gpu/demand.h"
#include "sim/gpu/sample.h"

namespace kubex::sim::gpu {

// How a fraction's memory is held (SIM-4): kNone (NonMemoryEnforced, Disabled, and everything under 0.17 without
// HAMi-core), kHamiCore (capped at the request), kNvFractions (KAI 0.18: capped at the gpu-fraction.limit, and
// memory above the request is reclaimed first on a contended GPU).
enum class MemoryIsolation { kNone, kHamiCore, kNvFractions };
// ClusterConfig::memory_isolation ("None" | "HAMiCore").
MemoryIsolation parse_isolation(const std::string& s);
// The isolation of a KAI version and sharing mode: HamiCore -> kHamiCore; NvFractions under 0.18 ->
// kNvFractions; anything else -> kNone.
MemoryIsolation isolation_for(const cluster::KaiSettings& kai);

// SM contention on one GPU: when the demands sum above 100 (percent of the GPU), each gets
// demand × 100 / sum; otherwise each gets its demand.
std::vector<double> share_sm(const std::vector<double>& demands);

// A container's use of one GPU's memory, for the overflow decision without isolation.
struct Tenant {
  common::TimePoint started;  // the pod's start time
  std::string pod;            // "ns/name"
  std::size_t container = 0;  // position in the pod
  double memory_mib = 0;      // its working set on this GPU
  // NvFractions: its request on this GPU (gpu-fraction × device memory); infinite for whole-GPU containers,
  // which have no reclaimable part.
  double request_mib = std::numeric_limits<double>::infinity();
};
// When the working sets exceed `capacity_mib` (a GPU's usable memory: its memory less the driver reserve),
// the newest tenants (latest start, then the greater pod name, then the later container) crash one by one
// until the others fit. Returns their positions in `tenants`.
std::vector<std::size_t> overflow_victims(const std::vector<Tenant>& tenants, double capacity_mib);

// NvFractions (SIM-4, KAI-4): memory above a fraction's request is reclaimable. When the working sets exceed
// `capacity_mib`, the tenants using more than their request crash first, the largest excess (working set −
// request) first (ties: the overflow order, newest first), until the others fit; only if that is not enough
// do the rest crash in overflow_victims' order. `excess` tells the two apart.
struct Victim {
  std::size_t index = 0;  // position in `tenants`
  bool excess = false;    // crashed for using more than its request
};
std::vector<Victim> reclaim_victims(const std::vector<Tenant>& tenants, double capacity_mib);

// The crash of one container against its own allocation: under HAMi-core a fraction container may not
// exceed fraction × device memory; under NvFractions not its gpu-fraction.limit × device memory (without a
// limit: its request, fraction × device memory); a whole-GPU container never fits more than its devices' memory less the
// driver reserve of each (SIM-5).
std::optional<std::string> allocation_crash(const GpuContainer& g, double working_set_mib, double device_mib,
                                            MemoryIsolation isolation, double driver_reserve_mib = 0);

// The demand of a container at `now`: {SM percent of one GPU, memory working set MiB}. Absent or invalid
// annotations count as 0; `invalid` receives the keys of invalid ones (with the parse error).
struct Demand {
  double sm_percent = 0, memory_mib = 0;
};
Demand container_demand(const cluster::SimPod& pod, const std::string& container, common::TimePoint now,
                        PatternCache& patterns,
                        std::vector<std::pair<std::string, std::string>>* invalid = nullptr);

// Something wrong with a pod's annotations, reported once as a Warning event.
struct Finding {
  std::shared_ptr<const cluster::SimPod> pod;
  std::string key, value, message;
};

struct Evaluation {
  // Running GPU containers, one per physical GPU, sorted by namespace, pod, container, GPU UUID. The
  // counter field is left at 0 (the GpuModel integrates it).
  std::vector<Sample> samples;
  // "<pod uid>/<container>" -> reason, for containers that crash because their GPU's memory is
  // over-committed (MemoryIsolation::kNone and kNvFractions).
  std::unordered_map<std::string, std::string> crashes;
  std::vector<Finding> findings;
};

// Evaluates the cluster at `now`. Pods count when Running, bound to a known node and started; a fraction
// pod sits on the GPU named by its group's reservation pod (kai-resource-reservation namespace, same
// runai-gpu-group label, same node), a whole-GPU pod on its own sim.kubex.ai/gpu-indices. Pods without
// known indices are skipped.
Evaluation evaluate(const std::vector<std::shared_ptr<const cluster::SimPod>>& pods,
                    const std::vector<std::shared_ptr<const cluster::SimNode>>& nodes,
                    MemoryIsolation isolation, common::TimePoint now, PatternCache& patterns);

// "9000" or "8191.5": MiB values in messages.
std::string format_mib(double mib);

}  // namespace kubex::sim::gpu
