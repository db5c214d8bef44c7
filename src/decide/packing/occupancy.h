// Per-GPU occupancy of one node (CON-3): whole-GPU pods take whole GPUs (largest first, lowest free indexes);
// each `runai-gpu-group` takes one GPU of its own (largest group first, then group name) shared by its members;
// fractions without the label are placed first-fit, largest first then by name, onto GPUs in index order. What
// does not fit marks the node over capacity (CON-3: never a destination).
#pragma once

#include <cstdint>
#include <vector>

#include "decide/gpu_value.h"
#include "decide/packing/model.h"

namespace kubex::decide::packing {

struct Occupancy {
  std::vector<Hundredths> gpus;          // size = capacity
  std::vector<std::vector<int>> pod_gpus;  // per input pod: the GPU indexes it sits on (empty: no GPU / did not fit)
  bool over_capacity = false;
};

// `pods`: the counted pods of the node (those without a GPU are ignored).
Occupancy occupancy(std::int64_t gpu_capacity, const std::vector<const PoolPod*>& pods);

}  // namespace kubex::decide::packing
