#include "api/views.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "common/label_selector.h"
#include "common/quantity.h"
#include "common/time_format.h"

namespace kubex::api {

using nlohmann::json;

namespace {

bool kept_pod_annotation(std::string_view k) {
  return k == "gpu-fraction" || k == "gpu-fraction-container-name" || k == "gpu-memory" ||
         k == "gpu-fraction-num-devices" || k == "karpenter.sh/do-not-disrupt" ||
         k.find("rightsizing.kubex.ai/") != std::string_view::npos ||
         k.find("kubex.ai/") != std::string_view::npos || k == "kai.scheduler/gpu-compute-sharing-mode" ||
         (k.starts_with("nvidia.com/container.") && k.ends_with(".gpu-compute.mode"));  // CON-5b
}

bool kept_workload_annotation(std::string_view k) {
  return k.find("rightsizing.kubex.ai/") != std::string_view::npos;
}

Labels pairs(const json& obj, bool (*keep)(std::string_view)) {
  Labels out;
  if (!obj.is_object()) return out;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (keep && !keep(it.key())) continue;
    out.emplace_back(IStr(it.key()),
                     IStr(it.value().is_string() ? it.value().get<std::string>() : it.value().dump()));
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.first.str() < b.first.str(); });
  return out;
}

common::TimePoint ts(const json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key) || !obj[key].is_string()) return {};
  auto t = common::parse_rfc3339(obj[key].get<std::string>());
  return t ? *t : common::TimePoint{};
}

std::optional<std::int64_t> whole(const json& list, const char* key) {
  if (!list.is_object() || !list.contains(key)) return std::nullopt;
  auto q = common::Quantity::from_json(list[key]);
  if (!q) return std::nullopt;
  return q->value();
}

std::optional<std::int64_t> milli(const json& list, const char* key) {
  if (!list.is_object() || !list.contains(key)) return std::nullopt;
  auto q = common::Quantity::from_json(list[key]);
  if (!q) return std::nullopt;
  return q->milli_value();
}

ContainerView container(const json& c, bool init) {
  ContainerView v;
  v.name = IStr(c.value("name", ""));
  v.image = IStr(c.value("image", ""));
  v.init = init;
  v.restartable = init && c.value("restartPolicy", "") == "Always";
  const json res = c.value("resources", json::object());
  const json req = res.value("requests", json::object());
  const json lim = res.value("limits", json::object());
  v.gpu_request = whole(req, "nvidia.com/gpu");
  v.gpu_limit = whole(lim, "nvidia.com/gpu");
  v.cpu_request_milli = milli(req, "cpu");
  v.cpu_limit_milli = milli(lim, "cpu");
  v.memory_request = whole(req, "memory");
  v.memory_limit = whole(lim, "memory");
  return v;
}

}  // namespace

std::vector<OwnerRef> owners_of(const json& meta) {
  std::vector<OwnerRef> out;
  if (!meta.contains("ownerReferences") || !meta["ownerReferences"].is_array()) return out;
  for (const auto& r : meta["ownerReferences"]) {
    if (!r.is_object()) continue;
    out.push_back({IStr(r.value("apiVersion", "")), IStr(r.value("kind", "")), IStr(r.value("name", "")),
                   r.value("uid", ""), r.value("controller", false)});
  }
  return out;
}

const IStr* find(const Labels& labels, std::string_view key) {
  auto it = std::lower_bound(labels.begin(), labels.end(), key,
                             [](const auto& p, std::string_view k) { return p.first.view() < k; });
  if (it != labels.end() && it->first.view() == key) return &it->second;
  return nullptr;
}

Labels labels_from(const json& obj) {
  return pairs(obj, nullptr);
}

bool labels_match(const Labels& labels, const json& selector) {
  auto sel = common::LabelSelector::from_json(selector, "selector");
  if (!sel) return false;
  return sel->matches_lookup([&](std::string_view k) -> std::optional<std::string_view> {
    const IStr* v = find(labels, k);
    if (!v) return std::nullopt;
    return v->view();
  });
}

const OwnerRef* PodView::controller() const {
  for (const auto& o : owners) {
    if (o.controller) return &o;
  }
  return nullptr;
}

const OwnerRef* WorkloadView::controller() const {
  for (const auto& o : owners) {
    if (o.controller) return &o;
  }
  return nullptr;
}

namespace {
// A CUDA out-of-memory exit as runtimes and frameworks word it ("CUDA out of memory", "CUDA error: out of memory").
bool says_out_of_memory(std::string message) {
  for (char& ch : message) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return message.find("out of memory") != std::string::npos;
}
}  // namespace

