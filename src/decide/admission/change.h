// One applied rightsizing change: OBS-4 `changes[]` entries, ADM-16 `pod-rightsizing-info` entries and
// the `summary` text are all made from these, and from the KAI and vLLM edits beside them.
#pragma once

#include <optional>
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

// OBS-4 `changes[].resource` and the summary's resource names: "gpu", "cpu", "memory", and "gpu-limit" for
// the KAI-2 burst limit (gpu, usage limit).
const char* change_resource_name(Resource r, Usage u);

// What a KAI or vLLM edit changed (ADM-13, VLM-4).
enum class EditTarget {
  kScheduler,                 // spec.schedulerName
  kQueue,                     // label kai.scheduler/queue
  kVllmGpuMemoryUtilization,  // the container's --gpu-memory-utilization
};

// One KAI or vLLM edit of a pod, recorded only when the value it writes differs from the pod's (a vLLM
// rewrite that only deletes duplicate flags counts too: the container's command or args changed).
// OBS-4 `changes[]`: resource "scheduler" / "queue" with container "" and usage "pod", or
// "vllm-gpu-memory-utilization" with usage "arg". ADM-16: `kai.scheduler`, `kai.queue`, and per container
// `vllmGpuMemoryUtilization`.
struct Edit {
  EditTarget target = EditTarget::kScheduler;
  std::string container;            // the vLLM container; "" for scheduler and queue
  std::optional<std::string> from;  // nullopt: there was none (no schedulerName, no label, flag appended)
  std::string to;

  friend bool operator==(const Edit&, const Edit&) = default;
};

// OBS-4 `changes[].resource`: "scheduler", "queue", "vllm-gpu-memory-utilization".
const char* edit_resource_name(EditTarget t);
// OBS-4 `changes[].usage`: "pod" (scheduler, queue), "arg" (vLLM).
const char* edit_usage_name(EditTarget t);

}  // namespace kubex::decide
