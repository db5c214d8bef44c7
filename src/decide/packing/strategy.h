// Placement strategies behind one small interface (DESIGN §7, KAI-Scheduler's node-placement plugins): a
// strategy chooses, for one pod, the destination GPU(s) among those CON-5 and CON-6a allow. KAI binpack (CON-6)
// is the one plans use, because KAI places the replacement pods; another (spread, MiB-aware) is an addition to the
// registry, not an edit.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "decide/gpu_value.h"

namespace kubex::decide::packing {

// A destination as a strategy sees it, after the scheduling constraints (CON-6a) have passed for the pod.
struct DestinationView {
  const std::string* node = nullptr;
  const std::vector<Hundredths>* gpus = nullptr;  // per-GPU occupancy, including earlier placements of the plan
  Hundredths cap = kOneGpu;                       // CON-2a: how far one of its GPUs may be filled by a fraction
  // CON-5b: per GPU, the compute mode of its fractions (gpu_device.h: "" none yet, kMixedModes); null = any.
  const std::vector<std::string>* modes = nullptr;
};

struct Choice {
  std::size_t destination = 0;  // index into the span given to choose()
  std::vector<int> gpus;        // GPU indexes: one for a fraction, k for k whole GPUs
};

class PlacementStrategy {
 public:
  virtual ~PlacementStrategy() = default;
  virtual std::string_view name() const = 0;
  // `size` is a fraction (1..99 hundredths) of compute mode `mode` when `whole` is 0, else `whole` GPUs are
  // needed. A fraction goes only where the GPU stays within the destination's cap and its fractions share the
  // mode (CON-2a, CON-5b). Destinations are sorted by node name. nullopt: no destination has room on its GPUs.
  virtual std::optional<Choice> choose(const std::vector<DestinationView>& destinations, Hundredths size,
                                       std::int64_t whole, std::string_view mode) const = 0;
};

// CON-6 as KAI-Scheduler v0.13 places a pod with its default binpack placement (gpusharingorder, nodeplacement
// binpack, gpupack; node-score ties by name). A fraction goes to the node that has a shared GPU it fits on (per-GPU
// sum ≤ the cap), however full, else to the one with the fewest completely free GPUs, ties by node name; there
// on the fullest shared GPU it fits on, else on the lowest free GPU. So a fraction does NOT go to the fullest GPU of
// the whole pool: a plan that counted on that could strand a later pod (kai_binpack.cpp). k whole GPUs go to the
// node with the fewest completely free GPUs that still has k, ties by node name, on its lowest free indexes.
class KaiBinpack final : public PlacementStrategy {
 public:
  std::string_view name() const override { return "kai-binpack"; }
  std::optional<Choice> choose(const std::vector<DestinationView>& destinations, Hundredths size,
                               std::int64_t whole, std::string_view mode) const override;
};

// The registry: "kai-binpack" → KaiBinpack. nullptr for an unknown name.
const PlacementStrategy* find_strategy(std::string_view name);
std::vector<std::string> strategy_names();

}  // namespace kubex::decide::packing
