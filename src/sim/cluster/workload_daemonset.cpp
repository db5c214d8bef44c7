#include "sim/cluster/workload_daemonset.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <unordered_map>

namespace kubex::sim::cluster {

using nlohmann::json;

bool tolerates(const Toleration& t, const Taint& taint) {
  if (!t.effect.empty() && t.effect != taint.effect) return false;
  if (t.op == "Exists") return t.key.empty() || t.key == taint.key;
  return t.key == taint.key && t.value == taint.value;  // Equal (the default operator)
}

std::vector<Taint> parse_taints(const std::string& taints_json) {
  std::vector<Taint> out;
  if (taints_json.empty()) return out;
  json arr = json::parse(taints_json, nullptr, false);
  if (!arr.is_array()) return out;
  for (const auto& t : arr) {
    if (t.is_object()) out.push_back({json_str(t, "key"), json_str(t, "value"), json_str(t, "effect")});
  }
  return out;
}

std::vector<Toleration> parse_tolerations(const json& tolerations) {
  std::vector<Toleration> out;
  if (!tolerations.is_array()) return out;
  for (const auto& t : tolerations) {
    if (!t.is_object()) continue;
    out.push_back(
        {json_str(t, "key"), json_str(t, "operator", "Equal"), json_str(t, "value"), json_str(t, "effect")});
  }
  return out;
}

std::vector<NodeSelectorTerm> parse_node_selector_terms(const json& terms) {
  std::vector<NodeSelectorTerm> out;
  if (!terms.is_array()) return out;
  auto reqs = [](const json& list) {
    std::vector<NodeSelectorRequirement> v;
    if (!list.is_array()) return v;
    for (const auto& r : list) {
      NodeSelectorRequirement req{json_str(r, "key"), json_str(r, "operator"), {}};
      for (const auto& val : json_array_at(r, "values")) {
        if (val.is_string()) req.values.push_back(val.get<std::string>());
      }
      v.push_back(std::move(req));
    }
    return v;
  };
  for (const auto& t : terms)
    out.push_back({reqs(json_at(t, "matchExpressions")), reqs(json_at(t, "matchFields"))});
  return out;
}

namespace {

bool requirement_holds(const NodeSelectorRequirement& r, const std::string* value) {
  auto listed = [&] {
    return value && std::find(r.values.begin(), r.values.end(), *value) != r.values.end();
  };
  auto compare = [&](bool greater) {
    if (!value || r.values.size() != 1) return false;
    try {
      std::size_t a = 0, b = 0;
      long long have = std::stoll(*value, &a), want = std::stoll(r.values[0], &b);
      if (a != value->size() || b != r.values[0].size()) return false;
      return greater ? have > want : have < want;
    } catch (...) {
      return false;
    }
  };
  if (r.op == "In") return listed();
  if (r.op == "NotIn") return !listed();
  if (r.op == "Exists") return value != nullptr;
  if (r.op == "DoesNotExist") return value == nullptr;
  if (r.op == "Gt") return compare(true);
  if (r.op == "Lt") return compare(false);
  return false;
}

}  // namespace

bool node_selector_terms_match(const std::vector<NodeSelectorTerm>& terms, const SimNode& node) {
  for (const auto& term : terms) {
    if (term.expressions.empty() && term.fields.empty()) continue;
    bool ok = true;
    for (const auto& r : term.expressions) {
      auto it = node.labels.find(r.key);
      if (!requirement_holds(r, it == node.labels.end() ? nullptr : &it->second)) {
        ok = false;
        break;
      }
    }
    for (const auto& r : term.fields) {
      if (!ok) break;
      if (r.key != "metadata.name" || !requirement_holds(r, &node.name)) ok = false;
    }
    if (ok) return true;
  }
  return false;
}

json daemon_tolerations(const json& pod_spec) {
  json out = json_array_at(pod_spec, "tolerations");
  std::vector<std::pair<const char*, const char*>> add = {
      {"node.kubernetes.io/not-ready", "NoExecute"},
      {"node.kubernetes.io/unreachable", "NoExecute"},
      {"node.kubernetes.io/disk-pressure", "NoSchedule"},
      {"node.kubernetes.io/memory-pressure", "NoSchedule"},
      {"node.kubernetes.io/pid-pressure", "NoSchedule"},
      {"node.kubernetes.io/unschedulable", "NoSchedule"}};
  if (json_bool(pod_spec, "hostNetwork", false))
    add.push_back({"node.kubernetes.io/network-unavailable", "NoSchedule"});
  for (const auto& [key, effect] : add) {
    // Replace an existing toleration of the same key and effect, like the controller's
    // AddOrUpdateTolerationInPod.
    json t = {{"key", key}, {"operator", "Exists"}, {"effect", effect}};
    bool replaced = false;
    for (auto& existing : out) {
      if (json_str(existing, "key") == key && json_str(existing, "effect") == effect) {
        existing = t;
        replaced = true;
      }
    }
    if (!replaced) out.push_back(t);
  }
  return out;
}

json pin_to_node(const json& affinity, const std::string& node) {
  json a = affinity.is_object() ? affinity : json::object();
  if (!a.contains("nodeAffinity") || !a["nodeAffinity"].is_object()) a["nodeAffinity"] = json::object();
  a["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = {
      {"nodeSelectorTerms",
       json::array({{{"matchFields",
                      json::array({{{"key", "metadata.name"}, {"operator", "In"}, {"values", {node}}}})}}})}};
  return a;
}

std::string daemon_pod_node(const SimPod& pod) {
  if (!pod.node.empty()) return pod.node;
  if (pod.affinity_json.empty()) return "";
  json a = json::parse(pod.affinity_json, nullptr, false);
  const json& req =
      json_object_at(json_object_at(a, "nodeAffinity"), "requiredDuringSchedulingIgnoredDuringExecution");
  for (const auto& term : json_array_at(req, "nodeSelectorTerms")) {
    for (const auto& f : json_array_at(term, "matchFields")) {
      const json& values = json_array_at(f, "values");
      if (json_str(f, "key") == "metadata.name" && json_str(f, "operator") == "In" && values.size() == 1 &&
          values[0].is_string()) {
        return values[0].get<std::string>();
      }
    }
  }
  return "";
}

DaemonPlacement daemon_placement(const json& pod_template) {
  DaemonPlacement p;
  const json& spec = json_object_at(pod_template, "spec");
  p.node_selector = json_string_map(spec, "nodeSelector");
  const json& req = json_object_at(json_object_at(json_object_at(spec, "affinity"), "nodeAffinity"),
                                   "requiredDuringSchedulingIgnoredDuringExecution");
  if (req.contains("nodeSelectorTerms")) {
    p.has_required_affinity = true;
    p.required = parse_node_selector_terms(json_at(req, "nodeSelectorTerms"));
  }
  p.tolerations = parse_tolerations(daemon_tolerations(spec));
  return p;
}

bool node_should_run_daemon(const DaemonPlacement& p, const SimNode& node) {
  if (!labels_contain(node.labels, p.node_selector)) return false;
  if (p.has_required_affinity && !node_selector_terms_match(p.required, node)) return false;
  for (const auto& taint : parse_taints(node.taints_json)) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    bool ok = std::any_of(p.tolerations.begin(), p.tolerations.end(),
                          [&](const auto& t) { return tolerates(t, taint); });
    if (!ok) return false;
  }
  return true;
}

