#include <limits>

#include "decide/packing/gpu_device.h"
#include "decide/packing/strategy.h"

namespace kubex::decide::packing {

std::optional<Choice> BestFit::choose(const std::vector<DestinationView>& destinations, Hundredths size,
                                      std::int64_t whole, std::string_view mode) const {
  std::optional<Choice> best;
  if (whole > 0) {
    // CON-6: the node with the fewest completely free GPUs that still has `whole` of them; ties by node name
    // (destinations come sorted by name, so the first one found wins a tie).
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
  // CON-6: the GPU with the least free capacity (up to its cap, CON-2a) that still fits the fraction, among the
  // GPUs whose fractions share its compute mode (CON-5b); ties by node name, then GPU index.
  Hundredths best_left = std::numeric_limits<Hundredths>::max();
  for (std::size_t d = 0; d < destinations.size(); ++d) {
    const auto& gpus = *destinations[d].gpus;
    const std::vector<std::string>* modes = destinations[d].modes;
    for (std::size_t g = 0; g < gpus.size(); ++g) {
      if (modes != nullptr && g < modes->size() && !mode_fits((*modes)[g], mode)) continue;
      Hundredths left = destinations[d].cap - gpus[g] - size;
      if (left < 0 || left >= best_left) continue;
      best_left = left;
      best = Choice{d, {static_cast<int>(g)}};
    }
  }
  return best;
}

const PlacementStrategy* find_strategy(std::string_view name) {
  static const BestFit best_fit;
  if (name == best_fit.name()) return &best_fit;
  return nullptr;
}

std::vector<std::string> strategy_names() { return {"best-fit"}; }

}  // namespace kubex::decide::packing
