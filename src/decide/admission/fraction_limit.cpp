#include "decide/admission/fraction_limit.h"

#include <algorithm>

namespace kubex::decide {

bool fraction_limit_applies(std::string_view sharing_mode, const api::StrategySpec& strategy) {
  return sharing_mode == api::kSharingNvFractions && strategy.fraction_limit_enabled;
}

Hundredths fraction_limit_ceiling(const api::StrategySpec& strategy) {
  if (!strategy.fraction_limit_ceiling || strategy.fraction_limit_ceiling->sign() <= 0) return kOneGpu;
  return std::min(hundredths_of(*strategy.fraction_limit_ceiling), kOneGpu);
}

std::optional<Hundredths> burst_limit(Hundredths f, std::optional<Hundredths> peak, int headroom_percent,
                                      Hundredths ceiling, std::optional<Hundredths> original) {
  Hundredths lim = 0;
  if (peak) {
    const std::int64_t h = std::max(headroom_percent, 0);
    // roundUp(p × (1 + h/100)) exactly in hundredths: ceil(p × (100 + h) / 100).
    const Hundredths grown = (std::min(*peak, kOneGpu * 10) * (100 + h) + 99) / 100;
    lim = std::min(ceiling, std::max(f + 1, grown));
  } else if (original && f < *original) {
    // KAI-2a: no evidence of the peak, so the pod may still burst to what it had before kubex.
    lim = std::min({ceiling, *original, kOneGpu});
  }
  if (lim <= f) return std::nullopt;
  return lim;
}

}  // namespace kubex::decide
