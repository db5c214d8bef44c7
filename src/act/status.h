// Status writes of kubex's own objects (API-1, OBS-1): conditions keyed by `type`, each with
// observedGeneration and a lastTransitionTime that moves only when its status changes, plus
// status.observedGeneration on every write. A read-modify-write of the /status subresource guarded by the
// read resourceVersion, retried on conflict, and skipped when nothing would change.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/clock.h"
#include "kube/client/client.h"

namespace kubex::act {

struct ConditionUpdate {
  std::string type, status, reason, message;  // status: True | False | Unknown
};

struct StatusChange {
  std::vector<ConditionUpdate> set;
  std::vector<std::string> remove;                    // condition types to drop
  nlohmann::json fields = nlohmann::json::object();   // a JSON merge patch of status (RFC 7386: null deletes)
};

struct StatusResult {
  bool written = false;
  // Condition types whose status changed (or that appeared) in this write, e.g. for transition events.
  std::vector<std::string> transitioned;
};

// Pure: applies `change` to `status` (an object, or null) for an object of `generation`. Returns the
// transitioned condition types; `status` is left equal to its input when nothing changes.
std::vector<std::string> apply_status_change(nlohmann::json& status, const StatusChange& change,
                                             std::int64_t generation, common::TimePoint now);

// Reads `object_path`, applies `change` and writes `<object_path>/status` when something changed.
kube::KResult<StatusResult> update_status(kube::Client& client, const std::string& object_path,
                                          const StatusChange& change, common::TimePoint now, int attempts = 5);

}  // namespace kubex::act
