#include "sim/cluster/workload_statefulset.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

namespace kubex::sim::cluster {

using nlohmann::json;

std::int64_t statefulset_ordinal(const std::string& set, const std::string& pod_name) {
  if (pod_name.size() <= set.size() + 1 || pod_name.compare(0, set.size(), set) != 0 ||
      pod_name[set.size()] != '-') {
    return -1;
  }
  std::string digits = pod_name.substr(set.size() + 1);
  if (digits.empty() || digits.size() > 9 || (digits.size() > 1 && digits[0] == '0')) return -1;
  std::int64_t n = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

std::vector<StsAction> plan_statefulset(const StsInput& in) {
  std::vector<StsAction> out;
  const bool monotonic = in.ordered_ready;
  const std::int64_t replicas = std::max<std::int64_t>(in.replicas, 0);
  std::map<std::int64_t, const StsPod*> slots;
  std::vector<const StsPod*> condemned;
  for (const auto& p : in.pods) {
    if (p.ordinal < 0) continue;
    if (p.ordinal >= in.start_ordinal && p.ordinal < in.start_ordinal + replicas) {
      slots[p.ordinal] = &p;
    } else {
      condemned.push_back(&p);
    }
  }
  std::sort(condemned.begin(), condemned.end(),
            [](const StsPod* a, const StsPod* b) { return a->ordinal > b->ordinal; });

  // The revision a pod created at `ord` gets: below the partition it stays at the current revision.
  auto revision_for = [&](std::int64_t ord) {
    if (!in.on_delete && ord - in.start_ordinal < in.partition) return in.current_revision;
    return in.update_revision;
  };
  // Pods this plan creates count as existing, unavailable pods from here on.
  std::map<std::int64_t, StsPod> created;

  // The first unavailable pod: missing replicas count, then condemned pods from the lowest ordinal.
  const StsPod* first_unavailable = nullptr;
  bool missing_first = false;
  for (std::int64_t ord = in.start_ordinal; ord < in.start_ordinal + replicas; ++ord) {
    auto it = slots.find(ord);
    if (it == slots.end()) {
      missing_first = true;
      break;
    }
    if (!it->second->available) {
      first_unavailable = it->second;
      break;
    }
  }
  if (!first_unavailable && !missing_first) {
    for (auto it = condemned.rbegin(); it != condemned.rend(); ++it) {
      if (!(*it)->available) {
        first_unavailable = *it;
        break;
      }
    }
  }

  // 1. Replicas in ordinal order.
  for (std::int64_t ord = in.start_ordinal; ord < in.start_ordinal + replicas; ++ord) {
    auto it = slots.find(ord);
    const StsPod* pod = it == slots.end() ? nullptr : it->second;
    if (pod && pod->finished) {
      if (!pod->terminating) out.push_back({StsAction::Kind::kDelete, ord, pod->name, "", "finished"});
      if (monotonic) return out;
      continue;
    }
    if (!pod) {
      StsPod fresh;
      fresh.ordinal = ord;
      fresh.revision = revision_for(ord);
      out.push_back({StsAction::Kind::kCreate, ord, "", fresh.revision, ""});
      created[ord] = fresh;
      if (monotonic) return out;
      continue;
    }
    if (monotonic && (pod->terminating || !pod->running_ready || !pod->available)) return out;
  }

  // 2. Condemned pods, highest ordinal first.
  for (const StsPod* pod : condemned) {
    if (pod->terminating) {
      if (monotonic) return out;
      continue;
    }
    if (monotonic && !pod->available && pod != first_unavailable) return out;
    out.push_back({StsAction::Kind::kDelete, pod->ordinal, pod->name, "", "scale-down"});
    if (monotonic) return out;
  }

  // 3. Rolling update: the highest out-of-date ordinal at or above the partition, one at a time.
  if (in.on_delete) return out;
  for (std::int64_t idx = replicas - 1; idx >= std::max<std::int64_t>(in.partition, 0); --idx) {
    std::int64_t ord = in.start_ordinal + idx;
    const StsPod* pod = nullptr;
    if (auto it = slots.find(ord); it != slots.end()) {
      pod = it->second;
    } else if (auto c = created.find(ord); c != created.end()) {
      pod = &c->second;
    }
    if (!pod) return out;
    if (pod->revision != in.update_revision && !pod->terminating) {
      out.push_back({StsAction::Kind::kDelete, ord, pod->name, "", "update"});
      return out;
    }
    if (!pod->available) return out;
  }
  return out;
}

namespace {

constexpr const char* kComponent = "statefulset-controller";

class StatefulSetController final : public WorkloadController {
 public:
  explicit StatefulSetController(WorkloadEnv& env) : WorkloadController(env, "statefulset-controller", 2) {
    watch_primary("apps/statefulsets", uids_);
    watch_children("/pods", uids_);
  }

 protected:
  Requeue reconcile(const std::string& key) override;

 private:
  UidIndex uids_;
};

StatefulSetController::Requeue StatefulSetController::reconcile(const std::string& key) {
  auto obj = env_.read("apps/statefulsets", key);
  if (!obj) return std::nullopt;
  const ObjectMetaView meta = parse_meta(*obj);
  if (meta.uid.empty()) return std::nullopt;
  const json& spec = json_object_at(*obj, "spec");
  const json& cur = json_object_at(*obj, "status");
  const json& tmpl = json_object_at(spec, "template");
  const json& strategy = json_object_at(spec, "updateStrategy");
  const std::int64_t min_ready = json_int(spec, "minReadySeconds", 0);
  const std::int64_t collision = json_int(cur, "collisionCount", 0);
  const auto now = ctx_.now();
  const ObjectRef ref{"apps/v1", "StatefulSet", meta.ns, meta.name, meta.uid};

  StsInput in;
  in.replicas = std::max<std::int64_t>(json_int(spec, "replicas", 1), 0);
  in.start_ordinal = std::max<std::int64_t>(json_int(json_object_at(spec, "ordinals"), "start", 0), 0);
  in.ordered_ready = json_str(spec, "podManagementPolicy", "OrderedReady") != "Parallel";
  in.on_delete = json_str(strategy, "type", "RollingUpdate") == "OnDelete";
  in.partition =
      std::max<std::int64_t>(json_int(json_object_at(strategy, "rollingUpdate"), "partition", 0), 0);
  in.update_revision = meta.name + "-" + short_hash(semantic_json(tmpl), collision);
  in.current_revision = json_str(cur, "currentRevision", in.update_revision);

  Requeue requeue;
  auto pending = env_.expectations.pending(meta.uid);
  auto pods = env_.owned_pods(meta.uid);
  std::map<std::string, std::shared_ptr<const SimPod>> by_name;
  for (const auto& p : pods) {
    std::int64_t ord = statefulset_ordinal(meta.name, p->name);
    if (ord < 0) continue;
    by_name[p->name] = p;
    StsPod v;
    v.name = p->name;
    v.ordinal = ord;
    v.terminating = p->deleting || pending.deletes.count(p->uid);
    v.finished = p->terminal();
    v.running_ready = pod_running_ready(*p);
    v.available = v.running_ready && env_.ready_clock.available(*p, min_ready, now, requeue);
    auto rev = p->labels.find(kControllerRevisionHashLabel);
    v.revision = rev == p->labels.end() ? "" : rev->second;
    in.pods.push_back(std::move(v));
  }
  for (const auto& name : pending.creates) {  // created, not yet in the cache
    std::int64_t ord = statefulset_ordinal(meta.name, name);
    if (ord < 0 || by_name.count(name)) continue;
    in.pods.push_back({name, ord, false, false, false, false, in.update_revision});
  }

  if (!meta.deleting) {
    for (const auto& a : plan_statefulset(in)) {
      std::string name =
          a.kind == StsAction::Kind::kCreate ? meta.name + "-" + std::to_string(a.ordinal) : a.name;
      if (a.kind == StsAction::Kind::kDelete) {
        auto it = by_name.find(name);
        if (it == by_name.end()) continue;
        if (auto r = env_.delete_pod(meta.uid, *it->second); !r) {
          env_.event(
              ref, "Warning", "FailedDelete",
              "delete Pod " + name + " in StatefulSet " + meta.name + " failed error: " + r.error().message,
              kComponent);
          requeue = std::chrono::milliseconds(5000);
          break;
        }
        env_.event(ref, "Normal", "SuccessfulDelete",
                   "delete Pod " + name + " in StatefulSet " + meta.name + " successful", kComponent);
        continue;
      }
      // Without ControllerRevision history only the update revision's template is known, so pods are always
      // created from it (kube recreates pods below the partition from the current revision).
      json pod = pod_from_template(tmpl, meta.ns, name, "",
                                   controller_ref("apps/v1", "StatefulSet", meta.name, meta.uid));
      json& labels = pod["metadata"]["labels"];
      labels[kStatefulSetPodNameLabel] = name;
      labels[kPodIndexLabel] = std::to_string(a.ordinal);
      labels[kControllerRevisionHashLabel] = in.update_revision;
      pod["spec"]["hostname"] = name;
      if (auto svc = json_str(spec, "serviceName"); !svc.empty()) pod["spec"]["subdomain"] = svc;
      auto created = env_.create_pod(meta.uid, pod);
      if (!created) {
        env_.event(ref, "Warning", "FailedCreate",
                   "create Pod " + name + " in StatefulSet " + meta.name +
                       " failed error: " + created.error().message,
                   kComponent);
        requeue = std::chrono::milliseconds(5000);
        break;
      }
      env_.event(ref, "Normal", "SuccessfulCreate",
                 "create Pod " + name + " in StatefulSet " + meta.name + " successful", kComponent);
    }
  }

  // Status over every pod of the set (computeReplicaStatus).
  std::int64_t count = 0, ready = 0, available = 0, current = 0, updated = 0;
  for (const auto& v : in.pods) {
    if (!by_name.count(v.name)) continue;
    ++count;
    if (v.running_ready) ++ready;
    if (v.available) ++available;
    if (!v.terminating) {
      if (v.revision == in.current_revision) ++current;
      if (v.revision == in.update_revision) ++updated;
    }
  }
  std::string current_revision = in.current_revision;
  if (!in.on_delete && updated == count && ready == count && count == in.replicas) {
    current_revision = in.update_revision;
    current = updated;
  }
  json status = {{"replicas", count},
                 {"availableReplicas", available},
                 {"currentRevision", current_revision},
                 {"updateRevision", in.update_revision},
                 {"collisionCount", collision}};
  if (meta.generation) status["observedGeneration"] = meta.generation;
  if (ready) status["readyReplicas"] = ready;
  if (current) status["currentReplicas"] = current;
  if (updated) status["updatedReplicas"] = updated;
  if (cur.contains("conditions")) status["conditions"] = cur["conditions"];
  if (auto w = env_.write_status(group_path("apps/v1", "statefulsets", meta.ns, meta.name), cur, status);
      !w) {
    if (!requeue) requeue = std::chrono::milliseconds(1000);
  }
  return requeue;
}

}  // namespace

std::unique_ptr<Subsystem> make_statefulset_controller(WorkloadEnv& env) {
  return std::make_unique<StatefulSetController>(env);
}

}  // namespace kubex::sim::cluster
