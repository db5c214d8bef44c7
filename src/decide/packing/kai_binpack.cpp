// The KAI binpack strategy (strategy.h): where KAI-Scheduler v0.13, with its default binpack placement, puts a pod
// that a drain evicted, so that a plan never counts on a placement the scheduler would not make (CON-6).
#include <limits>

#include "decide/packing/gpu_device.h"
#include "decide/packing/strategy.h"

namespace kubex::decide::packing {

namespace {

// KAI's binpack node score falls with the node's completely free GPUs (a GPU holding a fraction group is not free).
std::int64_t free_gpus(const std::vector<Hundredths>& gpus) {
  std::int64_t n = 0;
  for (Hundredths g : gpus) n += g == 0;
  return n;
}

// May a fraction of `size` and `mode` go on GPU g of destination d (the cap, CON-2a; the compute mode, CON-5b)?
bool fits(const DestinationView& d, std::size_t g, Hundredths size, std::string_view mode) {
  const std::vector<std::string>* modes = d.modes;
  if (modes != nullptr && g < modes->size() && !mode_fits((*modes)[g], mode)) return false;
  return (*d.gpus)[g] + size <= d.cap;
}

}  // namespace

std::optional<Choice> KaiBinpack::choose(const std::vector<DestinationView>& destinations, Hundredths size,
                                         std::int64_t whole, std::string_view mode) const {
  std::optional<Choice> best;
  if (whole > 0) {
    // The node with the fewest completely free GPUs that still has `whole` of them; ties by node name
    // (destinations come sorted by name, so the first one found wins a tie), on its lowest free indexes.
    std::int64_t best_free = std::numeric_limits<std::int64_t>::max();
    for (std::size_t d = 0; d < destinations.size(); ++d) {
      const auto& gpus = *destinations[d].gpus;
      std::vector<int> free;
      for (std::size_t g = 0; g < gpus.size(); ++g)
        if (gpus[g] == 0) free.push_back(static_cast<int>(g));
      auto n = static_cast<std::int64_t>(free.size());
      if (n < whole || n >= best_free) continue;
      best_free = n;
      free.resize(static_cast<std::size_t>(whole));
      best = Choice{d, std::move(free)};
    }
    return best;
  }
  // A fraction: KAI orders the nodes first, then picks a GPU on the best node.
  //  1. A node with any shared GPU (a GPU already holding fractions) the fraction fits on comes first, however
  //     full that GPU is (KAI's gpusharingorder score is flat);
  //  2. then fewer completely free GPUs (binpack);
  //  3. then the node name.
  // Among the nodes' GPUs only those within the cap (CON-2a) whose fractions share the pod's mode (CON-5b) count.
  // On the node: the fullest shared GPU it fits on (ties: the lowest index; KAI's order among equally full groups
  // is its map order), else its lowest completely free GPU.
  bool best_shared = false;
  std::int64_t best_free = std::numeric_limits<std::int64_t>::max();
  for (std::size_t d = 0; d < destinations.size(); ++d) {
    const DestinationView& dest = destinations[d];
    const auto& gpus = *dest.gpus;
    int fullest = -1, empty = -1;
    for (std::size_t g = 0; g < gpus.size(); ++g) {
      if (!fits(dest, g, size, mode)) continue;
      if (gpus[g] == 0) {
        if (empty < 0) empty = static_cast<int>(g);
      } else if (fullest < 0 || gpus[g] > gpus[static_cast<std::size_t>(fullest)]) {
        fullest = static_cast<int>(g);
      }
    }
    if (fullest < 0 && empty < 0) continue;  // no room on this node
    const bool shared = fullest >= 0;
    const std::int64_t free = free_gpus(gpus);
    if (best && (best_shared > shared || (best_shared == shared && best_free <= free))) continue;
    best_shared = shared;
    best_free = free;
    best = Choice{d, {shared ? fullest : empty}};
  }
  return best;
}

const PlacementStrategy* find_strategy(std::string_view name) {
  static const KaiBinpack kai_binpack;
  if (name == kai_binpack.name()) return &kai_binpack;
  return nullptr;
}

std::vector<std::string> strategy_names() { return {"kai-binpack"}; }

}  // namespace kubex::decide::packing