std::shared_ptr<const PodView> project_pod(const json& pod) {
  auto p = std::make_shared<PodView>();
  common::fill_meta(*p, pod);
  const json& m = pod.contains("metadata") ? pod["metadata"] : json::object();
  p->uid = m.value("uid", "");
  p->labels = pairs(m.value("labels", json::object()), nullptr);
  p->annotations = pairs(m.value("annotations", json::object()), kept_pod_annotation);
  p->owners = owners_of(m);
  p->created = ts(m, "creationTimestamp");
  p->deleting = m.contains("deletionTimestamp") && !m["deletionTimestamp"].is_null();
  if (p->deleting) p->deletion = ts(m, "deletionTimestamp");
  const json spec = pod.value("spec", json::object());
  p->node_name = IStr(spec.value("nodeName", ""));
  p->scheduler_name = IStr(spec.value("schedulerName", "default-scheduler"));
  for (const auto& c : spec.value("initContainers", json::array()))
    p->containers.push_back(container(c, true));
  for (const auto& c : spec.value("containers", json::array())) p->containers.push_back(container(c, false));
  if (std::string sc = scheduling_constraints(spec); !sc.empty()) p->scheduling = IStr(sc);
  const json st = pod.value("status", json::object());
  p->phase = IStr(st.value("phase", "Pending"));
  p->started = ts(st, "startTime");
  for (const auto& c : st.value("conditions", json::array())) {
    if (c.value("type", "") == "Ready" && c.value("status", "") == "True") {
      p->ready = true;
      p->ready_since = ts(c, "lastTransitionTime");
    }
  }
  for (const auto& cs : st.value("containerStatuses", json::array()))
    p->restarts += cs.value("restartCount", 0);
  // REA-11: when each container last terminated (the restart evidence of an out-of-memory exit).
  for (const char* list : {"initContainerStatuses", "containerStatuses"}) {
    for (const auto& cs : st.value(list, json::array())) {
      if (!cs.is_object() || !cs.contains("lastState") || !cs["lastState"].is_object()) continue;
      const json terminated = cs["lastState"].value("terminated", json::object());
      common::TimePoint t = ts(terminated, "finishedAt");
      if (t == common::TimePoint{}) continue;
      bool init = list[0] == 'i';
      std::string name = cs.value("name", "");
      const int restarts = cs.value("restartCount", 0);
      const bool oom = terminated.value("reason", "") == "OOMKilled" || says_out_of_memory(terminated.value("message", ""));
      for (auto& c : p->containers) {
        if (c.init != init || c.name.view() != name) continue;
        c.last_terminated = t;
        c.restarts = restarts;
        c.last_oom = oom;
      }
    }
  }
  return p;
}

std::shared_ptr<const NodeView> project_node(const json& node) {
  auto n = std::make_shared<NodeView>();
  common::fill_meta(*n, node);
  const json& m = node["metadata"];
  n->uid = m.value("uid", "");
  n->labels = pairs(m.value("labels", json::object()), nullptr);
  const json spec = node.value("spec", json::object());
  n->unschedulable = spec.value("unschedulable", false);
  for (const auto& t : spec.value("taints", json::array())) {
    n->taints.emplace_back(IStr(t.value("key", "")),
                           IStr(t.value("value", "") + ":" + t.value("effect", "")));
  }
  const json st = node.value("status", json::object());
  const json alloc = st.value("allocatable", json::object());
  n->gpu_allocatable = whole(alloc, "nvidia.com/gpu").value_or(0);
  n->cpu_allocatable_milli = milli(alloc, "cpu").value_or(0);
  n->memory_allocatable = whole(alloc, "memory").value_or(0);
  for (const auto& c : st.value("conditions", json::array())) {
    if (c.value("type", "") == "Ready") n->ready = c.value("status", "") == "True";
  }
  return n;
}

