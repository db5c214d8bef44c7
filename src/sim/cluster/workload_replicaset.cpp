#include "sim/cluster/workload_replicaset.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <unordered_map>

namespace kubex::sim::cluster {

using nlohmann::json;

namespace {

constexpr const char* kComponent = "replicaset-controller";
constexpr std::int64_t kBurstReplicas = 500;  // most pods created or deleted in one reconcile

int phase_rank(const SimPod& p) {
  if (p.phase == "Pending") return 0;
  if (p.phase == "Unknown") return 1;
  if (p.phase == "Running") return 2;
  return 3;
}

int restarts(const SimPod& p) {
  int r = 0;
  for (const auto& c : p.containers) r = std::max(r, c.restart_count);
  return r;
}

class ReplicaSetController final : public WorkloadController {
 public:
  explicit ReplicaSetController(WorkloadEnv& env) : WorkloadController(env, "replicaset-controller", 2) {
    watch_primary("apps/replicasets", uids_);
    watch_children("/pods", uids_);
  }

 protected:
  Requeue reconcile(const std::string& key) override;

 private:
  UidIndex uids_;
};

ReplicaSetController::Requeue ReplicaSetController::reconcile(const std::string& key) {
  auto obj = env_.read("apps/replicasets", key);
  if (!obj) return std::nullopt;
  const ObjectMetaView meta = parse_meta(*obj);
  if (meta.uid.empty()) return std::nullopt;
  const json& spec = json_object_at(*obj, "spec");
  const std::int64_t replicas = std::max<std::int64_t>(json_int(spec, "replicas", 1), 0);
  const std::int64_t min_ready = json_int(spec, "minReadySeconds", 0);
  const json& tmpl = json_object_at(spec, "template");
  const auto template_labels = json_string_map(json_object_at(tmpl, "metadata"), "labels");
  const ObjectRef ref{"apps/v1", "ReplicaSet", meta.ns, meta.name, meta.uid};
  const auto now = ctx_.now();

  auto pending = env_.expectations.pending(meta.uid);  // before the cache (see PodExpectations)
  auto pods = env_.owned_pods(meta.uid);
  std::vector<std::shared_ptr<const SimPod>> active;
  std::set<std::string> seen;
  for (const auto& p : pods) {
    seen.insert(p->name);
    if (pod_active(*p) && !pending.deletes.count(p->uid)) active.push_back(p);
  }
  std::int64_t in_flight = 0;  // created, not yet in the cache
  for (const auto& name : pending.creates) in_flight += seen.count(name) ? 0 : 1;

  Requeue requeue;
  std::string failure_reason, failure_message;
  if (!meta.deleting) {
    std::int64_t diff = static_cast<std::int64_t>(active.size()) + in_flight - replicas;
    if (diff < 0) {
      std::int64_t n = std::min(-diff, kBurstReplicas);
      json pod = pod_from_template(tmpl, meta.ns, "", meta.name + "-",
                                   controller_ref("apps/v1", "ReplicaSet", meta.name, meta.uid));
      for (std::int64_t i = 0; i < n; ++i) {
        auto created = env_.create_pod(meta.uid, pod);
        if (!created) {
          failure_reason = "FailedCreate";
          failure_message = created.error().message;
          env_.event(ref, "Warning", "FailedCreate", "Error creating: " + created.error().message,
                     kComponent);
          requeue = std::chrono::milliseconds(5000);
          break;
        }
        env_.event(ref, "Normal", "SuccessfulCreate", "Created pod: " + *created, kComponent);
      }
      if (!requeue && -diff > kBurstReplicas) requeue = std::chrono::milliseconds(10);
    } else if (diff > 0) {
      auto order = scale_down_order(active);
      std::int64_t n =
          std::min<std::int64_t>({diff, kBurstReplicas, static_cast<std::int64_t>(order.size())});
      for (std::int64_t i = 0; i < n; ++i) {
        const SimPod& victim = *order[static_cast<std::size_t>(i)];
        auto removed = env_.delete_pod(meta.uid, victim);
        if (!removed) {
          failure_reason = "FailedDelete";
          failure_message = removed.error().message;
          env_.event(ref, "Warning", "FailedDelete", "Error deleting: " + removed.error().message,
                     kComponent);
          requeue = std::chrono::milliseconds(5000);
          break;
        }
        env_.event(ref, "Normal", "SuccessfulDelete", "Deleted pod: " + victim.name, kComponent);
      }
    }
  }

  // Status, from the cache as it is now (the writes above show up in the next reconcile).
  std::int64_t labeled = 0, ready = 0, available = 0;
  std::int64_t count = 0;
  for (const auto& p : pods) {
    if (!pod_active(*p)) continue;
    ++count;
    if (labels_contain(p->labels, template_labels)) ++labeled;
    if (p->ready) ++ready;
    if (env_.ready_clock.available(*p, min_ready, now, requeue)) ++available;
  }
  const json& cur = json_object_at(*obj, "status");
  json status = {{"replicas", count}};
  if (labeled) status["fullyLabeledReplicas"] = labeled;
  if (ready) status["readyReplicas"] = ready;
  if (available) status["availableReplicas"] = available;
  if (meta.generation) status["observedGeneration"] = meta.generation;
  json conditions = json_array_at(cur, "conditions");
  if (!failure_reason.empty()) {
    if (!find_condition(conditions, "ReplicaFailure")) {
      set_condition(conditions, "ReplicaFailure", "True", failure_reason, failure_message, format_time(now));
    }
  } else {
    remove_condition(conditions, "ReplicaFailure");
  }
  if (!conditions.empty()) status["conditions"] = conditions;
  auto path = group_path("apps/v1", "replicasets", meta.ns, meta.name);
  if (auto w = env_.write_status(path, cur, status); !w) {
    log_.debug("status update failed", {{"key", key}, {"error", w.error().message}});
    if (!requeue) requeue = std::chrono::milliseconds(1000);
  }
  return requeue;
}

}  // namespace

std::vector<std::shared_ptr<const SimPod>> scale_down_order(std::vector<std::shared_ptr<const SimPod>> pods) {
  std::unordered_map<std::string, int> per_node;
  for (const auto& p : pods) {
    if (!p->node.empty()) ++per_node[p->node];
  }
  auto colocated = [&](const SimPod& p) { return p.node.empty() ? 0 : per_node[p.node]; };
  std::stable_sort(pods.begin(), pods.end(), [&](const auto& a, const auto& b) {
    if (a->node.empty() != b->node.empty()) return a->node.empty();
    if (phase_rank(*a) != phase_rank(*b)) return phase_rank(*a) < phase_rank(*b);
    if (a->ready != b->ready) return !a->ready;
    if (colocated(*a) != colocated(*b)) return colocated(*a) > colocated(*b);
    if (restarts(*a) != restarts(*b)) return restarts(*a) > restarts(*b);
    if (a->created != b->created) return a->created > b->created;
    return a->name > b->name;
  });
  return pods;
}

std::unique_ptr<Subsystem> make_replicaset_controller(WorkloadEnv& env) {
  return std::make_unique<ReplicaSetController>(env);
}

}  // namespace kubex::sim::cluster
