// Status writes of kubex's own objects (API-1, OBS-1): conditions keyed by `type`, each with
// observedGeneration and a lastTransitionTime that moves only when its status changes, plus
// status.observedGeneration on every write. A read-modify-write of the /status subresource guarded by the
// read resourceVersion, retried on conflict, and skipped when nothing would change.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
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
  std::vector<std::string> remove;  // condition types to drop
  // Condition types that another writer owns while they carry one of these reasons: a `set` entry of such a
  // type is skipped then (e.g. Ready/PrometheusQueryFailed belongs to the reactive recommender).
  std::map<std::string, std::vector<std::string>> keep_reasons;
  nlohmann::json fields = nlohmann::json::object();  // a JSON merge patch of status (RFC 7386: null deletes)
  // When set, nothing is written if the object's metadata.generation differs (StatusResult::stale): the
  // caller decided from another version of the spec, and observedGeneration must not claim this one.
  std::optional<std::int64_t> generation;
};

struct StatusResult {
  bool written = false;
  bool stale = false;  // StatusChange::generation did not match the object's
  // Condition types whose status changed (or that appeared) in this write, e.g. for transition events.
  std::vector<std::string> transitioned;
  // The conditions as they were read before the change (type, status, reason, message), so that callers can
  // tell reason and message changes apart from repeats (OBS-2 events) without trusting a cache.
  std::vector<ConditionUpdate> previous;
};

// The well-formed entries of status.conditions (type, status, reason, message).
std::vector<ConditionUpdate> conditions_of(const nlohmann::json& status);

// Pure: applies `change` to `status` (an object, or null) for an object of `generation`. Returns the
// transitioned condition types; `status` is left equal to its input when nothing changes.
std::vector<std::string> apply_status_change(nlohmann::json& status, const StatusChange& change,
                                             std::int64_t generation, common::TimePoint now);

// Reads `object_path`, applies `change` and writes `<object_path>/status` when something changed.
kube::KResult<StatusResult> update_status(kube::Client& client, const std::string& object_path,
                                          const StatusChange& change, common::TimePoint now,
                                          int attempts = 5);

}  // namespace kubex::act
