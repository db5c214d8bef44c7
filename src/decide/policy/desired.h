// Per-container desired values (SEL-6), static "*" expansion (SEL-8) and the governing policy (SEL-9).
// The same collection serves a live pod (admission), a pod template (ACT-1) and the static owner
// annotations (SEL-7): it only needs the target containers and which of them have a GPU allocation.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "api/objects.h"
#include "common/quantity.h"
#include "decide/gpu_value.h"
#include "decide/policy/candidate.h"
#include "decide/policy/match.h"
#include "decide/resource_slot.h"

namespace kubex::decide::policy {

// A target container (SPEC §0) as far as precedence cares.
struct TargetContainer {
  std::string name;
  bool has_gpu_allocation = false;  // a_c > 0
};

// One value and the policy that provided it.
struct ProvidedValue {
  std::size_t policy = 0;     // index into Match::policies
  Hundredths gpu = 0;         // requests.gpu or limits.gpu, a desired value (GPU-2)
  common::Quantity quantity;  // cpu and memory slots
};

struct ContainerDesired {
  std::string name;
  std::array<std::optional<ProvidedValue>, kSlotCount> slots;  // indexed by index_of(Slot)

  const std::optional<ProvidedValue>& at(Slot s) const { return slots[index_of(s)]; }
};

struct Desired {
  std::vector<ContainerDesired> containers;  // one per target container, in the same order
  // SEL-9: the policy whose strategy governs GPU and pod-level behaviour (index into Match::policies):
  // the requests.gpu winner of the GPU container, else the first valid matching policy. nullopt when the
  // workload is not managed.
  std::optional<std::size_t> governing;
  // The container whose requests.gpu winner governs: the first container with a GPU allocation that has a
  // GPU value, else the first container with a GPU value. nullopt when no policy provides GPU.
  std::optional<std::size_t> gpu_container;
  // Owner annotations of family winners whose JSON did not parse (VAL-7: ignored), sorted.
  std::vector<std::string> ignored_sources;

  const MatchedPolicy* governing_policy(const Match& m) const {
    return governing ? &m.policies[*governing] : nullptr;
  }
};

// SEL-8 for one container and slot: the named entry's value wins resource by resource over "*"; the "*"
// gpu goes only to containers with a GPU allocation, or to the first target container when none has one
// (`star_gpu` says whether this container gets it). Quantities as written; GPU as a GPU-2 desired value.
std::optional<ProvidedValue> static_value(const api::StaticSpec& spec, const std::string& container,
                                          Slot slot, bool star_gpu);

// Whether the "*" gpu value goes to containers[i] (SEL-8).
bool star_gpu_applies(std::span<const TargetContainer> containers, std::size_t i);

// SEL-6: each slot of each container takes its value from the first provider (Match::providers, SEL-5
// order) that provides one. Reactive and proactive winners provide requests.gpu from the owner's
// `<prefix>.rightsizing.kubex.ai/desired-resource-requests` and limits.gpu (the KAI-2 peak) from its
// `…/desired-resource-limits`; static kinds provide from their spec.
// Invalid or on-hold policies provide nothing (RBK-4).
Desired collect_desired(const Match& match, const Workload& workload,
                        std::span<const TargetContainer> containers);

}  // namespace kubex::decide::policy
