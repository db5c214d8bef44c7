#include "sim/demo/view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace kubex::sim::demo {

using nlohmann::json;

namespace {

const json& member(const json& obj, const char* key) {
  static const json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

std::string str(const json& obj, const char* key) {
  const json& v = member(obj, key);
  return v.is_string() ? v.get<std::string>() : "";
}

// A quantity-ish JSON value as a number of GPUs ("2", 2, "500m").
double gpu_number(const json& v) {
  if (v.is_number()) return v.get<double>();
  if (!v.is_string()) return 0;
  std::string s = v.get<std::string>();
  try {
    if (!s.empty() && s.back() == 'm') return std::stod(s.substr(0, s.size() - 1)) / 1000;
    return std::stod(s);
  } catch (...) {
    return 0;
  }
}

double whole_gpus(const json& pod_spec) {
  double total = 0;
  for (const char* list : {"containers", "initContainers"}) {
    for (const auto& c : member(pod_spec, list).is_array() ? member(pod_spec, list) : json::array()) {
      const json& res = member(c, "resources");
      const json& lim = member(member(res, "limits"), "nvidia.com/gpu");
      const json& req = member(member(res, "requests"), "nvidia.com/gpu");
      total += gpu_number(lim.is_null() ? req : lim);
    }
  }
  return total;
}

std::string owner_of(const json& meta) {
  for (const auto& ref :
       member(meta, "ownerReferences").is_array() ? member(meta, "ownerReferences") : json::array()) {
    if (!member(ref, "controller").is_boolean() || !member(ref, "controller").get<bool>()) continue;
    std::string kind = str(ref, "kind"), name = str(ref, "name");
    if (kind == "ReplicaSet") {
      std::string hash = str(member(meta, "labels"), "pod-template-hash");
      if (!hash.empty() && name.size() > hash.size() + 1 && name.ends_with("-" + hash)) {
        return "Deployment/" + name.substr(0, name.size() - hash.size() - 1);
      }
    }
    return kind + "/" + name;
  }
  return "";
}

std::string status_of(const json& pod) {
  const json& meta = member(pod, "metadata");
  if (!member(meta, "deletionTimestamp").is_null()) return "Terminating";
  const json& st = member(pod, "status");
  for (const auto& cs :
       member(st, "containerStatuses").is_array() ? member(st, "containerStatuses") : json::array()) {
    std::string reason = str(member(member(cs, "state"), "waiting"), "reason");
    if (!reason.empty() && reason != "ContainerCreating") return reason;
  }
  std::string phase = str(st, "phase");
  bool ready = false, unschedulable = false;
  for (const auto& c : member(st, "conditions").is_array() ? member(st, "conditions") : json::array()) {
    if (str(c, "type") == "Ready" && str(c, "status") == "True") ready = true;
    if (str(c, "type") == "PodScheduled" && str(c, "status") == "False") unschedulable = true;
  }
  if (phase == "Running") return ready ? "Running" : "Starting";
  if (phase == "Pending" && unschedulable) return "Unschedulable";
  return phase.empty() ? "Pending" : phase;
}

std::string vllm_utilization(const json& spec) {
  for (const auto& c : member(spec, "containers").is_array() ? member(spec, "containers") : json::array()) {
    std::vector<std::string> tokens;
    for (const char* field : {"command", "args"}) {
      for (const auto& t : member(c, field).is_array() ? member(c, field) : json::array()) {
        if (t.is_string()) tokens.push_back(t.get<std::string>());
      }
    }
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      const std::string flag = "--gpu-memory-utilization";
      if (tokens[i].rfind(flag + "=", 0) == 0) return tokens[i].substr(flag.size() + 1);
      if (tokens[i] == flag && i + 1 < tokens.size()) return tokens[i + 1];
    }
  }
  return "";
}

std::string pad(const std::string& s, std::size_t w) {
  return s.size() >= w ? s + " " : s + std::string(w - s.size(), ' ');
}

}  // namespace

