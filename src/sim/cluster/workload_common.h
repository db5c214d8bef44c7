// What the simulated cluster's workload controllers (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job,
// CronJob, KubeAI Model) share: never-throwing JSON accessors, owner references and pod templates, short
// stable hashes, status/condition writing, pod expectations (writes the pod cache has not shown yet), the
// availability clock for minReadySeconds, an Event rate limit, and a Controller-backed Subsystem base.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "common/log.h"
#include "common/result.h"
#include "sim/cluster/json_fields.h"
#include "sim/cluster/context.h"
#include "sim/cluster/subsystem.h"

namespace kubex::sim::cluster {

// Well-known keys of the workload controllers.
inline constexpr const char* kPodTemplateHashLabel = "pod-template-hash";
inline constexpr const char* kControllerRevisionHashLabel = "controller-revision-hash";
inline constexpr const char* kRevisionAnnotation = "deployment.kubernetes.io/revision";
inline constexpr const char* kRevisionHistoryAnnotation = "deployment.kubernetes.io/revision-history";
inline constexpr const char* kDesiredReplicasAnnotation = "deployment.kubernetes.io/desired-replicas";
inline constexpr const char* kMaxReplicasAnnotation = "deployment.kubernetes.io/max-replicas";

// Times in objects.
common::TimePoint json_time(const nlohmann::json& obj, const char* key);  // epoch when absent or invalid
std::string format_time(common::TimePoint t);                             // RFC 3339, seconds

// Identity of a stored object.
struct ObjectMetaView {
  std::string ns, name, uid;
  std::int64_t generation = 0;
  bool deleting = false;
  common::TimePoint created{};
  std::map<std::string, std::string> labels, annotations;
};
ObjectMetaView parse_meta(const nlohmann::json& obj);

// An int-or-percent field (maxSurge, maxUnavailable) scaled against `total`: "25%" of 10 is 3 rounding up,
// 2 rounding down. Absent/null values resolve to `def`. Errors for malformed values.
common::Result<std::int64_t> scaled_int_or_percent(const nlohmann::json& v, std::int64_t total, bool round_up,
                                                   std::int64_t def = 0);

// `v` without null members and empty objects/arrays, recursively: the values a Go client cannot tell from
// absent ones (kubectl sends `creationTimestamp: null` in templates; Kubernetes' semantic equality treats
// empty and nil slices and maps alike). Templates are compared and hashed in this form.
nlohmann::json semantic_json(const nlohmann::json& v);

// A short stable hash of a JSON value (and a collision count when > 0): 10 characters of the alphabet
// Kubernetes uses for generated names ("bcdfghjklmnpqrstvwxz2456789"), from FNV-1a 64 of the canonical
// (sorted-key) JSON text. Equal values always give equal hashes, across runs and machines.
std::string short_hash(const nlohmann::json& value, std::int64_t collision_count = 0);

// An ownerReference marking the controller (controller: true, blockOwnerDeletion: true).
nlohmann::json controller_ref(const std::string& api_version, const std::string& kind,
                              const std::string& name, const std::string& uid);
// The controller ownerReference's uid of an object, "" when it has none.
std::string controller_uid(const nlohmann::json& obj);

// A Pod from a pod template (labels, annotations, finalizers and spec), with `generate_name` or `name`
// (exactly one non-empty), the namespace and the controller reference.
nlohmann::json pod_from_template(const nlohmann::json& tmpl, const std::string& ns, const std::string& name,
                                 const std::string& generate_name, const nlohmann::json& owner_ref);

// True when every key/value of `want` is present in `have`.
bool labels_contain(const std::map<std::string, std::string>& have,
                    const std::map<std::string, std::string>& want);

// A pod a controller counts: not terminal (Succeeded/Failed) and not being deleted.
bool pod_active(const SimPod& p);
// Running with the Ready condition True.
bool pod_running_ready(const SimPod& p);

// Conditions (apps/batch style): sets `type` unless it already has this status and reason; keeps
// lastTransitionTime when only the reason changes. `with_update_time` adds lastUpdateTime (Deployments).
void set_condition(nlohmann::json& conditions, const std::string& type, const std::string& status,
                   const std::string& reason, const std::string& message, const std::string& now,
                   bool with_update_time = false);
const nlohmann::json* find_condition(const nlohmann::json& conditions, const std::string& type);
void remove_condition(nlohmann::json& conditions, const std::string& type);

// The merge patch turning `current` into `desired` at the top level (keys only in `current` become null);
// empty when they are equal.
nlohmann::json status_diff(const nlohmann::json& current, const nlohmann::json& desired);

// Pod writes a controller made that the pod cache has not shown yet (like client-go's ControllerExpectations,
// but by pod name, so a reconcile can overlay them on the cache instead of waiting). Entries expire.
class PodExpectations {
 public:
  void expect_create(const std::string& owner_uid, const std::string& pod_name);
  // Deletions are tracked by pod uid (a StatefulSet recreates a pod under the same name).
  void expect_delete(const std::string& owner_uid, const std::string& pod_uid);
  // From the pod feed (after the cache was updated): the pod exists, or is gone/being deleted.
  void observe(const std::string& owner_uid, const std::string& pod_name, const std::string& pod_uid,
               bool gone_or_deleting);
  struct Pending {
    std::set<std::string> creates;  // pod names
    std::set<std::string> deletes;  // pod uids
  };
  // Read this BEFORE the pod cache, so a pod observed in between is seen in the cache.
  Pending pending(const std::string& owner_uid);
  void forget(const std::string& owner_uid);

