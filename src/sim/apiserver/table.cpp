#include "sim/apiserver/table.h"

#include <nlohmann/json.hpp>

#include "common/time_format.h"

namespace kubex::sim {

using nlohmann::json;

std::string human_duration(common::Duration d) {
  using namespace std::chrono;
  long long secs = duration_cast<seconds>(d).count();
  if (secs < 0) secs = 0;
  if (secs < 60 * 2) return std::to_string(secs) + "s";
  long long minutes = secs / 60;
  if (minutes < 10) {
    long long s = secs % 60;
    return s == 0 ? std::to_string(minutes) + "m" : std::to_string(minutes) + "m" + std::to_string(s) + "s";
  }
  if (minutes < 60 * 3) return std::to_string(minutes) + "m";
  long long hours = minutes / 60;
  if (hours < 8) {
    long long m = minutes % 60;
    return m == 0 ? std::to_string(hours) + "h" : std::to_string(hours) + "h" + std::to_string(m) + "m";
  }
  if (hours < 48) return std::to_string(hours) + "h";
  if (hours < 24 * 8) {
    long long h = hours % 24;
    return h == 0 ? std::to_string(hours / 24) + "d" : std::to_string(hours / 24) + "d" + std::to_string(h) + "h";
  }
  if (hours < 24 * 365 * 2) return std::to_string(hours / 24) + "d";
  if (hours < 24 * 365 * 8) {
    long long dd = (hours / 24) % 365;
    return dd == 0 ? std::to_string(hours / 24 / 365) + "y"
                   : std::to_string(hours / 24 / 365) + "y" + std::to_string(dd) + "d";
  }
  return std::to_string(hours / 24 / 365) + "y";
}

namespace {

// ---- a small JSONPath evaluator (the subset printer columns use) ----
void jp_eval(const json& cur, const std::string& p, std::size_t i, std::vector<json>& out);

bool jp_filter_match(const json& item, const std::string& expr) {
  // expr like @.type=="Ready" or @.status!='True' or @.name
  std::string e = expr;
  std::string op;
  std::size_t pos = std::string::npos;
  for (const char* o : {"==", "!="}) {
    pos = e.find(o);
    if (pos != std::string::npos) {
      op = o;
      break;
    }
  }
  std::string lhs = pos == std::string::npos ? e : e.substr(0, pos);
  while (!lhs.empty() && lhs.back() == ' ') lhs.pop_back();
  if (lhs.rfind("@", 0) != 0) return false;
  std::vector<json> vals;
  jp_eval(item, lhs.substr(1), 0, vals);
  if (op.empty()) return !vals.empty();
  std::string rhs = e.substr(pos + 2);
  while (!rhs.empty() && rhs.front() == ' ') rhs.erase(rhs.begin());
  json want;
  if (!rhs.empty() && (rhs.front() == '"' || rhs.front() == '\'')) {
    want = rhs.substr(1, rhs.size() >= 2 ? rhs.size() - 2 : 0);
  } else {
    want = json::parse(rhs, nullptr, false);
    if (want.is_discarded()) want = rhs;
  }
  bool eq = !vals.empty() && vals.front() == want;
  return op == "==" ? eq : !eq;
}

void jp_eval(const json& cur, const std::string& p, std::size_t i, std::vector<json>& out) {
  if (i >= p.size()) {
    out.push_back(cur);
    return;
  }
  if (p[i] == '.') {
    std::size_t j = i + 1;
    while (j < p.size() && p[j] != '.' && p[j] != '[') ++j;
    std::string key = p.substr(i + 1, j - i - 1);
    if (key.empty()) {
      jp_eval(cur, p, j, out);
      return;
    }
    if (key == "*") {
      if (cur.is_object()) {
        for (const auto& v : cur) jp_eval(v, p, j, out);
      } else if (cur.is_array()) {
        for (const auto& v : cur) jp_eval(v, p, j, out);
      }
      return;
    }
    if (cur.is_object() && cur.contains(key)) jp_eval(cur[key], p, j, out);
    return;
  }
  if (p[i] == '[') {
    std::size_t close = p.find(']', i);
    if (p.compare(i, 3, "[?(") == 0) close = p.find(")]", i) + 1;
    if (close == std::string::npos || close < i) return;
    std::string inner = p.substr(i + 1, close - i - 1);
    std::size_t next = close + 1;
    if (inner.rfind("?(", 0) == 0) {
      std::string expr = inner.substr(2, inner.size() - 3);
      if (!cur.is_array()) return;
      for (const auto& item : cur) {
        if (jp_filter_match(item, expr)) jp_eval(item, p, next, out);
      }
      return;
    }
    if (inner == "*") {
      if (cur.is_array() || cur.is_object()) {
        for (const auto& v : cur) jp_eval(v, p, next, out);
      }
      return;
    }
    if (!inner.empty() && (inner.front() == '\'' || inner.front() == '"')) {
      std::string key = inner.substr(1, inner.size() - 2);
      if (cur.is_object() && cur.contains(key)) jp_eval(cur[key], p, next, out);
      return;
    }
    if (!cur.is_array()) return;
    try {
      long idx = std::stol(inner);
      if (idx < 0) idx += static_cast<long>(cur.size());
      if (idx >= 0 && static_cast<std::size_t>(idx) < cur.size()) jp_eval(cur[static_cast<std::size_t>(idx)], p, next, out);
    } catch (...) {
    }
    return;
  }
  // tolerate paths without a leading dot
  jp_eval(cur, "." + p.substr(i), 0, out);
}

std::string age_of(const json& obj, common::TimePoint now) {
  std::string ts = obj.contains("metadata") ? obj["metadata"].value("creationTimestamp", "") : "";
  auto t = common::parse_rfc3339(ts);
  if (!t) return "<unknown>";
  return human_duration(now - *t);
}

std::string str(const json& o, std::initializer_list<const char*> path, std::string def = "") {
  const json* cur = &o;
  for (const char* k : path) {
    if (!cur->is_object() || !cur->contains(k)) return def;
    cur = &(*cur)[k];
  }
  if (cur->is_string()) return cur->get<std::string>();
  if (cur->is_number() || cur->is_boolean()) return cur->dump();
  return def;
}

std::int64_t num(const json& o, std::initializer_list<const char*> path) {
  const json* cur = &o;
  for (const char* k : path) {
    if (!cur->is_object() || !cur->contains(k)) return 0;
    cur = &(*cur)[k];
  }
  return cur->is_number_integer() ? cur->get<std::int64_t>() : 0;
}

struct Column {
  std::string name, type, format, description;
  int priority = 0;
};

json column_defs(const std::vector<Column>& cols) {
  json out = json::array();
  for (const auto& c : cols) {
    out.push_back({{"name", c.name},
                   {"type", c.type},
                   {"format", c.format},
                   {"description", c.description},
                   {"priority", c.priority}});
  }
  return out;
}

std::string pod_status_reason(const json& pod) {
  std::string reason = str(pod, {"status", "reason"});
  if (reason.empty()) reason = str(pod, {"status", "phase"}, "Pending");
  const json st = pod.value("status", json::object());
  for (const auto& cs : st.value("containerStatuses", json::array())) {
    if (cs.contains("state") && cs["state"].contains("waiting")) {
      std::string r = str(cs["state"]["waiting"], {"reason"});
      if (!r.empty()) reason = r;
    } else if (cs.contains("state") && cs["state"].contains("terminated")) {
      std::string r = str(cs["state"]["terminated"], {"reason"});
      if (!r.empty()) reason = r;
    }
  }
  if (pod["metadata"].contains("deletionTimestamp") && !pod["metadata"]["deletionTimestamp"].is_null()) {
    reason = "Terminating";
  }
  return reason;
}

json pod_row(const json& pod, common::TimePoint now) {
  const json st = pod.value("status", json::object());
  int total = static_cast<int>(pod.contains("spec") ? pod["spec"].value("containers", json::array()).size() : 0);
  int ready = 0;
  std::int64_t restarts = 0;
  for (const auto& cs : st.value("containerStatuses", json::array())) {
    if (cs.value("ready", false)) ++ready;
    restarts += cs.value("restartCount", 0);
  }
  std::string node = str(pod, {"spec", "nodeName"}, "<none>");
  std::string ip = str(pod, {"status", "podIP"}, "<none>");
  return json::array({pod["metadata"].value("name", ""), std::to_string(ready) + "/" + std::to_string(total),
                      pod_status_reason(pod), restarts, age_of(pod, now), ip, node, "<none>", "<none>"});
}

std::vector<Column> columns_for(const ResourceInfo& r) {
  const std::string name_desc = "Name must be unique within a namespace.";
  Column name{"Name", "string", "name", name_desc, 0};
  Column age{"Age", "string", "", "CreationTimestamp is a timestamp representing the server time when this object was created.", 0};
  const std::string& k = r.kind;
  if (r.is_custom) {
    std::vector<Column> cols = {name};
    const json* v = r.crd_version.get();
    if (v && v->contains("additionalPrinterColumns") && (*v)["additionalPrinterColumns"].is_array() &&
        !(*v)["additionalPrinterColumns"].empty()) {
      for (const auto& c : (*v)["additionalPrinterColumns"]) {
        std::string type = c.value("type", "string");
        cols.push_back({c.value("name", ""), type == "date" ? "date" : type, c.value("format", ""),
                        c.value("description", ""), c.value("priority", 0)});
      }
    } else {
      cols.push_back({"Age", "date", "", age.description, 0});
    }
    return cols;
  }
  if (r.group.empty() && k == "Pod") {
    return {name, {"Ready", "string", "", "The aggregate readiness state of this pod for accepting traffic.", 0},
            {"Status", "string", "", "The aggregate status of the containers in this pod.", 0},
            {"Restarts", "string", "", "The number of times the containers in this pod have been restarted.", 0},
            age,
            {"IP", "string", "", "IP address allocated to the pod.", 1},
            {"Node", "string", "", "Name of the node this pod is assigned to.", 1},
            {"Nominated Node", "string", "", "Name of the node this pod is nominated to.", 1},
            {"Readiness Gates", "string", "", "Pod readiness gates.", 1}};
  }
  if (r.group.empty() && k == "Node") {
    return {name, {"Status", "string", "", "The status of the node", 0}, {"Roles", "string", "", "The roles of the node", 0},
            age, {"Version", "string", "", "Kubelet Version reported by the node.", 0},
            {"GPUs", "string", "", "Allocatable nvidia.com/gpu", 1}};
  }
  if (r.group.empty() && k == "Namespace") return {name, {"Status", "string", "", "The status of the namespace", 0}, age};
  if (r.group.empty() && k == "ConfigMap") return {name, {"Data", "string", "", "Number of data entries", 0}, age};
  if (r.group.empty() && k == "Secret") {
    return {name, {"Type", "string", "", "The type of the secret", 0}, {"Data", "string", "", "Number of data entries", 0}, age};
  }
  if (r.group.empty() && k == "Service") {
    return {name, {"Type", "string", "", "", 0}, {"Cluster-IP", "string", "", "", 0}, {"External-IP", "string", "", "", 0},
            {"Port(s)", "string", "", "", 0}, age};
  }
  if (k == "Event") {
    return {{"Last Seen", "string", "", "", 0}, {"Type", "string", "", "", 0}, {"Reason", "string", "", "", 0},
            {"Object", "string", "", "", 0}, {"Message", "string", "", "", 0}};
  }
  if (r.group == "apps" && k == "Deployment") {
    return {name, {"Ready", "string", "", "Number of the pod with ready state", 0},
            {"Up-to-date", "string", "", "Total number of non-terminated pods targeted by this deployment that have the desired template spec.", 0},
            {"Available", "string", "", "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.", 0},
            age};
  }
  if (r.group == "apps" && k == "ReplicaSet") {
    return {name, {"Desired", "integer", "", "Number of desired pods.", 0}, {"Current", "integer", "", "Number of actual replicas.", 0},
            {"Ready", "integer", "", "The number of ready replicas for this replica set.", 0}, age};
  }
  if (r.group == "apps" && k == "StatefulSet") return {name, {"Ready", "string", "", "Number of the pod with ready state", 0}, age};
  if (r.group == "apps" && k == "DaemonSet") {
    return {name, {"Desired", "integer", "", "", 0}, {"Current", "integer", "", "", 0}, {"Ready", "integer", "", "", 0},
            {"Up-to-date", "integer", "", "", 0}, {"Available", "integer", "", "", 0}, age};
  }
  if (r.group == "batch" && k == "Job") {
    return {name, {"Status", "string", "", "", 0}, {"Completions", "string", "", "", 0}, {"Duration", "string", "", "", 0}, age};
  }
  if (r.group == "batch" && k == "CronJob") {
    return {name, {"Schedule", "string", "", "", 0}, {"Suspend", "boolean", "", "", 0}, {"Active", "integer", "", "", 0},
            {"Last Schedule", "string", "", "", 0}, age};
  }
  if (r.group == "policy" && k == "PodDisruptionBudget") {
    return {name, {"Min Available", "string", "", "", 0}, {"Max Unavailable", "string", "", "", 0},
            {"Allowed Disruptions", "integer", "", "", 0}, age};
  }
  if (r.group == "coordination.k8s.io" && k == "Lease") return {name, {"Holder", "string", "", "", 0}, age};
  if (r.group == "admissionregistration.k8s.io") return {name, {"Webhooks", "integer", "", "", 0}, age};
  if (r.group == "apiextensions.k8s.io") return {name, {"Created At", "date", "", age.description, 0}};
  return {name, age};
}

json row_cells(const ResourceInfo& r, const json& o, common::TimePoint now) {
  const std::string& k = r.kind;
  std::string name = o["metadata"].value("name", "");
  if (r.is_custom) {
    json cells = json::array({name});
    const json* v = r.crd_version.get();
    if (v && v->contains("additionalPrinterColumns") && (*v)["additionalPrinterColumns"].is_array() &&
        !(*v)["additionalPrinterColumns"].empty()) {
      for (const auto& c : (*v)["additionalPrinterColumns"]) {
        auto found = jsonpath_find(o, c.value("jsonPath", ""));
        if (found.empty()) {
          cells.push_back(nullptr);
          continue;
        }
        const json& val = found.front();
        std::string type = c.value("type", "string");
        if (type == "date" && val.is_string()) {
          auto t = common::parse_rfc3339(val.get<std::string>());
          cells.push_back(t ? human_duration(now - *t) : val.get<std::string>());
        } else if (type == "string" && !val.is_string()) {
          cells.push_back(val.is_null() ? json(nullptr) : json(val.dump()));
        } else {
          cells.push_back(val);
        }
      }
    } else {
      cells.push_back(age_of(o, now));
    }
    return cells;
  }
  if (r.group.empty() && k == "Pod") return pod_row(o, now);
  if (r.group.empty() && k == "Node") {
    std::string status = "Unknown";
    for (const auto& c : o.value("status", json::object()).value("conditions", json::array())) {
      if (c.value("type", "") == "Ready") status = c.value("status", "") == "True" ? "Ready" : "NotReady";
    }
    if (o.contains("spec") && o["spec"].value("unschedulable", false)) status += ",SchedulingDisabled";
    std::string roles;
    if (o["metadata"].contains("labels")) {
      for (auto& [lk, lv] : o["metadata"]["labels"].items()) {
        const std::string prefix = "node-role.kubernetes.io/";
        if (lk.rfind(prefix, 0) == 0) roles += (roles.empty() ? "" : ",") + lk.substr(prefix.size());
      }
    }
    return json::array({name, status, roles.empty() ? "<none>" : roles, age_of(o, now),
                        str(o, {"status", "nodeInfo", "kubeletVersion"}, ""),
                        str(o, {"status", "allocatable", "nvidia.com/gpu"}, "0")});
  }
  if (r.group.empty() && k == "Namespace") return json::array({name, str(o, {"status", "phase"}), age_of(o, now)});
  if (r.group.empty() && k == "ConfigMap") {
    std::size_t n = o.value("data", json::object()).size() + o.value("binaryData", json::object()).size();
    return json::array({name, n, age_of(o, now)});
  }
  if (r.group.empty() && k == "Secret") {
    return json::array({name, o.value("type", ""), o.value("data", json::object()).size(), age_of(o, now)});
  }
  if (r.group.empty() && k == "Service") {
    std::string ports;
    for (const auto& p : o.value("spec", json::object()).value("ports", json::array())) {
      if (!ports.empty()) ports += ",";
      ports += std::to_string(p.value("port", 0)) + "/" + p.value("protocol", "TCP");
    }
    return json::array({name, str(o, {"spec", "type"}), str(o, {"spec", "clusterIP"}, "<none>"), "<none>",
                        ports.empty() ? "<none>" : ports, age_of(o, now)});
  }
  if (k == "Event") {
    std::string obj = str(o, {"involvedObject", "kind"}) + "/" + str(o, {"involvedObject", "name"});
    std::string last = str(o, {"lastTimestamp"});
    if (last.empty()) last = str(o, {"eventTime"});
    auto t = common::parse_rfc3339(last);
    return json::array({t ? human_duration(now - *t) : "<unknown>", str(o, {"type"}), str(o, {"reason"}),
                        obj, str(o, {"message"})});
  }
  if (r.group == "apps" && k == "Deployment") {
    return json::array({name, std::to_string(num(o, {"status", "readyReplicas"})) + "/" + std::to_string(num(o, {"spec", "replicas"})),
                        num(o, {"status", "updatedReplicas"}), num(o, {"status", "availableReplicas"}), age_of(o, now)});
  }
  if (r.group == "apps" && k == "ReplicaSet") {
    return json::array({name, num(o, {"spec", "replicas"}), num(o, {"status", "replicas"}),
                        num(o, {"status", "readyReplicas"}), age_of(o, now)});
  }
  if (r.group == "apps" && k == "StatefulSet") {
    return json::array({name, std::to_string(num(o, {"status", "readyReplicas"})) + "/" + std::to_string(num(o, {"spec", "replicas"})),
                        age_of(o, now)});
  }
  if (r.group == "apps" && k == "DaemonSet") {
    return json::array({name, num(o, {"status", "desiredNumberScheduled"}), num(o, {"status", "currentNumberScheduled"}),
                        num(o, {"status", "numberReady"}), num(o, {"status", "updatedNumberScheduled"}),
                        num(o, {"status", "numberAvailable"}), age_of(o, now)});
  }
  if (r.group == "batch" && k == "Job") {
    std::string status = "Running";
    for (const auto& c : o.value("status", json::object()).value("conditions", json::array())) {
      if (c.value("status", "") == "True" && (c.value("type", "") == "Complete" || c.value("type", "") == "Failed")) {
        status = c.value("type", "");
      }
    }
    std::int64_t completions = o.contains("spec") ? o["spec"].value("completions", 1) : 1;
    return json::array({name, status, std::to_string(num(o, {"status", "succeeded"})) + "/" + std::to_string(completions),
                        "", age_of(o, now)});
  }
  if (r.group == "batch" && k == "CronJob") {
    std::string last = str(o, {"status", "lastScheduleTime"});
    auto t = common::parse_rfc3339(last);
    return json::array({name, str(o, {"spec", "schedule"}), o.contains("spec") ? o["spec"].value("suspend", false) : false,
                        o.value("status", json::object()).value("active", json::array()).size(),
                        t ? human_duration(now - *t) : "<none>", age_of(o, now)});
  }
  if (r.group == "policy" && k == "PodDisruptionBudget") {
    std::string min = str(o, {"spec", "minAvailable"}, "N/A"), max = str(o, {"spec", "maxUnavailable"}, "N/A");
    return json::array({name, min, max, num(o, {"status", "disruptionsAllowed"}), age_of(o, now)});
  }
  if (r.group == "coordination.k8s.io" && k == "Lease") {
    return json::array({name, str(o, {"spec", "holderIdentity"}), age_of(o, now)});
  }
  if (r.group == "admissionregistration.k8s.io") {
    return json::array({name, o.value("webhooks", json::array()).size(), age_of(o, now)});
  }
  if (r.group == "apiextensions.k8s.io") return json::array({name, o["metadata"].value("creationTimestamp", "")});
  return json::array({name, age_of(o, now)});
}

}  // namespace

std::vector<json> jsonpath_find(const json& obj, const std::string& path) {
  std::vector<json> out;
  std::string p = path;
  if (p.size() >= 2 && p.front() == '{' && p.back() == '}') p = p.substr(1, p.size() - 2);
  if (!p.empty() && p.front() == '$') p = p.substr(1);
  jp_eval(obj, p, 0, out);
  return out;
}

json to_table(const ResourceInfo& r, const std::vector<const json*>& items, const std::string& include_object,
              bool with_headers, std::uint64_t rv, const std::string& continue_token) {
  auto now = common::RealClock::instance().now();
  json table = {{"kind", "Table"}, {"apiVersion", "meta.k8s.io/v1"}, {"metadata", json::object()}};
  if (rv) table["metadata"]["resourceVersion"] = std::to_string(rv);
  if (!continue_token.empty()) table["metadata"]["continue"] = continue_token;
  table["columnDefinitions"] = with_headers ? column_defs(columns_for(r)) : json::array();
  json rows = json::array();
  for (const json* o : items) {
    if (!o || !o->is_object()) continue;
    json row = {{"cells", row_cells(r, *o, now)}};
    if (include_object == "Object") {
      row["object"] = *o;
    } else if (include_object != "None") {
      json meta = (*o)["metadata"];
      meta.erase("managedFields");
      row["object"] = {{"kind", "PartialObjectMetadata"}, {"apiVersion", "meta.k8s.io/v1"}, {"metadata", meta}};
    }
    rows.push_back(std::move(row));
  }
  table["rows"] = std::move(rows);
  return table;
}

}  // namespace kubex::sim