std::string format_gpus(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", std::round(v * 100) / 100);
  std::string s = buf;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s.empty() ? "0" : s;
}

std::vector<PodRow> pod_rows(const json& pod_list, const std::string& reservation_namespace) {
  std::vector<PodRow> rows;
  for (const auto& pod : member(pod_list, "items").is_array() ? member(pod_list, "items") : json::array()) {
    const json& meta = member(pod, "metadata");
    const json& spec = member(pod, "spec");
    PodRow r;
    r.ns = str(meta, "namespace");
    if (r.ns == reservation_namespace) continue;
    r.name = str(meta, "name");
    std::string fraction = str(member(meta, "annotations"), "gpu-fraction");
    if (!fraction.empty()) {
      r.fraction = true;
      r.gpus = gpu_number(json(fraction));
    } else {
      r.gpus = whole_gpus(spec);
    }
    if (r.gpus <= 0) continue;
    r.owner = owner_of(meta);
    r.status = status_of(pod);
    r.node = str(spec, "nodeName");
    std::string indices = str(member(meta, "annotations"), "sim.kubex.ai/gpu-indices");
    if (!r.node.empty() && !indices.empty()) {
      std::string devices;
      std::stringstream ss(indices);
      std::string idx;
      while (std::getline(ss, idx, ',')) devices += (devices.empty() ? "" : ",") + r.node + "/gpu" + idx;
      r.device = devices;
    }
    r.queue = str(member(meta, "labels"), "kai.scheduler/queue");
    r.scheduler = str(spec, "schedulerName");
    if (r.scheduler.empty()) r.scheduler = "default-scheduler";
    r.vllm_utilization = vllm_utilization(spec);
    json info = json::parse(
        str(member(meta, "annotations"), "automation-webhook.kubex.ai/pod-rightsizing-info"), nullptr, false);
    const json& containers = member(info, "containers");
    if (containers.is_object()) {
      for (const auto& [c, v] : containers.items()) {
        std::string source = str(member(v, "gpu"), "source");
        if (!source.empty()) r.source = source;
      }
    }
    rows.push_back(std::move(r));
  }
  std::sort(rows.begin(), rows.end(),
            [](const PodRow& a, const PodRow& b) { return a.ns != b.ns ? a.ns < b.ns : a.name < b.name; });
  return rows;
}

void attach_notes(std::vector<PodRow>& rows, const std::map<std::string, std::string>& notes) {
  for (auto& r : rows) {
    auto it = notes.find(r.ns + "/" + r.name);
    r.note = r.status == "Terminating" && it != notes.end() ? it->second : "";
  }
}

std::string render_rows(const std::vector<PodRow>& rows) {
  static const std::vector<std::pair<std::string, std::size_t>> cols = {
      {"NAMESPACE", 13}, {"POD", 30},   {"STATUS", 14},    {"GPU", 13},
      {"DEVICE", 18},    {"QUEUE", 27}, {"SCHEDULER", 18}, {"VLLM-MEM", 8}};
  std::vector<std::vector<std::string>> table;
  for (const auto& r : rows) {
    std::string gpu = format_gpus(r.gpus) + (r.fraction ? " (share)" : " (whole)");
    table.push_back({r.ns, r.name, r.status, gpu, r.device.empty() ? "-" : r.device,
                     r.queue.empty() ? "-" : r.queue, r.scheduler,
                     r.vllm_utilization.empty() ? "-" : r.vllm_utilization});
  }
  std::vector<std::size_t> widths;
  for (std::size_t i = 0; i < cols.size(); ++i) {
    std::size_t w = cols[i].first.size();
    for (const auto& row : table) w = std::max(w, row[i].size());
    widths.push_back(std::min(w, cols[i].second + 10));
  }
  std::string out;
  for (std::size_t i = 0; i < cols.size(); ++i) out += pad(cols[i].first, widths[i] + 1);
  out += "\n";
  for (std::size_t r = 0; r < table.size(); ++r) {
    for (std::size_t i = 0; i < table[r].size(); ++i) out += pad(table[r][i], widths[i] + 1);
    out += "\n";
    if (!rows[r].note.empty()) out += "    ^ replacing: " + rows[r].note + "\n";
  }
  // Trailing spaces make terminals wrap oddly.
  std::string trimmed;
  std::stringstream ss(out);
  std::string line;
  while (std::getline(ss, line)) {
    while (!line.empty() && line.back() == ' ') line.pop_back();
    trimmed += line + "\n";
  }
  return trimmed;
}

