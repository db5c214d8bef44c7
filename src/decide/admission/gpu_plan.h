// The GPU part of the admission decision for one pod (or pod template), as data: ADM-5 unsupported
// requests, ADM-7 clamp, ADM-8 applied value, ADM-9 direction gate, ADM-11 mode table, ADM-12 fraction
// container, KAI-1 (a cluster without GPU sharing gets whole GPUs) and KAI-2 (the burst limit).
// pod_mutation.h turns the plan into JSON changes and adds ADM-13 extras when `kai_mutated`.
#pragma once

#include <map>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "api/objects.h"
#include "decide/admission/change.h"
#include "decide/admission/constraints.h"
#include "decide/admission/pod_resources.h"
#include "decide/gpu_value.h"
#include "decide/policy/desired.h"
#include "decide/policy/match.h"

namespace kubex::decide {

enum class Mode { kNone, kKai, kVanilla };
// OBS-4 `mode`: "kai", "vanilla", "none".
const char* mode_name(Mode m);

enum class GpuAction {
  kUntouched,     // the pod's GPU is left as it is
  kSetFraction,   // KAI d < 1: gpu-fraction = fmt(d), nvidia.com/gpu removed from every container
  kSetWhole,      // KAI d >= 1: nvidia.com/gpu requests = limits = ceil(d), fraction annotations removed
  kKeepFraction,  // KAI: the pod keeps its gpu-fraction (no recommendation, gated, or equal)
  kVanillaWhole,  // vanilla: nvidia.com/gpu requests = limits = ceil(d_c) on each container in `whole`
};

// KAI-2: what happens to the pod's gpu-fraction.limit annotation.
enum class LimitAction {
  kLeave,   // left as it is (absent, or a user's limit that still holds)
  kSet,     // gpu-fraction.limit = fmt(limit)
  kRemove,  // removed (no limit computed over one, one the new fraction breaks, or the pod gets whole GPUs)
};

struct GpuPlan {
  Mode mode = Mode::kNone;
  GpuAction action = GpuAction::kUntouched;
  // ADM-13: the pod gets the KAI extras (scheduler, queue) and then the VLM rules.
  bool kai_mutated = false;
  std::optional<std::size_t> gpu_container;  // index into PodResources::targets (KAI actions)
  Hundredths fraction = 0;                   // kSetFraction / kKeepFraction: the resulting gpu-fraction
  std::int64_t whole = 0;                    // kSetWhole: whole GPUs
  // kVanillaWhole: (index into PodResources::targets, whole GPUs).
  std::vector<std::pair<std::size_t, std::int64_t>> vanilla;
  LimitAction limit_action = LimitAction::kLeave;
  Hundredths limit = 0;         // kSet: the burst limit
  std::vector<Change> changes;  // applied changes that are not no-ops (gpu-limit included)
  Constraints reasons;
};

// `governing` is the SEL-9 governing strategy; `mode` follows its overrideScheduler. `sharing_mode` is the
// cluster's KAI mode (api::gpu_sharing_mode, KAI-1).
// `floors`: ACT-10 harm-guard floors by container (actuation-state): a desired requests.gpu below its floor is
// raised to it, with source `harm-guard` and constraint reason `harm-guard`.
GpuPlan plan_gpu(const PodResources& pod, const policy::Desired& desired, const policy::Match& match,
                 const api::StrategySpec& governing, std::string_view sharing_mode = api::kSharingNonMemoryEnforced,
                 const std::map<std::string, Hundredths>& floors = {});

}  // namespace kubex::decide
