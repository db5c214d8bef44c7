// KAI-1, KAI-2 and KAI-2a at admission: the cluster's sharing mode, and the burst limit (`gpu-fraction.limit`)
// a fraction pod gets under NvFractions: lim = min(C, max(f + 0.01, roundUp(p × (1 + h/100)))) with a peak p,
// else min(C, original) below the pod's original allocation; written when lim > f. Pure arithmetic in hundredths; gpu_plan.h decides when it applies and what happens to a limit
// the pod already carries.
#pragma once

#include <optional>
#include <string_view>

#include "api/objects.h"
#include "decide/gpu_value.h"

namespace kubex::decide {

// KAI-2 applies to a fraction pod: the mode is NvFractions and the governing strategy enables the limit.
bool fraction_limit_applies(std::string_view sharing_mode, const api::StrategySpec& strategy);

// The strategy's limit ceiling C in hundredths: spec.kai.fractionLimit.ceiling, 1 when absent.
Hundredths fraction_limit_ceiling(const api::StrategySpec& strategy);

// KAI-2's formula for fraction `f` and peak `peak` (the container's desired limits.gpu). With no peak, KAI-2a:
// the pod's `original` allocation (RBK-1, capped at 1 and at C) when f lies below it, else no limit.
// Returns the limit when it lies above f, else nullopt (no limit is written).
std::optional<Hundredths> burst_limit(Hundredths f, std::optional<Hundredths> peak, int headroom_percent,
                                      Hundredths ceiling, std::optional<Hundredths> original = std::nullopt);

}  // namespace kubex::decide
