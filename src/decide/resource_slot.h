// The six per-container values a policy can provide (SEL-6): requests.gpu, requests.cpu, requests.memory,
// limits.cpu, limits.memory and limits.gpu (the KAI-2 burst limit), with the names SPEC uses for them in
// annotations and constraint targets.
// Vocabulary of policy/ (SEL-6 slots) and admission/ alike, so it sits at decide/'s top.
#pragma once

#include <array>
#include <cstddef>

#include "api/objects.h"

namespace kubex::decide {

enum class Resource { kGpu, kCpu, kMemory };
enum class Usage { kRequest, kLimit };

enum class Slot { kRequestsGpu, kRequestsCpu, kRequestsMemory, kLimitsCpu, kLimitsMemory, kLimitsGpu };
inline constexpr std::size_t kSlotCount = 6;
inline constexpr std::array<Slot, kSlotCount> kAllSlots = {Slot::kRequestsGpu, Slot::kRequestsCpu,
                                                           Slot::kRequestsMemory, Slot::kLimitsCpu,
                                                           Slot::kLimitsMemory, Slot::kLimitsGpu};
// requests.gpu and limits.gpu hold GPU values (GPU-2 hundredths); the others hold quantities.
inline constexpr bool is_gpu(Slot s) {
  return s == Slot::kRequestsGpu || s == Slot::kLimitsGpu;
}

inline constexpr std::size_t index_of(Slot s) {
  return static_cast<std::size_t>(s);
}
Resource resource_of(Slot s);
Usage usage_of(Slot s);
// The slot of a resource and usage.
Slot slot_of(Resource r, Usage u);

// "gpu", "cpu", "memory" (SPEC §2 annotation keys and constraint targets).
const char* resource_name(Resource r);
// "request", "limit" (constraint targets, OBS-4 changes[].usage).
const char* usage_name(Usage u);
// "requests.gpu", …, "limits.memory" (SEL-6).
const char* slot_name(Slot s);

// The strategy's enablement block for a slot: spec.enablement.<resource>.<requests|limits>. limits.gpu has
// no block of its own (KAI-2 bounds it with spec.kai.fractionLimit): its gates are requests.gpu's.
const api::Gates& gates_for(const api::StrategySpec& spec, Slot s);

}  // namespace kubex::decide
