#include "decide/admission/change.h"

namespace kubex::decide {

const char* change_resource_name(Resource r, Usage u) {
  return r == Resource::kGpu && u == Usage::kLimit ? "gpu-limit" : resource_name(r);
}

const char* edit_resource_name(EditTarget t) {
  switch (t) {
    case EditTarget::kScheduler:
      return "scheduler";
    case EditTarget::kQueue:
      return "queue";
    case EditTarget::kVllmGpuMemoryUtilization:
      return "vllm-gpu-memory-utilization";
  }
  return "";
}

const char* edit_usage_name(EditTarget t) {
  return t == EditTarget::kVllmGpuMemoryUtilization ? "arg" : "pod";
}

}  // namespace kubex::decide
