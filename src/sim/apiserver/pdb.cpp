#include "sim/apiserver/pdb.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "common/label_selector.h"
#include "common/time_format.h"
#include "sim/apiserver/api_server.h"

namespace kubex::sim::pdb {

using nlohmann::json;

namespace {

bool pod_ready(const json& pod) {
  if (!pod.contains("status") || !pod["status"].contains("conditions")) return false;
  for (const auto& c : pod["status"]["conditions"]) {
    if (c.value("type", "") == "Ready") return c.value("status", "") == "True";
  }
  return false;
}

bool pod_terminal(const json& pod) {
  std::string phase = pod.contains("status") ? pod["status"].value("phase", "") : "";
  return phase == "Succeeded" || phase == "Failed";
}

bool pod_deleting(const json& pod) {
  return pod["metadata"].contains("deletionTimestamp") && !pod["metadata"]["deletionTimestamp"].is_null();
}

// int-or-percent scaled against `total`.
std::int64_t scaled(const json& v, std::int64_t total, bool round_up) {
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_string()) {
    std::string s = v.get<std::string>();
    if (!s.empty() && s.back() == '%') {
      double pct = std::atof(s.substr(0, s.size() - 1).c_str());
      double x = pct * static_cast<double>(total) / 100.0;
      return static_cast<std::int64_t>(round_up ? std::ceil(x) : std::floor(x));
    }
    return std::atoll(s.c_str());
  }
  return 0;
}

std::vector<json> matching_pods(ApiServer& server, const json& pdb) {
  std::vector<json> out;
  const json& spec = pdb["spec"];
  if (!spec.contains("selector")) return out;
  auto sel = common::LabelSelector::from_json(spec["selector"], "spec.selector");
  if (!sel) return out;
  // An empty selector matches no pods for policy/v1 PDBs? It matches all pods in the namespace.
  std::string ns = pdb["metadata"].value("namespace", "");
  auto pods = server.store().list("/pods", ns, "", 0, [&](const ObjectIndex& idx) {
    std::map<std::string, std::string> labels(idx.labels.begin(), idx.labels.end());
    return sel->matches(labels);
  });
  for (const auto& p : pods.items) out.push_back(json::parse(*p.text));
  return out;
}

// `disrupted`: the pods an eviction admitted whose deletion has not been seen yet (status.disruptedPods).
// Like the disruption controller, they no longer count as healthy: otherwise a recount between an admitted
// eviction and the pod's deletion would give the spent disruption back.
Health compute_from(const json& pdb, const std::vector<json>& pods, const json& disrupted) {
  Health h;
  for (const auto& p : pods) {
    if (pod_terminal(p)) continue;
    ++h.expected_pods;
    const bool evicted = disrupted.is_object() && disrupted.contains(p["metadata"].value("name", ""));
    if (pod_ready(p) && !pod_deleting(p) && !evicted) ++h.current_healthy;
  }
  const json& spec = pdb["spec"];
  if (spec.contains("minAvailable")) {
    h.desired_healthy = scaled(spec["minAvailable"], h.expected_pods, true);
  } else if (spec.contains("maxUnavailable")) {
    std::int64_t max_unavailable = scaled(spec["maxUnavailable"], h.expected_pods, true);
    h.desired_healthy = std::max<std::int64_t>(0, h.expected_pods - max_unavailable);
  }
  h.disruptions_allowed = std::max<std::int64_t>(0, h.current_healthy - h.desired_healthy);
  return h;
}

json status_of(const json& pdb, const Health& h, const std::string& now) {
  json st = pdb.contains("status") && pdb["status"].is_object() ? pdb["status"] : json::object();
  st["observedGeneration"] = pdb["metadata"].value("generation", 1);
  st["expectedPods"] = h.expected_pods;
  st["currentHealthy"] = h.current_healthy;
  st["desiredHealthy"] = h.desired_healthy;
  st["disruptionsAllowed"] = h.disruptions_allowed;
  if (!st.contains("disruptedPods")) st["disruptedPods"] = json::object();
  bool allowed = h.disruptions_allowed > 0;
  json cond = {{"type", "DisruptionAllowed"},
               {"status", allowed ? "True" : "False"},
               {"reason", allowed ? "SufficientPods" : "InsufficientPods"},
               {"message", ""},
               {"observedGeneration", pdb["metadata"].value("generation", 1)},
               {"lastTransitionTime", now}};
  json conds = json::array();
  bool same = false;
  if (st.contains("conditions") && st["conditions"].is_array()) {
    for (const auto& c : st["conditions"]) {
      if (c.value("type", "") == "DisruptionAllowed" &&
          c.value("status", "") == cond["status"].get<std::string>()) {
        cond["lastTransitionTime"] = c.value("lastTransitionTime", now);
        same = true;
      }
    }
  }
  (void)same;
  conds.push_back(cond);
  st["conditions"] = conds;
  return st;
}

}  // namespace

