// The working state planning reads and drain simulation changes (internal to decide/packing): every pool node
// with its per-GPU occupancy (CON-3), GPU allocation and CPU/memory requested, and every counted pod with the
// GPUs it sits on.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "decide/gpu_value.h"
#include "decide/packing/model.h"
#include "decide/packing/plan.h"

namespace kubex::decide::packing::detail {

struct PodState {
  const PoolPod* pod = nullptr;
  std::vector<int> gpus;
};

struct NodeState {
  const PoolNode* node = nullptr;
  std::vector<Hundredths> gpus;
  bool over_capacity = false;
  Hundredths allocated = 0;
  std::int64_t cpu_used = 0, memory_used = 0;
  std::vector<std::size_t> pods;  // indexes into State::pods, counted pods on the node
};

struct State {
  std::vector<NodeState> nodes;  // sorted by name
  std::vector<PodState> pods;
};

State build_state(const Pool& pool);
Plan plan_state(const State& state, const Options& options);
// Moves the candidate's pods as its placements say; the node keeps only its pods without a GPU.
void apply_drain(State& state, const Candidate& drained);

}  // namespace kubex::decide::packing::detail