namespace {

constexpr const char* kComponent = "daemonset-controller";

class DaemonSetController final : public WorkloadController {
 public:
  explicit DaemonSetController(WorkloadEnv& env) : WorkloadController(env, "daemonset-controller", 1) {
    watch_primary("apps/daemonsets", uids_);
    watch_children("/pods", uids_);
    ctx_.feed("apps/daemonsets").add_handler([this](EventType type, const StoreEvent& ev) {
      if (!ev.index) return;
      std::lock_guard lk(mu_);
      if (type == EventType::kDeleted) {
        keys_.erase(event_key(ev));
      } else {
        keys_.insert(event_key(ev));
      }
    });
    // Node changes that matter for placement (labels, taints, existence) concern every DaemonSet.
    ctx_.feed("/nodes").add_handler([this](EventType type, const StoreEvent& ev) {
      if (!ev.index) return;
      std::vector<std::string> keys;
      {
        std::lock_guard lk(mu_);
        std::string fp;
        if (type != EventType::kDeleted) {
          if (auto n = ctx_.nodes().get(ev.index->name)) {
            for (const auto& [k, v] : n->labels) fp += k + "=" + v + ";";
            fp += "|" + n->taints_json;
          }
        }
        auto& seen = fingerprints_[ev.index->name];
        if (type != EventType::kDeleted && seen == fp) return;
        if (type == EventType::kDeleted) {
          fingerprints_.erase(ev.index->name);
        } else {
          seen = fp;
        }
        keys.assign(keys_.begin(), keys_.end());
      }
      for (const auto& k : keys) controller_.enqueue(k);
    });
  }