std::expected<void, ApiError> check_eviction(ApiServer& server, const json& pod, bool dry_run) {
  // Terminal, pending and already-terminating pods can always be evicted.
  std::string phase = pod.contains("status") ? pod["status"].value("phase", "") : "";
  if (phase == "Succeeded" || phase == "Failed" || phase == "Pending" || pod_deleting(pod)) return {};
  auto pdb_r = server.registry().find("policy", "v1", "poddisruptionbudgets");
  std::string ns = pod["metadata"].value("namespace", "");
  std::map<std::string, std::string> labels;
  if (pod["metadata"].contains("labels") && pod["metadata"]["labels"].is_object()) {
    for (auto& [k, v] : pod["metadata"]["labels"].items()) labels[k] = v.is_string() ? v.get<std::string>() : "";
  }
  auto pdbs = server.store().list("policy/poddisruptionbudgets", ns, "", 0, nullptr);
  std::vector<json> matching;
  for (const auto& item : pdbs.items) {
    json pdb = json::parse(*item.text);
    if (!pdb["spec"].contains("selector")) continue;
    auto sel = common::LabelSelector::from_json(pdb["spec"]["selector"], "spec.selector");
    if (!sel || sel->empty()) continue;
    if (sel->matches(labels)) matching.push_back(std::move(pdb));
  }
  if (matching.empty()) return {};
  if (matching.size() > 1) {
    return std::unexpected(internal_error("This pod has more than one PodDisruptionBudget, which the eviction "
                                          "subresource does not support."));
  }
  json& pdb = matching.front();
  // Like kube-apiserver, the decision is the disruption controller's: the PDB's status (refresh_all keeps it
  // current, every second), not a count of the pods at this instant. A status that has not caught up with
  // the spec refuses the eviction, to be retried.
  const std::string pdb_name = pdb["metadata"].value("name", "");
  const json current = pdb.contains("status") && pdb["status"].is_object() ? pdb["status"] : json::object();
  if (current.value("observedGeneration", std::int64_t{0}) < pdb["metadata"].value("generation", std::int64_t{1})) {
    ApiError e = too_many_requests("Cannot evict pod as it would violate the pod's disruption budget.", 10);
    e.causes.push_back(
        {"DisruptionBudget", "The disruption budget " + pdb_name + " is still being processed by the server.", ""});
    return std::unexpected(e);
  }
  Health h;
  h.expected_pods = current.value("expectedPods", std::int64_t{0});
  h.current_healthy = current.value("currentHealthy", std::int64_t{0});
  h.desired_healthy = current.value("desiredHealthy", std::int64_t{0});
  h.disruptions_allowed = current.value("disruptionsAllowed", std::int64_t{0});
  bool healthy = pod_ready(pod);
  std::string policy = pdb["spec"].value("unhealthyPodEvictionPolicy", "IfHealthyBudget");
  if (!healthy && (policy == "AlwaysAllow" || (h.current_healthy >= h.desired_healthy && h.desired_healthy > 0))) {
    return {};
  }
  if (h.disruptions_allowed <= 0) {
    ApiError e = too_many_requests("Cannot evict pod as it would violate the pod's disruption budget.", 0);
    e.causes.push_back({"DisruptionBudget",
                        "The disruption budget " + pdb_name + " needs " +
                            std::to_string(h.desired_healthy) + " healthy pods and has " +
                            std::to_string(h.current_healthy) + " currently",
                        ""});
    return std::unexpected(e);
  }
  if (dry_run) return {};
  // Record the disruption so a concurrent eviction sees the reduced budget.
  std::string now = common::format_rfc3339(server.now());
  h.disruptions_allowed -= 1;
  json st = status_of(pdb, h, now);
  st["disruptedPods"][pod["metadata"].value("name", "")] = now;
  json next = pdb;
  next["status"] = st;
  std::uint64_t rv = std::stoull(pdb["metadata"].value("resourceVersion", "0"));
  auto res = server.store().update("policy/poddisruptionbudgets",
                                   object_key(ns, pdb["metadata"].value("name", "")), next, rv,
                                   pdb_r ? pdb_r->selectable_fields : std::vector<std::string>{});
  if (res.status == Store::WriteStatus::kConflict) {
    return std::unexpected(too_many_requests("Operation cannot be fulfilled on poddisruptionbudgets.policy \"" +
                                                 pdb["metadata"].value("name", "") +
                                                 "\": the object has been modified; please try again",
                                             1));
  }
  return {};
}

void refresh_all(ApiServer& server) {
  auto pdbs = server.store().list("policy/poddisruptionbudgets", "", "", 0, nullptr);
  std::string now = common::format_rfc3339(server.now());
  for (const auto& item : pdbs.items) {
    json pdb = json::parse(*item.text);
    const std::string ns = pdb["metadata"].value("namespace", "");
    // Forget disruptions older than 2 minutes or whose pod is gone (like the disruption controller).
    json kept = json::object();
    if (pdb.contains("status") && pdb["status"].is_object() && pdb["status"].contains("disruptedPods") &&
        pdb["status"]["disruptedPods"].is_object()) {
      for (auto& [name, ts] : pdb["status"]["disruptedPods"].items()) {
        auto t = common::parse_rfc3339(ts.is_string() ? ts.get<std::string>() : "");
        if (t && server.now() - *t < std::chrono::minutes(2) && server.store().get("/pods", object_key(ns, name))) {
          kept[name] = ts;
        }
      }
    }
    Health h = compute_from(pdb, matching_pods(server, pdb), kept);
    json st = status_of(pdb, h, now);
    st["disruptedPods"] = kept;
    if (pdb.contains("status") && pdb["status"] == st) continue;
    json next = pdb;
    next["status"] = st;
    // A conflict means an eviction recorded a disruption meanwhile: the next refresh counts it.
    server.store().update("policy/poddisruptionbudgets", object_key(ns, pdb["metadata"].value("name", "")), next,
                          item.rv, {});
  }
}

}  // namespace kubex::sim::pdb
