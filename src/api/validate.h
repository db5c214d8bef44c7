// The one validator (API-2, VAL-1..6): every value check of every rightsizing.kubex.ai kind, and every
// message (SPEC §14 catalogue). The validating webhook, `kubex validate` and every reconciler call it.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/kinds.h"
#include "common/result.h"

namespace kubex::api {

// What a few checks need to know about the cluster (VAL-2 warnings). Offline validation uses the defaults.
struct ValidationContext {
  bool early_webhook_enabled = true;                // false: a KAI strategy gets a warning
  std::optional<std::set<std::string>> kai_queues;  // the Queue API's queues; nullopt = API absent/unknown
  // KAI-1: the cluster's sharing mode (api::gpu_sharing_mode of the GlobalConfiguration); nullopt = unknown.
  // Known and not NvFractions: a static limits.gpu and spec.kai.fractionLimit.enabled get VAL-2 warnings.
  std::optional<std::string> gpu_sharing_mode;
};

// KAI-2a's VAL-2 warning: a strategy that turns the burst limit off while the cluster's mode is NvFractions.
inline constexpr const char* kFractionLimitOffWarning =
    "spec.kai.fractionLimit.enabled: false: under NvFractions every fraction kubex writes is a hard memory cap";

struct ValidationReport {
  common::Errors errors;              // "<json path>: <message>", in document order
  std::vector<std::string> warnings;  // VAL-2
  bool contract = false;              // at least one error is a contract error (VAL-3): reason InvalidContract
  bool ok() const { return errors.empty(); }
  // OBS-1 reason for a False condition: "InvalidContract" or "InvalidSpec".
  const char* reason() const { return contract ? "InvalidContract" : "InvalidSpec"; }
  std::string message() const { return errors.str(); }
};

// Validates a whole object (apiVersion, kind, metadata, spec) of kind `k`. Never throws, whatever the JSON.
// Absent fields are defaulted in memory first (api/defaults.h), so a defaulted object and the raw object
// validate the same way.
ValidationReport validate(Kind k, const nlohmann::json& object, const ValidationContext& ctx = {});

// Looks at `kind` in the object itself; an unknown or missing kind is an error at path "kind".
ValidationReport validate_any(const nlohmann::json& object, const ValidationContext& ctx = {});

}  // namespace kubex::api
