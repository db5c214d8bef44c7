#include "decide/admission/gpu_plan.h"

#include "decide/admission/fraction_limit.h"
#include "decide/gates.h"

namespace kubex::decide {

namespace {

ConstraintTarget gpu_target(const std::string& container, Direction d = Direction::kNone) {
  return {container, resource_name(Resource::kGpu), usage_name(Usage::kRequest), direction_name(d)};
}

struct Survivor {
  Hundredths desired = 0, applied = 0;
  Direction direction = Direction::kNone;
  std::size_t policy = 0;
  bool harm_guard = false;  // ACT-10: raised to the container's floor
};

Change gpu_change(const ContainerResources& c, const Survivor& s, const policy::Match& match) {
  Change ch;
  ch.container = c.name;
  ch.resource = Resource::kGpu;
  ch.usage = Usage::kRequest;
  ch.from = c.current_gpu ? format_gpu(*c.current_gpu) : kUnspecified;
  ch.to = format_gpu(s.applied);
  ch.desired = format_gpu(s.desired);
  ch.source = s.harm_guard ? std::string(reason::kHarmGuard) : match.policies[s.policy].ref;
  return ch;
}

ConstraintTarget limit_target(const std::string& container) {
  return {container, resource_name(Resource::kGpu), usage_name(Usage::kLimit), ""};
}

Change limit_change(const ContainerResources& c, const PodResources& pod, std::string to, std::string source) {
  Change ch;
  ch.container = c.name;
  ch.resource = Resource::kGpu;
  ch.usage = Usage::kLimit;
  ch.from = pod.has_fraction_limit ? pod.fraction_limit_text : kUnspecified;
  ch.to = to;
  ch.desired = std::move(to);
  ch.source = std::move(source);
  return ch;
}

// KAI-2 for the fraction container `g` of a pod that receives fraction `plan.fraction`.
void plan_fraction_limit(GpuPlan& plan, const PodResources& pod, const policy::Desired& desired,
                         const policy::Match& match, const api::StrategySpec& governing,
                         std::string_view sharing_mode, std::size_t g) {
  const ContainerResources& c = pod.targets[g];
  const Hundredths f = plan.fraction;
  const bool applies = fraction_limit_applies(sharing_mode, governing);
  std::optional<Hundredths> lim;
  // The policy a limit change is recorded under: the limits.gpu provider, else the governing policy.
  std::optional<std::size_t> provider = desired.governing;
  std::optional<Hundredths> peak;
  if (applies) {
    if (g < desired.containers.size()) {
      if (const auto& v = desired.containers[g].at(Slot::kLimitsGpu)) {
        peak = v->gpu;
        provider = v->policy;
      }
    }
    lim = burst_limit(f, peak, governing.fraction_limit_headroom_percent, fraction_limit_ceiling(governing),
                      pod.original_gpu(c));
  }
  auto source = [&] { return provider ? match.policies[*provider].ref : std::string(); };
  // KAI-2a without a peak: a limit the pod already has that lets it burst at least as far is what it had before
  // kubex, and stays.
  if (applies && !peak && pod.fraction_limit && *pod.fraction_limit > f && (!lim || *pod.fraction_limit >= *lim)) return;
  if (lim) {
    if (pod.fraction_limit == lim && pod.fraction_limit_text == format_gpu(*lim)) return;
    plan.limit_action = LimitAction::kSet;
    plan.limit = *lim;
    plan.changes.push_back(limit_change(c, pod, format_gpu(*lim), source()));
    return;
  }
  if (!pod.has_fraction_limit) {
    if (pod.fraction_limit_removed && !applies) plan.reasons.add(reason::kFractionLimitRemoved, limit_target(c.name));
    return;
  }
  if (applies && peak) {  // KAI-2: the peak leaves no limit above the fraction, so none at all
    plan.limit_action = LimitAction::kRemove;
    plan.changes.push_back(limit_change(c, pod, kUnspecified, source()));
  } else if (!pod.fraction_limit || *pod.fraction_limit <= f) {
    // A user's limit that the new fraction breaks (KAI refuses a limit at or below the request).
    plan.limit_action = LimitAction::kRemove;
    plan.reasons.add(reason::kFractionLimitRemoved, limit_target(c.name));
    plan.changes.push_back(limit_change(c, pod, kUnspecified, source()));
  }
}

}  // namespace

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::kKai:
      return "kai";
    case Mode::kVanilla:
      return "vanilla";
    case Mode::kNone:
      return "none";
  }
  return "none";
}

