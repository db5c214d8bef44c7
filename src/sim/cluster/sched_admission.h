// Emulation of KAI-Scheduler v0.17's pod admission (the `gpusharing` plugin of its validating webhook, whose
// rules live in KAI's gpu_request_validator.go): pods with `schedulerName: kai-scheduler` that carry
// `gpu-fraction` are rejected when the fraction container also asks for a whole nvidia.com/gpu, or when the
// value is not a number strictly between 0 and 1. The messages are KAI's own.
//
// The rejection is HTTP 400 BadRequest whose message is exactly KAI's text (so kubectl prints
// `Error from server (BadRequest): ... gpu-fraction annotation value must be a positive number smaller than
// 1.0`). A real cluster answers 403 with `admission webhook "<name>" denied the request: <KAI's text>`
// (controller-runtime's Denied); the text after the prefix is the same.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

namespace kubex::sim {
class ApiServer;
}

namespace kubex::sim::cluster::sched {

inline constexpr const char* kKaiFractionRangeMessage =
    "gpu-fraction annotation value must be a positive number smaller than 1.0";
inline constexpr const char* kKaiFractionAndWholeMessage =
    "cannot have both GPU fraction request and whole GPU resource request/limit";

// KAI's rejection message for a pod object, or "" when KAI's admission accepts it (including every pod
// another scheduler schedules).
std::string kai_gpu_request_error(const nlohmann::json& pod);

// Registers the check as a built-in validating step for pod CREATE and UPDATE (KAI validates both).
void register_kai_admission(ApiServer& api);

}  // namespace kubex::sim::cluster::sched
