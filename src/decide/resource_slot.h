// The five per-container values a policy can provide (SEL-6): requests.gpu, requests.cpu, requests.memory,
// limits.cpu and limits.memory, with the names SPEC uses for them in annotations and constraint targets.
// Vocabulary of policy/ (SEL-6 slots) and admission/ alike, so it sits at decide/'s top.
#pragma once

#include <array>
#include <cstddef>

#include "api/objects.h"

namespace kubex::decide {

enum class Resource { kGpu, kCpu, kMemory };
enum class Usage { kRequest, kLimit };

enum class Slot { kRequestsGpu, kRequestsCpu, kRequestsMemory, kLimitsCpu, kLimitsMemory };
inline constexpr std::size_t kSlotCount = 5;
inline constexpr std::array<Slot, kSlotCount> kAllSlots = {
    Slot::kRequestsGpu, Slot::kRequestsCpu, Slot::kRequestsMemory, Slot::kLimitsCpu, Slot::kLimitsMemory};

inline constexpr std::size_t index_of(Slot s) {
  return static_cast<std::size_t>(s);
}
Resource resource_of(Slot s);
Usage usage_of(Slot s);
// The slot of a resource and usage; requests.gpu for (gpu, limit), which has no slot of its own.
Slot slot_of(Resource r, Usage u);

// "gpu", "cpu", "memory" (SPEC §2 annotation keys and constraint targets).
const char* resource_name(Resource r);
// "request", "limit" (constraint targets, OBS-4 changes[].usage).
const char* usage_name(Usage u);
// "requests.gpu", …, "limits.memory" (SEL-6).
const char* slot_name(Slot s);

// The strategy's enablement block for a slot: spec.enablement.<resource>.<requests|limits>.
const api::Gates& gates_for(const api::StrategySpec& spec, Slot s);

}  // namespace kubex::decide