GpuPlan plan_gpu(const PodResources& pod, const policy::Desired& desired, const policy::Match& match,
                 const api::StrategySpec& governing, std::string_view sharing_mode,
                 const std::map<std::string, Hundredths>& floors) {
  GpuPlan plan;
  const bool kai = governing.kai_mode();
  // KAI-1: a cluster without GPU sharing takes no fraction; values below 1 become whole GPUs.
  const bool sharing = sharing_mode != api::kSharingDisabled;
  plan.mode = kai ? Mode::kKai : Mode::kVanilla;

  // ADM-5: the GPU is left untouched.
  if (!pod.unsupported.empty() || (!kai && pod.has_fraction_annotation)) {
    plan.reasons.add_pod(reason::kUnsupportedGpuRequest);
    return plan;
  }

  const std::size_t n = pod.targets.size();
  std::vector<std::optional<Survivor>> surviving(n);
  std::vector<bool> recommended(n, false);
  for (std::size_t i = 0; i < n && i < desired.containers.size(); ++i) {
    const auto& value = desired.containers[i].at(Slot::kRequestsGpu);
    if (!value) continue;
    const ContainerResources& c = pod.targets[i];
    recommended[i] = true;
    Survivor s;
    s.policy = value->policy;
    s.desired = value->gpu;
    // ADM-7.
    switch (clamp_gpu(s.desired, governing.gpu_requests, c.name)) {
      case Clamp::kFloor:
        plan.reasons.add(reason::kFloorClamped, gpu_target(c.name));
        break;
      case Clamp::kCeiling:
        plan.reasons.add(reason::kCeilingClamped, gpu_target(c.name));
        break;
      case Clamp::kNone:
        break;
    }
    // ACT-10: a container a downsize harmed keeps at least what it had before.
    if (auto f = floors.find(c.name); f != floors.end() && s.desired < f->second) {
      s.desired = f->second;
      s.harm_guard = true;
      plan.reasons.add(reason::kHarmGuard, gpu_target(c.name));
    }
    // ADM-8.
    s.applied = kai && sharing && s.desired < kOneGpu ? s.desired : from_whole(whole_gpus(s.desired));
    // ADM-9.
    s.direction = direction_of(c.current_gpu, s.applied);
    if (!gate_allows(governing.gpu_requests, s.direction)) {
      plan.reasons.add(reason::kStrategyDisabled, gpu_target(c.name, s.direction));
      continue;
    }
    surviving[i] = s;
  }

  // SPEC §0 GPU containers.
  std::vector<std::size_t> gpu_containers;
  for (std::size_t i = 0; i < n; ++i) {
    if (pod.targets[i].allocation() > 0 || surviving[i]) gpu_containers.push_back(i);
  }

  if (!kai) {
    for (std::size_t i : gpu_containers) {
      if (!surviving[i]) continue;
      plan.vanilla.emplace_back(i, whole_gpus(surviving[i]->desired));
      if (surviving[i]->direction != Direction::kNone) {
        plan.changes.push_back(gpu_change(pod.targets[i], *surviving[i], match));
      }
    }
    if (!plan.vanilla.empty()) plan.action = GpuAction::kVanillaWhole;
    return plan;
  }

  // ADM-11, KAI rows.
  if (gpu_containers.size() > 1) {
    for (std::size_t i : gpu_containers)
      plan.reasons.add(reason::kMultipleGpuContainers, gpu_target(pod.targets[i].name));
    return plan;
  }
  if (gpu_containers.empty()) return plan;
  const std::size_t g = gpu_containers.front();
  const ContainerResources& c = pod.targets[g];
  plan.gpu_container = g;
  if (surviving[g]) {
    const Survivor& s = *surviving[g];
    plan.kai_mutated = true;
    if (s.desired < kOneGpu && !sharing) plan.reasons.add(reason::kKaiGpuSharingDisabled, gpu_target(c.name));
    if (s.desired < kOneGpu && sharing) {
      plan.fraction = s.desired;
      // An equal fraction keeps the pod's own spelling of it.
      plan.action = s.direction == Direction::kNone && c.current_is_fraction ? GpuAction::kKeepFraction
                                                                             : GpuAction::kSetFraction;
    } else {
      plan.action = GpuAction::kSetWhole;
      plan.whole = whole_gpus(s.desired);
    }
    if (s.direction != Direction::kNone) plan.changes.push_back(gpu_change(c, s, match));
  } else if (c.current_is_fraction) {
    plan.action = GpuAction::kKeepFraction;
    plan.fraction = c.allocation();
    plan.kai_mutated = true;
  } else if (!recommended[g]) {
    plan.reasons.add(reason::kNoGpuRecommendation, gpu_target(c.name));
  }
  // KAI-2: the burst limit follows the fraction; a pod that gets whole GPUs loses it with gpu-fraction.
  if (plan.action == GpuAction::kSetFraction || plan.action == GpuAction::kKeepFraction) {
    plan_fraction_limit(plan, pod, desired, match, governing, sharing_mode, g);
  } else if (plan.action == GpuAction::kSetWhole && pod.has_fraction_limit) {
    plan.limit_action = LimitAction::kRemove;
  }
  return plan;
}

}  // namespace kubex::decide
