// The working state planning reads and drain simulation changes (internal to decide/packing): every pool node
// with its per-GPU occupancy (CON-3), cap (CON-2a), product (CON-5a), per-GPU compute modes (CON-5b), GPU
// allocation and CPU/memory requested, and every counted pod with the GPUs it sits on; and the placement of one
// pod onto a set of destinations, shared by consolidation (CON-6) and the upsize check of actuation (ACT-2a).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "decide/gpu_value.h"
#include "decide/packing/constraints.h"
#include "decide/packing/model.h"
#include "decide/packing/plan.h"
#include "decide/packing/strategy.h"

namespace kubex::decide::packing::detail {

struct PodState {
  const PoolPod* pod = nullptr;
  std::vector<int> gpus;
};

struct NodeState {
  const PoolNode* node = nullptr;
  std::vector<Hundredths> gpus;
  std::vector<std::string> gpu_modes;  // per GPU: the compute mode of its fractions (gpu_device.h)
  bool over_capacity = false;
  Hundredths allocated = 0;
  Hundredths cap = kOneGpu;  // CON-2a
  std::string product;       // CON-5a
  std::int64_t cpu_used = 0, memory_used = 0;
  std::vector<std::size_t> pods;  // indexes into State::pods, counted pods on the node
};

struct State {
  std::vector<NodeState> nodes;  // sorted by name
  std::vector<PodState> pods;
};

State build_state(const Pool& pool, const MemoryReserve& reserve);
Plan plan_state(const State& state, const Options& options);
// CON-7a on a state (drain.h recheck_drain()).
Candidate recheck_state(const State& state, const std::string& node, const Options& options);
// Moves the candidate's pods as its placements say; the node keeps only its pods without a GPU.
void apply_drain(State& state, const Candidate& drained);

// Destinations as one placement run changes them: copies of their GPUs, modes and CPU/memory use.
struct Destinations {
  std::vector<std::size_t> nodes;  // indexes into State::nodes, by name
  std::vector<std::vector<Hundredths>> gpus;
  std::vector<std::vector<std::string>> modes;
  std::vector<std::int64_t> cpu, memory;
};
Destinations destinations_of(const State& state, const std::vector<std::size_t>& nodes);

// Where one pod of `size` (a fraction, or `whole` GPUs) goes, or why it cannot go anywhere.
struct PlaceResult {
  bool placed = false;
  std::size_t destination = 0;  // index into Destinations::nodes
  std::vector<int> gpus;
  // Not placed: the check of the best destination (CON-6a; kGpu for plain shortage, refined to kComputeMode or
  // kReserve when modes or the reserve alone kept it out) and the untolerated taint's key.
  Check failed = Check::kGpu;
  bool constraint_failed = false;  // some destination failed a scheduling constraint (CON-6a wording)
  std::string taint;
};
// CON-5a: only destinations of `*product` are considered (the others fail on kGpuModel); null: any product. On
// success the destination's GPUs, modes, CPU and memory take the pod.
PlaceResult place(const State& state, Destinations& dests, const PoolPod& pod, Hundredths fraction,
                  std::int64_t whole, const std::string* product, const PlacementStrategy& strategy);

// "pod <ns>/<name> (<size>) does not fit[: <check>]" (CON-6, CON-6a).
std::string does_not_fit(const PoolPod& pod, Hundredths size, const PlaceResult& r);

}  // namespace kubex::decide::packing::detail
