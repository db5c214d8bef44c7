// Emulation of KAI-Scheduler's pod admission (the `gpusharing` plugin of its validating webhook, whose rules live
// in KAI's gpu_request_validator.go): pods with `schedulerName: kai-scheduler` that carry `gpu-fraction` are
// rejected when any container or init container has an nvidia.com/gpu limit, or when the value is not a number
// strictly between 0 and 1. The messages are KAI's own.
//
// SIM-9: the rejection is what a real cluster answers for KAI's webhook: HTTP 403 Forbidden with
// `admission webhook "admission.kai-scheduler.svc" denied the request: <KAI's text>`, so kubectl prints
// `Error from server (Forbidden): ... denied the request: gpu-fraction annotation value must be a positive number
// smaller than 1.0`.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "sim/apiserver/api_error.h"

namespace kubex::sim {
class ApiServer;
}

namespace kubex::sim::cluster::sched {

// The name kube-apiserver gives KAI's validating webhook (admission.<KAI namespace>.svc).
inline constexpr const char* kKaiAdmissionWebhook = "admission.kai-scheduler.svc";
inline constexpr const char* kKaiFractionRangeMessage =
    "gpu-fraction annotation value must be a positive number smaller than 1.0";
inline constexpr const char* kKaiFractionAndWholeMessage =
    "cannot have both GPU fraction request and whole GPU resource request/limit";

// KAI's rejection message for a pod object, or "" when KAI's admission accepts it (including every pod
// another scheduler schedules).
std::string kai_gpu_request_error(const nlohmann::json& pod);

// The API server's answer when KAI's admission rejects `pod` (403 Forbidden, KAI's text after the webhook prefix),
// nullopt when it accepts it.
std::optional<ApiError> kai_admission_denial(const nlohmann::json& pod);

// Registers the check as a built-in validating step for pod CREATE and UPDATE (KAI validates both).
void register_kai_admission(ApiServer& api);

}  // namespace kubex::sim::cluster::sched