std::string render_nodes(const json& node_list, const std::vector<PodRow>& rows) {
  std::map<std::string, double> held;
  for (const auto& r : rows) {
    if (r.status == "Running" && !r.node.empty()) held[r.node] += r.gpus;
  }
  std::string out;
  const json& items = member(node_list, "items");
  for (const auto& n : items.is_array() ? items : json::array()) {
    const json& alloc = member(member(n, "status"), "allocatable");
    const double gpus = gpu_number(member(alloc, "nvidia.com/gpu"));
    if (gpus <= 0) continue;
    const std::string name = str(member(n, "metadata"), "name");
    std::string taint;
    const json& taints = member(member(n, "spec"), "taints");
    for (const auto& t : taints.is_array() ? taints : json::array()) {
      if (str(t, "key") == "rightsizing.kubex.ai/consolidating") taint = "  [tainted: draining for " + str(t, "value") + "]";
    }
    auto it = held.find(name);
    out += "  " + pad(name, 12) + " " + format_gpus(it == held.end() ? 0 : it->second) + " of " + format_gpus(gpus) +
           " GPUs" + taint + "\n";
  }
  return out;
}

int gpu_nodes_in_use(const std::vector<PodRow>& rows) {
  std::set<std::string> nodes;
  for (const auto& r : rows) {
    if (r.status == "Running" && !r.node.empty()) nodes.insert(r.node);
  }
  return static_cast<int>(nodes.size());
}

std::string render_summary(const std::vector<PodRow>& rows, int gpus_in_cluster) {
  std::size_t running = 0;
  double requested = 0;
  std::set<std::string> devices;
  for (const auto& p : rows) {
    requested += p.gpus;
    if (p.status != "Running") continue;
    ++running;
    std::stringstream ss(p.device);
    std::string d;
    while (std::getline(ss, d, ',')) {
      if (!d.empty()) devices.insert(d);
    }
  }
  return "GPU pods " + std::to_string(running) + "/" + std::to_string(rows.size()) +
         " running · GPUs requested " + format_gpus(requested) + " · " + std::to_string(devices.size()) +
         " of " + std::to_string(gpus_in_cluster) + " GPUs occupied";
}

std::optional<WrittenWorkload> written_workload(const json& w, double gpus_per_model_replica) {
  std::string kind = str(w, "kind");
  const json& spec = member(w, "spec");
  auto int_of = [&](const char* key, int def) {
    const json& v = member(spec, key);
    return v.is_number_integer() ? v.get<int>() : def;
  };
  WrittenWorkload out;
  out.ns = str(member(w, "metadata"), "namespace");
  out.owner = kind + "/" + str(member(w, "metadata"), "name");
  if (kind == "Model") {
    out.replicas =
        member(spec, "replicas").is_number_integer() ? int_of("replicas", 1) : int_of("minReplicas", 1);
    out.gpus_per_pod = gpus_per_model_replica;
  } else if (kind == "Deployment" || kind == "StatefulSet") {
    const json& tmpl = member(spec, "template");
    std::string fraction = str(member(member(tmpl, "metadata"), "annotations"), "gpu-fraction");
    out.fraction = !fraction.empty();
    out.gpus_per_pod = out.fraction ? gpu_number(json(fraction)) : whole_gpus(member(tmpl, "spec"));
    out.replicas = int_of("replicas", 1);
  } else {
    return std::nullopt;
  }
  if (out.gpus_per_pod <= 0) return std::nullopt;
  return out;
}

}  // namespace kubex::sim::demo
