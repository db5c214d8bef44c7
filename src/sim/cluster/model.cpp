#include "sim/cluster/model.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/hash.h"
#include "common/quantity.h"
#include "common/time_format.h"
#include "sim/gpu/gpu_catalog.h"

namespace kubex::sim::cluster {

using nlohmann::json;

namespace {

std::map<std::string, std::string> string_map(const json& parent, const char* key) {
  std::map<std::string, std::string> out;
  auto it = parent.find(key);
  if (it == parent.end() || !it->is_object()) return out;
  for (auto& [k, v] : it->items()) out[k] = v.is_string() ? v.get<std::string>() : v.dump();
  return out;
}

std::int64_t quantity_milli(const json& list, const char* key) {
  if (!list.is_object() || !list.contains(key)) return 0;
  auto q = common::Quantity::from_json(list[key]);
  return q ? q->milli_value() : 0;
}

std::int64_t quantity_value(const json& list, const char* key) {
  if (!list.is_object() || !list.contains(key)) return 0;
  auto q = common::Quantity::from_json(list[key]);
  return q ? q->value() : 0;
}

common::TimePoint time_of(const json& obj, const char* a, const char* b = nullptr) {
  const json* cur = &obj;
  for (const char* k : {a, b}) {
    if (!k) break;
    if (!cur->is_object() || !cur->contains(k)) return {};
    cur = &(*cur)[k];
  }
  if (!cur->is_string()) return {};
  auto t = common::parse_rfc3339(cur->get<std::string>());
  return t ? *t : common::TimePoint{};
}

SimContainer parse_container(const json& c, bool init) {
  SimContainer out;
  out.name = c.value("name", "");
  out.init = init;
  out.restart_always = !init || c.value("restartPolicy", "") == "Always";
  const json res = c.value("resources", json::object());
  const json lim = res.value("limits", json::object());
  const json req = res.value("requests", json::object());
  const char* gpu = api::keys::kGpuResource;
  out.gpu = lim.contains(gpu) ? quantity_value(lim, gpu) : quantity_value(req, gpu);
  out.cpu_milli = req.contains("cpu") ? quantity_milli(req, "cpu") : quantity_milli(lim, "cpu");
  out.memory_bytes = req.contains("memory") ? quantity_value(req, "memory") : quantity_value(lim, "memory");
  return out;
}

}  // namespace

std::string SimPod::gpu_group() const {
  auto it = labels.find(api::keys::kGpuGroupLabel);
  return it == labels.end() ? "" : it->second;
}

std::vector<int> SimPod::gpu_indices() const {
  std::vector<int> out;
  auto it = annotations.find(kGpuIndicesAnnotation);
  if (it == annotations.end()) return out;
  std::size_t start = 0;
  const std::string& s = it->second;
  while (start < s.size()) {
    auto comma = s.find(',', start);
    std::string part = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    try {
      out.push_back(std::stoi(part));
    } catch (...) {
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

SimPod parse_pod(const json& pod) {
  SimPod p;
  const json& m = pod.contains("metadata") ? pod["metadata"] : json::object();
  p.ns = m.value("namespace", "");
  p.name = m.value("name", "");
  p.uid = m.value("uid", "");
  p.labels = string_map(m, "labels");
  p.annotations = string_map(m, "annotations");
  p.rv = std::stoull(m.value("resourceVersion", "0"));
  p.created = time_of(pod, "metadata", "creationTimestamp");
  p.deleting = m.contains("deletionTimestamp") && !m["deletionTimestamp"].is_null();
  if (p.deleting) p.deletion = time_of(pod, "metadata", "deletionTimestamp");
  p.grace_seconds = m.value("deletionGracePeriodSeconds", std::int64_t{30});
  if (m.contains("ownerReferences") && m["ownerReferences"].is_array()) {
    for (const auto& ref : m["ownerReferences"]) {
      if (ref.value("controller", false)) {
        p.owner_kind = ref.value("kind", "");
        p.owner_name = ref.value("name", "");
        p.owner_uid = ref.value("uid", "");
      }
    }
  }
  const json& spec = pod.contains("spec") ? pod["spec"] : json::object();
  p.node = spec.value("nodeName", "");
  p.scheduler_name = spec.value("schedulerName", "default-scheduler");
  p.restart_policy = spec.value("restartPolicy", "Always");
  if (!p.deleting) p.grace_seconds = spec.value("terminationGracePeriodSeconds", std::int64_t{30});
  p.node_selector = string_map(spec, "nodeSelector");
  if (spec.contains("tolerations")) p.tolerations_json = spec["tolerations"].dump();
  if (spec.contains("affinity")) p.affinity_json = spec["affinity"].dump();
  std::int64_t init_cpu = 0, init_mem = 0, init_gpu = 0;
  for (const char* key : {"initContainers", "containers"}) {
    bool init = std::string(key) == "initContainers";
    if (!spec.contains(key) || !spec[key].is_array()) continue;
    for (const auto& c : spec[key]) {
      SimContainer sc = parse_container(c, init);
      if (init && !sc.restart_always) {
        init_cpu = std::max(init_cpu, sc.cpu_milli);
        init_mem = std::max(init_mem, sc.memory_bytes);
        init_gpu = std::max(init_gpu, sc.gpu);
      } else {
        p.cpu_milli += sc.cpu_milli;
        p.memory_bytes += sc.memory_bytes;
        p.gpu_whole += sc.gpu;
      }
      p.containers.push_back(std::move(sc));
    }
  }
  p.cpu_milli = std::max(p.cpu_milli, init_cpu);
  p.memory_bytes = std::max(p.memory_bytes, init_mem);
  p.gpu_whole = std::max(p.gpu_whole, init_gpu);
  if (auto it = p.annotations.find(api::keys::kGpuFraction); it != p.annotations.end()) {
    try {
      std::size_t used = 0;
      double f = std::stod(it->second, &used);
      if (used == it->second.size() && f > 0 && f < 1) {
        p.gpu_fraction = f;
      } else {
        p.gpu_fraction_invalid = true;
      }
    } catch (...) {
      p.gpu_fraction_invalid = true;
    }
  }
  const json& st = pod.contains("status") ? pod["status"] : json::object();
  p.phase = st.value("phase", "Pending");
  p.started = time_of(pod, "status", "startTime");
  for (const auto& c : st.value("conditions", json::array())) {
    std::string type = c.value("type", "");
    bool is_true = c.value("status", "") == "True";
    if (type == "Ready") p.ready = is_true;
    if (type == "PodScheduled") p.scheduled = is_true;
  }
  for (const char* key : {"initContainerStatuses", "containerStatuses"}) {
    for (const auto& cs : st.value(key, json::array())) {
      std::string name = cs.value("name", "");
      for (auto& c : p.containers) {
        if (c.name != name) continue;
        c.ready = cs.value("ready", false);
        c.restart_count = cs.value("restartCount", 0);
        const json state = cs.value("state", json::object());
        c.running = state.contains("running");
        c.terminated = state.contains("terminated");
        if (state.contains("waiting")) c.waiting_reason = state["waiting"].value("reason", "");
        if (c.terminated) c.terminated_reason = state["terminated"].value("reason", "");
      }
    }
  }
  return p;
}

SimNode parse_node(const json& node) {
  SimNode n;
  const json& m = node["metadata"];
  n.name = m.value("name", "");
  n.uid = m.value("uid", "");
  n.labels = string_map(m, "labels");
  if (auto it = n.labels.find("sim.kubex.ai/node-pool"); it != n.labels.end()) n.pool = it->second;
  if (auto it = n.labels.find("nvidia.com/gpu.product"); it != n.labels.end()) n.gpu_product = it->second;
  if (auto it = n.labels.find("nvidia.com/gpu.memory"); it != n.labels.end()) {
    try {
      n.gpu_memory_mib = std::stoll(it->second);
    } catch (...) {
    }
  }
  if (n.gpu_memory_mib < 0) n.gpu_memory_mib = 0;
  n.gpu_driver_reserve_mib = gpu::default_driver_reserve_mib(n.gpu_memory_mib);
  if (auto a = m.find("annotations"); a != m.end() && a->is_object()) {
    if (auto it = a->find(kDriverReserveAnnotation); it != a->end() && it->is_string()) {
      try {
        n.gpu_driver_reserve_mib =
            std::clamp<std::int64_t>(std::stoll(it->get<std::string>()), 0, n.gpu_memory_mib);
      } catch (...) {
      }
    }
  }
  if (auto it = n.labels.find("sim.kubex.ai/node-index"); it != n.labels.end()) {
    try {
      n.index = std::stoi(it->second);
    } catch (...) {
    }
  }
  const json spec = node.value("spec", json::object());
  n.unschedulable = spec.value("unschedulable", false);
  if (spec.contains("taints")) n.taints_json = spec["taints"].dump();
  const json st = node.value("status", json::object());
  const json alloc = st.value("allocatable", json::object());
  n.cpu_milli = quantity_milli(alloc, "cpu");
  n.memory_bytes = quantity_value(alloc, "memory");
  n.pods = alloc.contains("pods") ? quantity_value(alloc, "pods") : 110;
  n.gpus = quantity_value(alloc, api::keys::kGpuResource);
  n.ready = false;
  for (const auto& c : st.value("conditions", json::array())) {
    if (c.value("type", "") == "Ready") n.ready = c.value("status", "") == "True";
  }
  for (int i = 0; i < n.gpus; ++i) n.gpu_uuids.push_back(gpu_uuid(n.name, i));
  return n;
}

std::string gpu_uuid(const std::string& node, int index) {
  std::string h = common::sha256_hex(node + "/" + std::to_string(index));
  return "GPU-" + h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-" +
         h.substr(20, 12);
}

// ---------------------------------------------------------------------------------------------------------

void PodCache::unindex(const SimPod& p) {
  auto drop = [&](std::unordered_multimap<std::string, std::string>& idx, const std::string& k) {
    auto range = idx.equal_range(k);
    for (auto it = range.first; it != range.second; ++it) {
      if (it->second == p.key()) {
        idx.erase(it);
        return;
      }
    }
  };
  if (!p.node.empty()) drop(by_node_, p.node);
  if (!p.owner_uid.empty()) drop(by_owner_, p.owner_uid);
}

void PodCache::upsert(std::shared_ptr<const SimPod> p) {
  std::unique_lock lk(mu_);
  auto it = by_key_.find(p->key());
  if (it != by_key_.end()) {
    unindex(*it->second);
    it->second = p;
  } else {
    by_key_.emplace(p->key(), p);
  }
  if (!p->node.empty()) by_node_.emplace(p->node, p->key());
  if (!p->owner_uid.empty()) by_owner_.emplace(p->owner_uid, p->key());
}

void PodCache::remove(const std::string& key) {
  std::unique_lock lk(mu_);
  auto it = by_key_.find(key);
  if (it == by_key_.end()) return;
  unindex(*it->second);
  by_key_.erase(it);
}

std::shared_ptr<const SimPod> PodCache::get(const std::string& key) const {
  std::shared_lock lk(mu_);
  auto it = by_key_.find(key);
  return it == by_key_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<const SimPod>> PodCache::on_node(const std::string& node) const {
  std::shared_lock lk(mu_);
  std::vector<std::shared_ptr<const SimPod>> out;
  auto range = by_node_.equal_range(node);
  for (auto it = range.first; it != range.second; ++it) out.push_back(by_key_.at(it->second));
  return out;
}

std::vector<std::shared_ptr<const SimPod>> PodCache::owned_by(const std::string& owner_uid) const {
  std::shared_lock lk(mu_);
  std::vector<std::shared_ptr<const SimPod>> out;
  auto range = by_owner_.equal_range(owner_uid);
  for (auto it = range.first; it != range.second; ++it) out.push_back(by_key_.at(it->second));
  return out;
}

std::vector<std::shared_ptr<const SimPod>> PodCache::all() const {
  std::shared_lock lk(mu_);
  std::vector<std::shared_ptr<const SimPod>> out;
  out.reserve(by_key_.size());
  for (const auto& [k, v] : by_key_) out.push_back(v);
  return out;
}

std::size_t PodCache::size() const {
  std::shared_lock lk(mu_);
  return by_key_.size();
}

void NodeCache::upsert(std::shared_ptr<const SimNode> n) {
  std::unique_lock lk(mu_);
  by_name_[n->name] = std::move(n);
}

void NodeCache::remove(const std::string& name) {
  std::unique_lock lk(mu_);
  by_name_.erase(name);
}

std::shared_ptr<const SimNode> NodeCache::get(const std::string& name) const {
  std::shared_lock lk(mu_);
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<const SimNode>> NodeCache::all() const {
  std::shared_lock lk(mu_);
  std::vector<std::shared_ptr<const SimNode>> out;
  for (const auto& [k, v] : by_name_) out.push_back(v);
  return out;
}

}  // namespace kubex::sim::cluster
