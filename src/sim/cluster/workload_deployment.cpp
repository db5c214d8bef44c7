#include "sim/cluster/workload_deployment.h"

#include <algorithm>
#include <climits>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "common/time_format.h"
#include "sim/cluster/workload_rollout.h"

namespace kubex::sim::cluster {

using nlohmann::json;

std::string pod_template_hash(const json& pod_template, std::int64_t collision_count) {
  return short_hash(template_without_hash(pod_template), collision_count);
}

json template_without_hash(const json& pod_template) {
  json t = semantic_json(pod_template.is_object() ? pod_template : json::object());
  if (t.contains("metadata") && t["metadata"].is_object()) {
    json& md = t["metadata"];
    if (md.contains("labels") && md["labels"].is_object()) {
      md["labels"].erase(kPodTemplateHashLabel);
      if (md["labels"].empty()) md.erase("labels");
    }
  }
  return t;
}

namespace {

constexpr const char* kComponent = "deployment-controller";

bool skip_copy_annotation(const std::string& k) {
  return k == "kubectl.kubernetes.io/last-applied-configuration" || k == kRevisionAnnotation ||
         k == kRevisionHistoryAnnotation || k == kDesiredReplicasAnnotation || k == kMaxReplicasAnnotation ||
         k == "deprecated.deployment.rollback.to";
}

std::int64_t parse_int(const std::map<std::string, std::string>& m, const char* key, std::int64_t def) {
  auto it = m.find(key);
  if (it == m.end()) return def;
  try {
    std::size_t used = 0;
    long long v = std::stoll(it->second, &used);
    return used == it->second.size() ? v : def;
  } catch (...) {
    return def;
  }
}

struct Rs {
  std::string name, uid;
  std::int64_t replicas = 0, status_replicas = 0, ready = 0, available = 0;
  std::int64_t generation = 0, observed_generation = 0, revision = 0;
  std::map<std::string, std::string> annotations;
  common::TimePoint created{};
  bool deleting = false, matches = false;
  RsView view() const {
    return {name, replicas, available, parse_int(annotations, kMaxReplicasAnnotation, -1), created};
  }
};

Rs parse_rs(const json& obj, const json& deployment_template) {
  Rs rs;
  ObjectMetaView m = parse_meta(obj);
  rs.name = m.name;
  rs.uid = m.uid;
  rs.generation = m.generation;
  rs.deleting = m.deleting;
  rs.created = m.created;
  rs.annotations = m.annotations;
  rs.revision = parse_int(m.annotations, kRevisionAnnotation, 0);
  const json& spec = json_object_at(obj, "spec");
  const json& st = json_object_at(obj, "status");
  rs.replicas = std::max<std::int64_t>(json_int(spec, "replicas", 1), 0);
  rs.status_replicas = json_int(st, "replicas", 0);
  rs.ready = json_int(st, "readyReplicas", 0);
  rs.available = json_int(st, "availableReplicas", 0);
  rs.observed_generation = json_int(st, "observedGeneration", 0);
  rs.matches = template_without_hash(json_object_at(spec, "template")) == deployment_template;
  return rs;
}

// One reconcile of one Deployment.
class Sync {
 public:
  Sync(WorkloadEnv& env, ChildIndex& rs_index, const json& d) : env_(env), rs_index_(rs_index), d_(d) {}
  std::optional<std::chrono::milliseconds> run();

 private:
  bool ensure_new_rs(bool create);
  bool scale(Rs& rs, std::int64_t to);
  bool scale_all();
  void cleanup();
  bool complete() const;
  json compute_status(bool rollout);
  bool old_pods_running() const;

