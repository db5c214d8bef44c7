#include "decide/resource_slot.h"

namespace kubex::decide {

Resource resource_of(Slot s) {
  switch (s) {
    case Slot::kRequestsGpu:
    case Slot::kLimitsGpu:
      return Resource::kGpu;
    case Slot::kRequestsCpu:
    case Slot::kLimitsCpu:
      return Resource::kCpu;
    case Slot::kRequestsMemory:
    case Slot::kLimitsMemory:
      return Resource::kMemory;
  }
  return Resource::kGpu;
}

Usage usage_of(Slot s) {
  return s == Slot::kLimitsCpu || s == Slot::kLimitsMemory || s == Slot::kLimitsGpu ? Usage::kLimit
                                                                                    : Usage::kRequest;
}

Slot slot_of(Resource r, Usage u) {
  switch (r) {
    case Resource::kGpu:
      return u == Usage::kLimit ? Slot::kLimitsGpu : Slot::kRequestsGpu;
    case Resource::kCpu:
      return u == Usage::kLimit ? Slot::kLimitsCpu : Slot::kRequestsCpu;
    case Resource::kMemory:
      return u == Usage::kLimit ? Slot::kLimitsMemory : Slot::kRequestsMemory;
  }
  return Slot::kRequestsGpu;
}

const char* resource_name(Resource r) {
  switch (r) {
    case Resource::kGpu:
      return "gpu";
    case Resource::kCpu:
      return "cpu";
    case Resource::kMemory:
      return "memory";
  }
  return "";
}

const char* usage_name(Usage u) {
  return u == Usage::kLimit ? "limit" : "request";
}

const char* slot_name(Slot s) {
  switch (s) {
    case Slot::kRequestsGpu:
      return "requests.gpu";
    case Slot::kRequestsCpu:
      return "requests.cpu";
    case Slot::kRequestsMemory:
      return "requests.memory";
    case Slot::kLimitsCpu:
      return "limits.cpu";
    case Slot::kLimitsMemory:
      return "limits.memory";
    case Slot::kLimitsGpu:
      return "limits.gpu";
  }
  return "";
}

const api::Gates& gates_for(const api::StrategySpec& spec, Slot s) {
  switch (s) {
    case Slot::kRequestsGpu:
    case Slot::kLimitsGpu:
      return spec.gpu_requests;
    case Slot::kRequestsCpu:
      return spec.cpu_requests;
    case Slot::kRequestsMemory:
      return spec.memory_requests;
    case Slot::kLimitsCpu:
      return spec.cpu_limits;
    case Slot::kLimitsMemory:
      return spec.memory_limits;
  }
  return spec.gpu_requests;
}

}  // namespace kubex::decide
