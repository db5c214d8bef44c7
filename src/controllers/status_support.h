// What the status controllers of kubex's own objects share (controllers/validity_status.h,
// controllers/policy_status.h): work-queue keys naming an object of a rightsizing.kubex.ai kind, the status
// conditions of a cached object, and one status write followed by the OBS-2 events its condition changes call
// for (decided by decide::condition_events from the conditions read just before the write).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "act/status.h"
#include "api/kinds.h"
#include "api/objects.h"
#include "common/cached_object.h"
#include "decide/status/object_status.h"
#include "kube/runtime/controller.h"

namespace kubex::kube {
class EventRecorder;
}

namespace kubex::act {
class StatusWriter;
}

namespace kubex::controllers {

// A work-queue key, also what logs print: "<Kind>/<namespace>/<name>", "<Kind>/<name>" for cluster kinds
// ("ClusterAutomationStrategy/kai-gpu-sharing", "GpuReactivePolicy/ml/reactive").
struct ObjectId {
  api::Kind kind = api::Kind::kAutomationStrategy;
  std::string ns, name;
  std::string key() const;
  std::string cache_key() const { return ns.empty() ? name : ns + "/" + name; }  // an informer's key
  std::string path() const { return api::object_path(kind, ns, name); }
};
std::optional<ObjectId> parse_object_key(const std::string& key);
ObjectId object_id(api::Kind kind, const common::CachedObject& o);

// The status conditions the cache holds for a cached kubex object of kind `k` (api/kubex_views.h; empty for
// another kind). Its parsed metadata: observe::meta_of (observe/kubex_meta.h).
std::vector<decide::ConditionState> cached_conditions(api::Kind k, const common::CachedObject& o);

act::ConditionUpdate to_update(const decide::ConditionState& c);
std::vector<decide::ConditionState> to_states(const std::vector<act::ConditionUpdate>& cs);

// Writes `change` to the object's status and records on it the events that the written conditions call for
// (decide::condition_events against the conditions read just before the write; nothing when the write found
// nothing to change). The write is skipped and retried (requeue) when the object's generation is not the
// cached `meta.generation` the change was decided from. A vanished object is not an error. `requeue_after` is
// what a successful reconcile returns (VAL-6: the 5m requeue of invalid objects).
kube::ReconcileOutcome write_status(act::StatusWriter& writer, kube::EventRecorder* events, const ObjectId& id,
                                    const api::ObjectMeta& meta, act::StatusChange change,
                                    common::TimePoint now, common::Duration requeue_after);

}  // namespace kubex::controllers
