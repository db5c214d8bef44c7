// ADM-16: the pod annotation `automation-webhook.kubex.ai/pod-rightsizing-info`, written only when
// something changed: {"mode":"kai|vanilla","strategy":"<Kind>/<name>",
// "containers":{"app":{"gpu":{"from":"0.25","to":"0.7","source":"StaticPolicy/s"},
//                      "vllmGpuMemoryUtilization":{"from":"0.95","to":"0.45"}}},
// "kai":{"scheduler":{"from":"default-scheduler","to":"kai-scheduler"},"queue":{"from":null,"to":"q"}}}.
// Requests are keyed by resource ("gpu", "cpu", "memory"), limits by "limits.cpu" / "limits.memory"; the
// vLLM flag by "vllmGpuMemoryUtilization" (`from` null when the flag was appended). `kai` holds only the
// keys that changed and is left out when neither did.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "decide/admission/change.h"

namespace kubex::decide {

inline constexpr const char* kVllmInfoKey = "vllmGpuMemoryUtilization";

// "gpu", "cpu", "memory", "limits.cpu", "limits.memory".
std::string info_key(Resource r, Usage u);

// The annotation value after `changes` and `edits`. `existing` is the pod's current value ("" when
// absent): its entries are kept, and an entry changed again keeps its `from` (the late pass keeps the
// early pass's `from`). Containers and keys are sorted; each resource entry is written as from, to,
// source, each KAI and vLLM entry as from, to; `kai` lists scheduler before queue.
std::string rightsizing_info_json(std::string_view mode, const std::string& strategy,
                                  const std::vector<Change>& changes, const std::vector<Edit>& edits,
                                  std::string_view existing);

}  // namespace kubex::decide
