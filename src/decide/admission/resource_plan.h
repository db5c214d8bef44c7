// The cpu and memory part of the admission decision (ADM-10): values come only from static policies, are
// clamped by the governing strategy (ADM-7), gated by the strategy of the policy that provided them
// (SEL-9, ADM-9), and dropped in pairs when a resulting request would exceed the limit of the same
// resource (`requests-exceed-limits`).
#pragma once

#include <cstddef>
#include <vector>

#include "api/objects.h"
#include "common/quantity.h"
#include "decide/admission/change.h"
#include "decide/admission/constraints.h"
#include "decide/admission/pod_resources.h"
#include "decide/policy/desired.h"
#include "decide/policy/match.h"

namespace kubex::decide {

struct QuantityUpdate {
  std::size_t container = 0;  // index into PodResources::targets
  Slot slot = Slot::kRequestsCpu;
  common::Quantity value;
};

struct ResourcePlan {
  std::vector<QuantityUpdate> updates;  // applied changes (no-ops left out)
  std::vector<Change> changes;          // the same, for OBS-4 / ADM-16
  Constraints reasons;
};

ResourcePlan plan_cpu_memory(const PodResources& pod, const policy::Desired& desired,
                             const policy::Match& match, const api::StrategySpec& governing);

}  // namespace kubex::decide
