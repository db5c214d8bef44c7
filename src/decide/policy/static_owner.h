// The static owner annotations (SPEC §2, SEL-7 last sentence): `static.` / `cwstatic.`
// `rightsizing.kubex.ai/desired-resource-requests` and `-limits` mirror the merged per-resource static
// result: for each target container and slot, the first valid static policy in SEL-5 order that provides a
// value, written under the prefix of that policy's kind. Quantities in canonical form, GPU per GPU-2,
// limits never contain gpu.
// It lives with the policy decisions because it is one: the SEL-5 order and SEL-8 expansion of the static
// policies, read by admission (ADM-14 mirroring) and by the static owner controller alike.
#pragma once

#include <map>
#include <span>
#include <string>
#include <vector>

#include "decide/policy/candidate.h"
#include "decide/policy/desired.h"
#include "decide/policy/match.h"

namespace kubex::decide {

// annotation key -> JSON value, for the static prefixes only; prefixes without values are absent.
std::map<std::string, std::string> static_annotation_values(
    const policy::Match& match, std::span<const policy::TargetContainer> containers);

struct OwnerAnnotationPlan {
  // RBK-4: every matching policy is invalid, so the owner is left alone (`desired` and `remove` empty).
  bool hold = false;
  // The full desired set of static owner annotations.
  std::map<std::string, std::string> desired;
  // Static desired-resource-* keys the owner carries that are not desired.
  std::vector<std::string> remove;

  // True when the owner's annotations already equal the plan.
  bool satisfied_by(const std::map<std::string, std::string>& owner_annotations) const;
};

// `containers` are the target containers of the pod template (SPEC §0), with their GPU allocations.
// For a workload that no policy matches, everything static is removed (RBK-2).
OwnerAnnotationPlan static_owner_annotations(const policy::Match& match, const policy::Workload& workload,
                                             std::span<const policy::TargetContainer> containers);

}  // namespace kubex::decide
