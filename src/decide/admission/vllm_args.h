// vLLM tuning (VLM-1, VLM-3, VLM-4): detecting a vLLM container, the --gpu-memory-utilization value and
// rewriting a container's command/args to carry it. VLM-2 (when it runs) is pod_mutation's business.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "decide/gpu_value.h"

namespace kubex::decide {

inline constexpr std::string_view kGpuMemoryUtilizationFlag = "--gpu-memory-utilization";

// The repository path of an image reference, with the registry host, tag and digest removed:
// "docker.io/vllm/vllm-openai:v0.6.3@sha256:…" -> "vllm/vllm-openai"; "localhost:5000/a/b:1" -> "a/b".
std::string image_repository_path(std::string_view image);

// VLM-1. `model_engine` is the owning kubeai.org Model's spec.engine ("" when the owner is not a Model).
// True when: the image repository path contains "vllm" (case-insensitive); or command+args, split on
// whitespace, contain the token "vllm" immediately followed by "serve"; or a token contains
// "vllm.entrypoints"; or model_engine is "VLLM".
bool is_vllm_container(std::string_view image, const std::vector<std::string>& command,
                       const std::vector<std::string>& args, std::string_view model_engine);

// VLM-3 in hundredths: with b = buffer_percent (clamped to 0..100), 1 - b/100 under the HamiCore sharing mode
// (KAI-1; "HAMiCore", memoryIsolation's spelling, too) or for whole GPUs (`fraction` nullopt), else
// fraction * (1 - b/100) — under NvFractions the fraction is the request, never the KAI-2 limit; rounded DOWN
// to 0.01 and floored at 0.05. (Disabled: the caller makes no edit.)
Hundredths vllm_memory_utilization(std::string_view sharing_mode, int buffer_percent,
                                   std::optional<Hundredths> fraction);

struct VllmRewrite {
  bool changed = false;         // command or args differ from the input
  bool not_rewritable = false;  // the flag appears only inside longer elements: nothing was changed
  // The value of the first occurrence before the rewrite; nullopt when the flag was appended, or its
  // split form had no value item.
  std::optional<std::string> previous;
  std::vector<std::string> command, args;
};

// VLM-4 over the elements of command then args: (1) `--gpu-memory-utilization=X` and the value item of
// the split form `--gpu-memory-utilization X` get `value`; (2) only the first occurrence is kept, the
// rest are deleted (both items of a split form); (3) when the flag is absent,
// `--gpu-memory-utilization=<value>` is appended to args; (4) when the flag appears only inside longer
// elements (a `sh -c` script), nothing changes and `not_rewritable` is set.
VllmRewrite rewrite_vllm_args(const std::vector<std::string>& command, const std::vector<std::string>& args,
                              std::string_view value);

}  // namespace kubex::decide