  WorkloadEnv& env_;
  ChildIndex& rs_index_;
  const json& d_;
  ObjectMetaView meta_;
  ObjectRef ref_;
  std::string path_;
  json tmpl_, conditions_;
  std::int64_t replicas_ = 1, collision_ = 0;
  RolloutLimits limits_;
  bool rolling_ = true, paused_ = false, failed_ = false;
  std::optional<Rs> new_rs_;
  std::vector<Rs> old_;
  std::optional<std::chrono::milliseconds> requeue_;
  std::string now_;
};

bool Sync::complete() const {
  std::int64_t status_replicas = new_rs_ ? new_rs_->status_replicas : 0,
               available = new_rs_ ? new_rs_->available : 0;
  for (const auto& rs : old_) {
    status_replicas += rs.status_replicas;
    available += rs.available;
  }
  return new_rs_ && new_rs_->status_replicas == replicas_ && status_replicas == replicas_ &&
         available == replicas_ && new_rs_->observed_generation >= new_rs_->generation;
}

bool Sync::scale(Rs& rs, std::int64_t to) {
  std::string desired = std::to_string(replicas_), max = std::to_string(replicas_ + limits_.max_surge);
  bool annotations_stale =
      rs.annotations[kDesiredReplicasAnnotation] != desired || rs.annotations[kMaxReplicasAnnotation] != max;
  if (rs.replicas == to && !annotations_stale) return true;
  json patch = {
      {"metadata", {{"annotations", {{kDesiredReplicasAnnotation, desired}, {kMaxReplicasAnnotation, max}}}}},
      {"spec", {{"replicas", to}}}};
  auto r = env_.ctx.client().merge_patch(group_path("apps/v1", "replicasets", meta_.ns, rs.name), patch);
  if (!r.ok()) {
    failed_ = true;
    return false;
  }
  if (rs.replicas != to) {
    env_.event(ref_, "Normal", "ScalingReplicaSet",
               std::string(to > rs.replicas ? "Scaled up" : "Scaled down") + " replica set " + rs.name +
                   " from " + std::to_string(rs.replicas) + " to " + std::to_string(to),
               kComponent);
  }
  rs.replicas = to;
  rs.annotations[kDesiredReplicasAnnotation] = desired;
  rs.annotations[kMaxReplicasAnnotation] = max;
  return true;
}

bool Sync::ensure_new_rs(bool create) {
  std::int64_t max_old = 0;
  for (const auto& rs : old_) max_old = std::max(max_old, rs.revision);
  const std::int64_t revision = max_old + 1;
  const auto d_annotations = meta_.annotations;
  if (new_rs_) {
    // Keep the new ReplicaSet's copied annotations and revision current (a rollback bumps the revision).
    json ann = json::object();
    for (const auto& [k, v] : d_annotations) {
      if (!skip_copy_annotation(k) && new_rs_->annotations[k] != v) ann[k] = v;
    }
    if (new_rs_->revision < revision) {
      auto old = new_rs_->annotations.find(kRevisionAnnotation);
      if (old != new_rs_->annotations.end() && !old->second.empty()) {
        std::string hist = new_rs_->annotations[kRevisionHistoryAnnotation];
        ann[kRevisionHistoryAnnotation] = hist.empty() ? old->second : hist + "," + old->second;
      }
      ann[kRevisionAnnotation] = std::to_string(revision);
    }
    if (!ann.empty()) {
      auto r = env_.ctx.client().merge_patch(group_path("apps/v1", "replicasets", meta_.ns, new_rs_->name),
                                             {{"metadata", {{"annotations", ann}}}});
      if (!r.ok()) return false;
      for (const auto& [k, v] : ann.items()) new_rs_->annotations[k] = v.get<std::string>();
      new_rs_->revision = std::max(new_rs_->revision, revision);
    }
    if (!find_condition(conditions_, "Progressing") &&
        json_at(json_object_at(d_, "spec"), "progressDeadlineSeconds").is_number()) {
      set_condition(conditions_, "Progressing", "True", "FoundNewReplicaSet",
                    "Found new replica set \"" + new_rs_->name + "\"", now_, true);
    }
    return true;
  }
  if (!create) return true;

  const std::string hash = pod_template_hash(tmpl_, collision_);
  const std::string name = meta_.name + "-" + hash;
  std::int64_t all = 0;
  for (const auto& rs : old_) all += rs.replicas;
  std::int64_t size = rolling_ ? rolling_new_replicas(replicas_, limits_.max_surge, all, 0) : replicas_;
  json rs_tmpl = json_object_at(json_object_at(d_, "spec"), "template");
  if (!json_at(rs_tmpl, "metadata").is_object()) rs_tmpl["metadata"] = json::object();
  if (!json_at(rs_tmpl["metadata"], "labels").is_object()) rs_tmpl["metadata"]["labels"] = json::object();
  rs_tmpl["metadata"]["labels"][kPodTemplateHashLabel] = hash;
  json selector = json_object_at(json_object_at(d_, "spec"), "selector");
  selector["matchLabels"][kPodTemplateHashLabel] = hash;
  json annotations = json::object();
  for (const auto& [k, v] : d_annotations) {
    if (!skip_copy_annotation(k)) annotations[k] = v;
  }
  annotations[kRevisionAnnotation] = std::to_string(revision);
  annotations[kDesiredReplicasAnnotation] = std::to_string(replicas_);
  annotations[kMaxReplicasAnnotation] = std::to_string(replicas_ + limits_.max_surge);
  json spec = {{"replicas", size}, {"selector", selector}, {"template", rs_tmpl}};
  if (auto mrs = json_int(json_object_at(d_, "spec"), "minReadySeconds", 0); mrs > 0)
    spec["minReadySeconds"] = mrs;
  json rs = {
      {"apiVersion", "apps/v1"},
      {"kind", "ReplicaSet"},
      {"metadata",
       {{"name", name},
        {"namespace", meta_.ns},
        {"labels", rs_tmpl["metadata"]["labels"]},
        {"annotations", annotations},
        {"ownerReferences", json::array({controller_ref("apps/v1", "Deployment", meta_.name, meta_.uid)})}}},
      {"spec", spec}};
  auto r = env_.ctx.client().create(group_path("apps/v1", "replicasets", meta_.ns), rs);
  if (r.status == 409) {
    // Ours already (a stale index), or a hash collision: bump collisionCount and retry with a new name.
    if (auto existing = env_.read("apps/replicasets", meta_.ns + "/" + name)) {
      Rs found = parse_rs(*existing, tmpl_);
      if (controller_uid(*existing) == meta_.uid && found.matches) {
        rs_index_.update(meta_.ns + "/" + name, {meta_.uid});
        new_rs_ = found;
        return true;
      }
    }
    ++collision_;
    requeue_ = std::chrono::milliseconds(10);
    return false;
  }
  if (!r.ok()) {
    std::string msg = json_str(r.json(), "message", "HTTP " + std::to_string(r.status));
    set_condition(conditions_, "ReplicaFailure", "True", "FailedCreate", msg, now_, true);
    env_.event(ref_, "Warning", "FailedCreate", "Failed to create new replica set \"" + name + "\": " + msg,
               kComponent);
    requeue_ = std::chrono::milliseconds(5000);
    return false;
  }
  remove_condition(conditions_, "ReplicaFailure");
  rs_index_.update(meta_.ns + "/" + name, {meta_.uid});
  new_rs_ = parse_rs(r.json(), tmpl_);
  if (size > 0) {
    env_.event(ref_, "Normal", "ScalingReplicaSet",
               "Scaled up replica set " + name + " from 0 to " + std::to_string(size), kComponent);
  }
  set_condition(conditions_, "Progressing", "True", "NewReplicaSetCreated",
                "Created new replica set \"" + name + "\"", now_, true);
  return true;
}

bool Sync::scale_all() {
  std::vector<Rs*> active;
  if (new_rs_ && new_rs_->replicas > 0) active.push_back(&*new_rs_);
  for (auto& rs : old_) {
    if (rs.replicas > 0) active.push_back(&rs);
  }
  if (active.size() <= 1) {
    Rs* target = active.empty() ? nullptr : active.front();
    if (!target && new_rs_) target = &*new_rs_;
    if (!target && !old_.empty()) target = &old_.back();  // the newest old set
    return !target || scale(*target, replicas_);
  }
  if (new_rs_ && new_rs_->replicas == replicas_ && new_rs_->available == replicas_) {
    for (auto& rs : old_) {
      if (rs.replicas > 0 && !scale(rs, 0)) return false;
    }
    return true;
  }
  if (!rolling_) return true;
  std::vector<RsView> views;
  for (auto* rs : active) views.push_back(rs->view());
  std::int64_t status_replicas = json_int(json_object_at(d_, "status"), "replicas", 0);
  auto sizes = proportional_sizes(replicas_, limits_.max_surge, status_replicas, views);
  for (std::size_t i = 0; i < active.size(); ++i) {
    if (!scale(*active[i], sizes[i])) return false;
  }
  return true;
}

void Sync::cleanup() {
  std::int64_t limit = json_int(json_object_at(d_, "spec"), "revisionHistoryLimit", 10);
  std::vector<const Rs*> cleanable;
  for (const auto& rs : old_) {
    if (!rs.deleting && rs.replicas == 0 && rs.status_replicas == 0 &&
        rs.observed_generation >= rs.generation) {
      cleanable.push_back(&rs);
    }
  }
  std::int64_t excess = static_cast<std::int64_t>(cleanable.size()) - std::max<std::int64_t>(limit, 0);
  if (excess <= 0) return;
  std::stable_sort(cleanable.begin(), cleanable.end(), [](const Rs* a, const Rs* b) {
    return a->revision != b->revision ? a->revision < b->revision : a->created < b->created;
  });
  for (std::int64_t i = 0; i < excess; ++i) {
    env_.ctx.client().remove(
        group_path("apps/v1", "replicasets", meta_.ns, cleanable[static_cast<std::size_t>(i)]->name));
  }
}

bool Sync::old_pods_running() const {
  for (const auto& rs : old_) {
    for (const auto& p : env_.owned_pods(rs.uid)) {
      if (!p->terminal()) return true;
    }
  }
  return false;
}

json Sync::compute_status(bool rollout) {
  const json& cur = json_object_at(d_, "status");
  std::int64_t status_replicas = 0, ready = 0, available = 0, spec_total = 0;
  auto add = [&](const Rs& rs) {
    status_replicas += rs.status_replicas;
    ready += rs.ready;
    available += rs.available;
    spec_total += rs.replicas;
  };
  if (new_rs_) add(*new_rs_);
  for (const auto& rs : old_) add(rs);
  std::int64_t updated = new_rs_ ? new_rs_->status_replicas : 0;
  std::int64_t unavailable = std::max<std::int64_t>(spec_total - available, 0);

  std::int64_t max_unavailable = rolling_ && replicas_ > 0 ? std::min(limits_.max_unavailable, replicas_) : 0;
  if (available >= replicas_ - max_unavailable) {
    set_condition(conditions_, "Available", "True", "MinimumReplicasAvailable",
                  "Deployment has minimum availability.", now_, true);
  } else {
    set_condition(conditions_, "Available", "False", "MinimumReplicasUnavailable",
                  "Deployment does not have minimum availability.", now_, true);
  }

  const json& deadline = json_at(json_object_at(d_, "spec"), "progressDeadlineSeconds");
  const bool has_deadline = deadline.is_number_integer() && deadline.get<std::int64_t>() != INT32_MAX;
  if (rollout && !has_deadline) remove_condition(conditions_, "Progressing");
  if (rollout && has_deadline) {
    const json* prog = find_condition(conditions_, "Progressing");
    const bool done_before =
        status_replicas == updated && prog && json_str(*prog, "reason") == "NewReplicaSetAvailable";
    const std::int64_t old_replicas = json_int(cur, "replicas", 0),
                       old_updated = json_int(cur, "updatedReplicas", 0);
    const bool progressing =
        updated > old_updated || (status_replicas - updated) < (old_replicas - old_updated) ||
        ready > json_int(cur, "readyReplicas", 0) || available > json_int(cur, "availableReplicas", 0);
    const std::string rs_name = new_rs_ ? new_rs_->name : "";
    if (!done_before) {
      if (complete()) {
        set_condition(conditions_, "Progressing", "True", "NewReplicaSetAvailable",
                      "ReplicaSet \"" + rs_name + "\" has successfully progressed.", now_, true);
      } else if (progressing) {
        std::string transition = now_;
        if (prog && json_str(*prog, "status") == "True")
          transition = json_str(*prog, "lastTransitionTime", now_);
        remove_condition(conditions_, "Progressing");
        conditions_.push_back({{"type", "Progressing"},
                               {"status", "True"},
                               {"lastUpdateTime", now_},
                               {"lastTransitionTime", transition},
                               {"reason", "ReplicaSetUpdated"},
                               {"message", new_rs_ ? "ReplicaSet \"" + rs_name + "\" is progressing."
                                                   : "Deployment \"" + meta_.name + "\" is progressing."}});
      } else if (prog && json_str(*prog, "reason") != "NewReplicaSetAvailable") {
        auto since =
            common::parse_rfc3339(json_str(*prog, "lastUpdateTime", json_str(*prog, "lastTransitionTime")));
        auto at = (since ? *since : env_.ctx.now()) + std::chrono::seconds(deadline.get<std::int64_t>());
        if (json_str(*prog, "reason") == "ProgressDeadlineExceeded" || env_.ctx.now() > at) {
          set_condition(conditions_, "Progressing", "False", "ProgressDeadlineExceeded",
                        "ReplicaSet \"" + rs_name + "\" has timed out progressing.", now_, true);
        } else {
          auto wait = until(at, env_.ctx.now(), std::chrono::milliseconds(1000));
          if (!requeue_ || wait < *requeue_) requeue_ = wait;
        }
      }
    }
  }

  json status = json::object();
  if (meta_.generation) status["observedGeneration"] = meta_.generation;
  for (auto [k, v] :
       {std::pair{"replicas", status_replicas}, std::pair{"updatedReplicas", updated},
        std::pair{"readyReplicas", ready}, std::pair{"availableReplicas", available},
        std::pair{"unavailableReplicas", unavailable}, std::pair{"collisionCount", collision_}}) {
    if (v) status[k] = v;
  }
  if (!conditions_.empty()) status["conditions"] = conditions_;
  return status;
}

std::optional<std::chrono::milliseconds> Sync::run() {
  meta_ = parse_meta(d_);
  ref_ = {"apps/v1", "Deployment", meta_.ns, meta_.name, meta_.uid};
  path_ = group_path("apps/v1", "deployments", meta_.ns, meta_.name);
  now_ = format_time(env_.ctx.now());
  const json& spec = json_object_at(d_, "spec");
  const json& status = json_object_at(d_, "status");
  conditions_ = json_array_at(status, "conditions");
  collision_ = json_int(status, "collisionCount", 0);
  replicas_ = std::max<std::int64_t>(json_int(spec, "replicas", 1), 0);
  paused_ = json_bool(spec, "paused", false);
  tmpl_ = template_without_hash(json_object_at(spec, "template"));
  const json& sel = json_object_at(spec, "selector");
  if (json_object_at(sel, "matchLabels").empty() && json_array_at(sel, "matchExpressions").empty()) {
    env_.event(ref_, "Warning", "SelectingAll",
               "This deployment is selecting all pods. A non-empty selector is required.", kComponent);
    return std::nullopt;
  }
  const json& strategy = json_object_at(spec, "strategy");
  rolling_ = json_str(strategy, "type", "RollingUpdate") != "Recreate";
  if (rolling_) {
    const json& ru = json_object_at(strategy, "rollingUpdate");
    json surge = ru.contains("maxSurge") ? ru["maxSurge"] : json("25%");
    json unavailable = ru.contains("maxUnavailable") ? ru["maxUnavailable"] : json("25%");
    auto l = resolve_fenceposts(surge, unavailable, replicas_);
    if (!l) {
      env_.event(ref_, "Warning", "InvalidStrategy", l.error().str(), kComponent);
      return std::nullopt;
    }
    limits_ = *l;
  }

  std::vector<Rs> all;
  for (const auto& key : rs_index_.children(meta_.uid)) {
    auto obj = env_.read("apps/replicasets", key);
    if (obj && controller_uid(*obj) == meta_.uid) all.push_back(parse_rs(*obj, tmpl_));
  }
  std::stable_sort(all.begin(), all.end(), [](const Rs& a, const Rs& b) {
    return a.created != b.created ? a.created < b.created : a.name < b.name;
  });
  for (auto& rs : all) {
    if (!new_rs_ && rs.matches && !rs.deleting) {
      new_rs_ = rs;
    } else {
      old_.push_back(rs);
    }
  }

  if (!meta_.deleting) {
    // Paused deployments and spec.paused flips report the Progressing condition as Unknown.
    const json* prog = find_condition(conditions_, "Progressing");
    if (paused_ && (!prog || json_str(*prog, "reason") != "DeploymentPaused")) {
      set_condition(conditions_, "Progressing", "Unknown", "DeploymentPaused", "Deployment is paused", now_,
                    true);
    } else if (!paused_ && prog && json_str(*prog, "reason") == "DeploymentPaused") {
      set_condition(conditions_, "Progressing", "Unknown", "DeploymentResumed", "Deployment is resumed", now_,
                    true);
    }
    bool scaling_event = false;
    auto check_scaling = [&](const Rs& rs) {
      std::int64_t desired = parse_int(rs.annotations, kDesiredReplicasAnnotation, -1);
      if (rs.replicas > 0 && desired >= 0 && desired != replicas_) scaling_event = true;
    };
    if (new_rs_) check_scaling(*new_rs_);
    for (const auto& rs : old_) check_scaling(rs);
    bool rollout = false;
    if (paused_ || scaling_event) {
      if (ensure_new_rs(false) && scale_all() && paused_) cleanup();
    } else if (!rolling_) {
      rollout = true;
      ensure_new_rs(false);
      bool scaled_down = false;
      for (auto& rs : old_) {
        if (rs.replicas > 0) {
          scale(rs, 0);
          scaled_down = true;
        }
      }
      if (!scaled_down && !failed_ && !old_pods_running()) {
        if (!new_rs_) {
          ensure_new_rs(true);
        } else {
          scale(*new_rs_, replicas_);
        }
        if (complete()) cleanup();
      }
    } else {
      rollout = true;
      if (ensure_new_rs(true)) {
        std::int64_t all_replicas = new_rs_->replicas;
        for (const auto& rs : old_) all_replicas += rs.replicas;
        std::int64_t target =
            new_rs_->replicas > replicas_
                ? replicas_
                : rolling_new_replicas(replicas_, limits_.max_surge, all_replicas, new_rs_->replicas);
        if (target != new_rs_->replicas) {
          scale(*new_rs_, target);
        } else {
          std::vector<RsView> views;
          for (const auto& rs : old_) views.push_back(rs.view());
          auto sizes = rolling_scale_down_old(replicas_, limits_.max_unavailable, new_rs_->view(), views);
          bool changed = false;
          for (std::size_t i = 0; i < old_.size(); ++i) {
            if (sizes[i] != old_[i].replicas) {
              scale(old_[i], sizes[i]);
              changed = true;
            }
          }
          if (!changed && complete()) cleanup();
        }
      }
    }
    if (new_rs_) {
      std::string rev = std::to_string(new_rs_->revision);
      auto it = meta_.annotations.find(kRevisionAnnotation);
      if (new_rs_->revision > 0 && (it == meta_.annotations.end() || it->second != rev)) {
        env_.ctx.client().merge_patch(path_, {{"metadata", {{"annotations", {{kRevisionAnnotation, rev}}}}}});
      }
    }
    if (failed_ && !requeue_) requeue_ = std::chrono::milliseconds(2000);
    if (auto w = env_.write_status(path_, status, compute_status(rollout && !paused_)); !w) {
      if (!requeue_) requeue_ = std::chrono::milliseconds(1000);
    }
  } else {
    env_.write_status(path_, status, compute_status(false));
  }
  return requeue_;
}

class DeploymentController final : public WorkloadController {
 public:
  explicit DeploymentController(WorkloadEnv& env) : WorkloadController(env, "deployment-controller", 2) {
    watch_primary("apps/deployments", uids_);
    watch_children("apps/replicasets", uids_);
    ctx_.feed("apps/replicasets").add_handler([this](EventType type, const StoreEvent& ev) {
      if (!ev.index) return;
      std::lock_guard lk(mu_);
      if (type == EventType::kDeleted) {
        rs_index_.remove(event_key(ev));
        rs_owners_.erase(ev.index->uid);
      } else {
        rs_index_.update(event_key(ev), ev.index->owner_uids);
        rs_owners_[ev.index->uid] = ev.index->owner_uids;
      }
    });
    // A Recreate rollout waits for old pods to disappear, which changes no ReplicaSet status.
    ctx_.feed("/pods").add_handler([this](EventType type, const StoreEvent& ev) {
      if (type != EventType::kDeleted || !ev.index) return;
      std::vector<std::string> owners;
      {
        std::lock_guard lk(mu_);
        for (const auto& rs_uid : ev.index->owner_uids) {
          auto it = rs_owners_.find(rs_uid);
          if (it != rs_owners_.end()) owners.insert(owners.end(), it->second.begin(), it->second.end());
        }
      }
      for (const auto& uid : owners) {
        if (auto key = uids_.key_of(uid)) controller_.enqueue(*key);
      }
    });
  }

 protected:
  Requeue reconcile(const std::string& key) override {
    auto obj = env_.read("apps/deployments", key);
    if (!obj) return std::nullopt;
    return Sync(env_, rs_index_, *obj).run();
  }

 private:
  UidIndex uids_;
  ChildIndex rs_index_;
  std::mutex mu_;
  std::unordered_map<std::string, std::vector<std::string>> rs_owners_;  // ReplicaSet uid -> owner uids
};

}  // namespace

std::unique_ptr<Subsystem> make_deployment_controller(WorkloadEnv& env) {
  return std::make_unique<DeploymentController>(env);
}

}  // namespace kubex::sim::cluster
