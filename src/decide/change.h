// One applied rightsizing change: OBS-4 `changes[]` entries, ADM-16 `pod-rightsizing-info` entries and
// the `summary` text are all made from these.
#pragma once

#include <string>

#include "decide/resource_slot.h"

namespace kubex::decide {

inline constexpr const char* kUnspecified = "unspecified";

struct Change {
  std::string container;
  Resource resource = Resource::kGpu;
  Usage usage = Usage::kRequest;
  std::string from;     // the current value, or "unspecified"; GPU per GPU-2, quantities canonical
  std::string to;       // the applied value (ADM-8): KAI fraction, or whole GPUs; quantities canonical
  std::string desired;  // OBS-4 summary `<v>`: the clamped desired value (GPU); `to` for cpu/memory
  std::string source;   // the providing policy, "StaticPolicy/s"

  friend bool operator==(const Change&, const Change&) = default;
};

}  // namespace kubex::decide