 protected:
  Requeue reconcile(const std::string& key) override;

 private:
  UidIndex uids_;
  std::mutex mu_;
  std::set<std::string> keys_;
  std::unordered_map<std::string, std::string> fingerprints_;  // node -> labels and taints last seen
  std::unordered_map<std::string, std::unordered_map<std::string, std::string>>
      created_on_;  // ds uid -> pod -> node
};

DaemonSetController::Requeue DaemonSetController::reconcile(const std::string& key) {
  auto obj = env_.read("apps/daemonsets", key);
  if (!obj) return std::nullopt;
  const ObjectMetaView meta = parse_meta(*obj);
  if (meta.uid.empty()) return std::nullopt;
  const json& spec = json_object_at(*obj, "spec");
  const json& cur = json_object_at(*obj, "status");
  const json& tmpl = json_object_at(spec, "template");
  const std::int64_t min_ready = json_int(spec, "minReadySeconds", 0);
  const std::string hash = short_hash(semantic_json(tmpl), json_int(cur, "collisionCount", 0));
  const ObjectRef ref{"apps/v1", "DaemonSet", meta.ns, meta.name, meta.uid};
  const auto now = ctx_.now();
  const DaemonPlacement placement = daemon_placement(tmpl);
  Requeue requeue;

  auto pending = env_.expectations.pending(meta.uid);
  std::map<std::string, std::vector<std::shared_ptr<const SimPod>>> by_node;
  std::vector<std::shared_ptr<const SimPod>> orphans;  // for nodes that no longer exist
  std::set<std::string> seen;
  for (const auto& p : env_.owned_pods(meta.uid)) {
    seen.insert(p->name);
    if (p->deleting || pending.deletes.count(p->uid)) continue;
    std::string node = daemon_pod_node(*p);
    if (node.empty() || !ctx_.nodes().get(node)) {
      orphans.push_back(p);
    } else {
      by_node[node].push_back(p);
    }
  }
  std::set<std::string> in_flight;  // nodes with a pod created but not yet in the cache
  {
    std::lock_guard lk(mu_);
    auto& created = created_on_[meta.uid];
    std::erase_if(created,
                  [&](const auto& kv) { return !pending.creates.count(kv.first) || seen.count(kv.first); });
    for (const auto& [pod, node] : created) in_flight.insert(node);
    if (created.empty()) created_on_.erase(meta.uid);
  }

  std::vector<std::pair<std::string, const SimPod*>> to_delete;  // reason, pod
  std::vector<std::string> to_create;                            // nodes
  std::int64_t desired = 0, current = 0, ready = 0, available = 0, updated = 0, misscheduled = 0;
  std::vector<std::pair<std::string, const SimPod*>> rollable;  // node, its only (old) pod
  std::int64_t unavailable = 0;
  std::vector<const SimPod*> old_unavailable, old_available;
  for (const auto& node : ctx_.nodes().all()) {
    auto it = by_node.find(node->name);
    std::vector<std::shared_ptr<const SimPod>> pods = it == by_node.end() ? decltype(pods){} : it->second;
    std::sort(pods.begin(), pods.end(), [](const auto& a, const auto& b) {
      return a->created != b->created ? a->created < b->created : a->name < b->name;
    });
    if (!node_should_run_daemon(placement, *node)) {
      if (!pods.empty()) ++misscheduled;
      for (const auto& p : pods) to_delete.push_back({"misscheduled", p.get()});
      continue;
    }
    ++desired;
    std::vector<const SimPod*> running;
    for (const auto& p : pods) {
      if (p->terminal()) {
        to_delete.push_back({"failed", p.get()});
      } else {
        running.push_back(p.get());
      }
    }
    if (running.empty()) {
      if (!in_flight.count(node->name)) to_create.push_back(node->name);
      ++unavailable;
      continue;
    }
    for (std::size_t i = 1; i < running.size(); ++i) to_delete.push_back({"excess", running[i]});
    const SimPod& pod = *running.front();
    ++current;
    bool is_available = env_.ready_clock.available(pod, min_ready, now, requeue);
    if (pod.ready) ++ready;
    if (is_available) ++available;
    auto rev = pod.labels.find(kControllerRevisionHashLabel);
    bool is_updated = rev != pod.labels.end() && rev->second == hash;
    if (is_updated) ++updated;
    if (running.size() > 1 || (is_updated && !is_available)) {
      ++unavailable;
    } else if (!is_updated) {
      (is_available ? old_available : old_unavailable).push_back(&pod);
    }
  }
  for (const auto& p : orphans) to_delete.push_back({"orphaned", p.get()});

  // RollingUpdate (maxSurge 0): replace unavailable old pods freely, available ones within maxUnavailable.
  const json& strategy = json_object_at(spec, "updateStrategy");
  if (json_str(strategy, "type", "RollingUpdate") == "RollingUpdate") {
    const json& ru = json_object_at(strategy, "rollingUpdate");
    auto max_unavailable = scaled_int_or_percent(json_at(ru, "maxUnavailable"), desired, true, 1);
    std::int64_t budget = std::max<std::int64_t>(
        (max_unavailable ? std::max<std::int64_t>(*max_unavailable, 1) : 1) - unavailable, 0);
    for (const SimPod* p : old_unavailable) to_delete.push_back({"update", p});
    for (std::size_t i = 0; i < old_available.size() && static_cast<std::int64_t>(i) < budget; ++i) {
      to_delete.push_back({"update", old_available[i]});
    }
  }

  if (!meta.deleting) {
    for (const auto& [reason, pod] : to_delete) {
      if (auto r = env_.delete_pod(meta.uid, *pod); !r) {
        env_.event(ref, "Warning", "FailedDaemonPod",
                   "Error deleting pod " + pod->name + ": " + r.error().message, kComponent);
        requeue = std::chrono::milliseconds(5000);
        continue;
      }
      env_.event(ref, "Normal", "SuccessfulDelete", "Deleted pod: " + pod->name, kComponent);
    }
    for (const auto& node : to_create) {
      json pod = pod_from_template(tmpl, meta.ns, "", meta.name + "-",
                                   controller_ref("apps/v1", "DaemonSet", meta.name, meta.uid));
      pod["metadata"]["labels"][kControllerRevisionHashLabel] = hash;
      pod["metadata"]["labels"]["pod-template-generation"] = std::to_string(meta.generation);
      pod["spec"]["tolerations"] = daemon_tolerations(json_object_at(tmpl, "spec"));
      pod["spec"]["affinity"] = pin_to_node(json_at(json_object_at(tmpl, "spec"), "affinity"), node);
      auto created = env_.create_pod(meta.uid, pod);
      if (!created) {
        env_.event(ref, "Warning", "FailedCreate", "Error creating: " + created.error().message, kComponent);
        requeue = std::chrono::milliseconds(5000);
        break;
      }
      {
        std::lock_guard lk(mu_);
        created_on_[meta.uid][*created] = node;
      }
      env_.event(ref, "Normal", "SuccessfulCreate", "Created pod: " + *created, kComponent);
    }
  }

  json status = {{"desiredNumberScheduled", desired},
                 {"currentNumberScheduled", current},
                 {"numberMisscheduled", misscheduled},
                 {"numberReady", ready}};
  if (meta.generation) status["observedGeneration"] = meta.generation;
  if (updated) status["updatedNumberScheduled"] = updated;
  if (available) status["numberAvailable"] = available;
  if (desired - available > 0) status["numberUnavailable"] = desired - available;
  for (const char* k : {"collisionCount", "conditions"}) {
    if (cur.contains(k)) status[k] = cur[k];
  }
  if (auto w = env_.write_status(group_path("apps/v1", "daemonsets", meta.ns, meta.name), cur, status); !w) {
    if (!requeue) requeue = std::chrono::milliseconds(1000);
  }
  return requeue;
}

}  // namespace

std::unique_ptr<Subsystem> make_daemonset_controller(WorkloadEnv& env) {
  return std::make_unique<DaemonSetController>(env);
}

}  // namespace kubex::sim::cluster