 private:
  using Times = std::unordered_map<std::string, std::chrono::steady_clock::time_point>;
  struct Entry {
    Times creates, deletes;
  };
  std::mutex mu_;
  std::unordered_map<std::string, Entry> by_owner_;
};

// When pods became ready, for owners with minReadySeconds > 0 (a pod's Ready transition time is not in the
// pod projection). A pod is first stamped by the reconcile that sees it ready; non-ready or gone pods are
// dropped by the pod feed.
class ReadyClock {
 public:
  // Available = ready for at least `min_ready_seconds`. Sets `recheck` to the remaining wait when not yet.
  bool available(const SimPod& p, std::int64_t min_ready_seconds, common::TimePoint now,
                 std::optional<std::chrono::milliseconds>& recheck);
  void on_pod(const std::string& uid, bool ready_and_alive);
  bool tracks(const std::string& uid);

 private:
  std::mutex mu_;
  std::unordered_map<std::string, common::TimePoint> since_;
};

// A token bucket for Events: bursts of `burst`, then `per_second` (controllers at scale must not flood the
// API server with Events; dropped ones are counted).
class EventLimiter {
 public:
  EventLimiter(double burst, double per_second) : tokens_(burst), burst_(burst), rate_(per_second) {}
  bool allow();
  std::uint64_t dropped() const;

 private:
  mutable std::mutex mu_;
  double tokens_, burst_, rate_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
  std::uint64_t dropped_ = 0;
};

// uid -> "ns/name" of one kind's objects, kept from its feed (maps owner uids of child events to keys).
class UidIndex {
 public:
  void set(const std::string& uid, const std::string& key);
  void erase(const std::string& uid);
  std::optional<std::string> key_of(const std::string& uid) const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::string> keys_;
};

// owner uid -> child keys (e.g. Deployment -> ReplicaSets), from the child kind's feed.
class ChildIndex {
 public:
  void update(const std::string& child_key, const std::vector<std::string>& owner_uids);
  void remove(const std::string& child_key);
  std::vector<std::string> children(const std::string& owner_uid) const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::set<std::string>> by_owner_;
  std::unordered_map<std::string, std::vector<std::string>> owners_of_;
};

// State shared by all workload controllers.
class WorkloadEnv {
 public:
  explicit WorkloadEnv(ClusterContext& ctx);
  ClusterContext& ctx;
  PodExpectations expectations;
  ReadyClock ready_clock;
  EventLimiter event_limit{200, 20};

  // Records an Event unless the rate limit is spent.
  void event(const ObjectRef& ref, const std::string& type, const std::string& reason,
             const std::string& message, const std::string& component);
  // The stored object as JSON (a fresh read of the store, like an informer cache that is never stale).
  std::optional<nlohmann::json> read(const std::string& storage, const std::string& key) const;
  // Pods whose controller ownerReference is `owner_uid`.
  std::vector<std::shared_ptr<const SimPod>> owned_pods(const std::string& owner_uid) const;
  // Creates a pod; returns its name (generateName resolved) or the API error message.
  common::Result<std::string> create_pod(const std::string& owner_uid, const nlohmann::json& pod);
  // Deletes a pod (default grace); NotFound counts as success.
  common::Result<void> delete_pod(const std::string& owner_uid, const SimPod& pod);
  // Merge-patches `desired` into the status subresource at `path` when it differs from `current`.
  common::Result<void> write_status(const std::string& path, const nlohmann::json& current,
                                    const nlohmann::json& desired);
};

// Key of a store event's object ("ns/name").
std::string event_key(const StoreEvent& ev);
// "ns/name" -> {ns, name}
std::pair<std::string, std::string> split_key(const std::string& key);

// A Subsystem running one level-triggered Controller. Subclasses implement reconcile(); exceptions are caught
// here (logged, retried after 5 s) so none reaches the Controller.
class WorkloadController : public Subsystem {
 public:
  WorkloadController(WorkloadEnv& env, const std::string& name, int workers);
  void start() override { controller_.start(); }
  void stop() override { controller_.stop(); }
  bool idle() const override { return controller_.idle(); }

 protected:
  using Requeue = std::optional<std::chrono::milliseconds>;
  virtual Requeue reconcile(const std::string& key) = 0;
  // Registers handlers on the primary kind's feed: keeps `uids` current and enqueues every changed object.
  void watch_primary(const std::string& storage, UidIndex& uids);
  // Enqueues the owners (found in `owners`) of every changed object of `storage` (pods, child kinds).
  void watch_children(const std::string& storage, const UidIndex& owners);

  WorkloadEnv& env_;
  ClusterContext& ctx_;
  common::Logger log_;
  Controller controller_;
};

// Milliseconds until `t` from `now`, at least `floor`.
std::chrono::milliseconds until(common::TimePoint t, common::TimePoint now,
                                std::chrono::milliseconds floor = std::chrono::milliseconds(100));

}  // namespace kubex::sim::cluster