std::shared_ptr<const WorkloadView> project_workload(const json& obj) {
  auto w = std::make_shared<WorkloadView>();
  common::fill_meta(*w, obj);
  w->kind = IStr(obj.value("kind", ""));
  const json& m = obj["metadata"];
  w->uid = m.value("uid", "");
  w->generation = m.value("generation", std::int64_t{0});
  w->labels = pairs(m.value("labels", json::object()), nullptr);
  w->annotations = pairs(m.value("annotations", json::object()), kept_workload_annotation);
  w->owners = owners_of(m);
  static const json kNoSpec = json::object();
  auto sit = obj.find("spec");
  const json& spec = sit != obj.end() && sit->is_object() ? *sit : kNoSpec;
  if (spec.contains("replicas") && spec["replicas"].is_number_integer())
    w->replicas = spec["replicas"].get<std::int64_t>();
  if (spec.contains("strategy") && spec["strategy"].contains("rollingUpdate")) {
    const json& mu = spec["strategy"]["rollingUpdate"].value("maxUnavailable", json());
    if (!mu.is_null()) w->max_unavailable = mu.is_string() ? mu.get<std::string>() : mu.dump();
  } else if (spec.contains("updateStrategy") && spec["updateStrategy"].contains("rollingUpdate")) {
    const json& mu = spec["updateStrategy"]["rollingUpdate"].value("maxUnavailable", json());
    if (!mu.is_null()) w->max_unavailable = mu.is_string() ? mu.get<std::string>() : mu.dump();
  }
  // A ReplicaSet is only a link of the owner chain (SEL-1): its Deployment or Rollout carries the template.
  if (w->kind.view() == "ReplicaSet") return w;
  if (w->kind.view() == "Model" && spec.contains("engine") && spec["engine"].is_string()) {
    w->model_engine = IStr(spec["engine"].get<std::string>());
  }
  if (spec.contains("selector")) w->selector_json = spec["selector"].dump();
  if (spec.contains("template")) {
    w->template_json = spec["template"].dump();
  } else if (spec.contains("jobTemplate") && spec["jobTemplate"].contains("spec") &&
             spec["jobTemplate"]["spec"].contains("template")) {
    w->template_json = spec["jobTemplate"]["spec"]["template"].dump();
  }
  return w;
}

std::string scheduling_constraints(const json& spec) {
  if (!spec.is_object()) return "";
  json out = json::object();
  if (auto it = spec.find("nodeSelector"); it != spec.end() && it->is_object() && !it->empty()) {
    out["nodeSelector"] = *it;
  }
  if (auto it = spec.find("tolerations"); it != spec.end() && it->is_array() && !it->empty()) {
    out["tolerations"] = *it;
  }
  if (auto aff = spec.find("affinity"); aff != spec.end() && aff->is_object()) {
    if (auto na = aff->find("nodeAffinity"); na != aff->end() && na->is_object()) {
      auto req = na->find("requiredDuringSchedulingIgnoredDuringExecution");
      if (req != na->end() && req->is_object()) {
        auto terms = req->find("nodeSelectorTerms");
        out["nodeAffinity"] = terms != req->end() && terms->is_array() ? *terms : json::array();
      }
    }
    for (const char* k : {"podAffinity", "podAntiAffinity"}) {
      auto pa = aff->find(k);
      if (pa == aff->end() || !pa->is_object()) continue;
      auto req = pa->find("requiredDuringSchedulingIgnoredDuringExecution");
      if (req != pa->end() && req->is_array() && !req->empty()) out["podAffinity"] = true;
    }
  }
  if (auto ts = spec.find("topologySpreadConstraints"); ts != spec.end() && ts->is_array()) {
    for (const auto& c : *ts) {
      if (c.is_object() && c.value("whenUnsatisfiable", "") == "DoNotSchedule") out["topologySpread"] = true;
    }
  }
  return out.empty() ? "" : out.dump();
}

std::shared_ptr<const PdbView> project_pdb(const json& pdb) {
  auto v = std::make_shared<PdbView>();
  common::fill_meta(*v, pdb);
  const json spec = pdb.value("spec", json::object());
  if (spec.contains("selector") && spec["selector"].is_object()) v->selector_json = spec["selector"].dump();
  const json st = pdb.value("status", json::object());
  if (st.contains("disruptionsAllowed") && st["disruptionsAllowed"].is_number_integer()) {
    v->disruptions_allowed = st["disruptionsAllowed"].get<std::int64_t>();
  }
  return v;
}

std::size_t approx_bytes(const PodView& p) {
  std::size_t n = sizeof(PodView) + p.uid.capacity() + p.resource_version.capacity();
  n += p.labels.capacity() * sizeof(p.labels[0]) + p.annotations.capacity() * sizeof(p.annotations[0]);
  n += p.owners.capacity() * sizeof(OwnerRef);
  for (const auto& o : p.owners) n += o.uid.capacity();
  n += p.containers.capacity() * sizeof(ContainerView);
  return n;
}

}  // namespace kubex::api
