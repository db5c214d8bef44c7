#include "observe/gpu_inventory.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "api/keys.h"
#include "decide/packing/movability.h"
#include "decide/packing/requests.h"
#include "decide/policy/scope.h"
#include "kube/cache/informer.h"
#include "observe/caches.h"
#include "observe/signals.h"

namespace kubex::observe {

namespace pk = decide::packing;
using nlohmann::json;

namespace {

pk::Labels label_map(const api::Labels& labels) {
  pk::Labels out;
  for (const auto& [k, v] : labels) out.emplace(k.str(), v.str());
  return out;
}

std::string text(const json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::vector<pk::NodeSelectorRequirement> requirements(const json& list) {
  std::vector<pk::NodeSelectorRequirement> out;
  if (!list.is_array()) return out;
  for (const auto& r : list) {
    if (!r.is_object()) continue;
    pk::NodeSelectorRequirement req{text(r, "key"), text(r, "operator"), {}};
    if (auto v = r.find("values"); v != r.end() && v->is_array()) {
      for (const auto& x : *v) {
        if (x.is_string()) req.values.push_back(x.get<std::string>());
      }
    }
    out.push_back(std::move(req));
  }
  return out;
}

// PodView::scheduling (api/views.h) into the pod's CON-6a constraints and CON-4 facts.
void read_scheduling(const api::PodView& p, pk::PoolPod& out, pk::MovabilityFacts& facts) {
  if (p.scheduling.empty()) return;
  json s = json::parse(p.scheduling.view(), nullptr, false);
  if (!s.is_object()) return;
  if (auto it = s.find("nodeSelector"); it != s.end() && it->is_object()) {
    for (auto& [k, v] : it->items()) out.node_selector[k] = v.is_string() ? v.get<std::string>() : v.dump();
  }
  if (auto it = s.find("nodeAffinity"); it != s.end() && it->is_array()) {
    for (const auto& t : *it) {
      if (!t.is_object()) continue;
      pk::NodeSelectorTerm term;
      if (auto e = t.find("matchExpressions"); e != t.end()) term.match_expressions = requirements(*e);
      if (auto f = t.find("matchFields"); f != t.end()) term.match_fields = requirements(*f);
      out.required_affinity.push_back(std::move(term));
    }
    // A required node affinity without terms matches no node: a term with nothing in it says the same.
    if (out.required_affinity.empty()) out.required_affinity.emplace_back();
  }
  if (auto it = s.find("tolerations"); it != s.end() && it->is_array()) {
    for (const auto& t : *it) {
      if (!t.is_object()) continue;
      pk::Toleration tol{text(t, "key"), text(t, "operator"), text(t, "value"), text(t, "effect")};
      if (tol.op.empty()) tol.op = "Equal";
      out.tolerations.push_back(std::move(tol));
    }
  }
  facts.inter_pod_affinity = s.value("podAffinity", false);
  facts.hard_topology_spread = s.value("topologySpread", false);
}

bool pdb_selects(const api::PdbView& pdb, const api::PodView& pod) {
  if (pdb.selector_json.empty()) return false;  // policy/v1: a null selector selects no pod
  json sel = json::parse(pdb.selector_json, nullptr, false);
  if (!sel.is_object()) return false;
  return api::labels_match(pod.labels, sel);
}

bool annotation_true(const api::PodView& p, const char* key) {
  const api::IStr* v = p.annotation(key);
  return v && v->view() == "true";
}

// Where the builder reads nodes, pods and PDBs.
class Source {
 public:
  virtual ~Source() = default;
  virtual std::vector<std::shared_ptr<const api::NodeView>> nodes() const = 0;
  virtual std::vector<std::shared_ptr<const api::PodView>> pods_on(const std::string& node) const = 0;
  virtual std::vector<std::shared_ptr<const api::PdbView>> pdbs_in(const std::string& ns) const = 0;
};

pk::Pool build_pool(const Source& src, const api::LabelSelector& selector, const std::string& reservation_ns) {
  pk::Pool pool;
  std::map<std::string, std::vector<std::shared_ptr<const api::PdbView>>> pdbs;  // by namespace, read once
  for (const auto& n : src.nodes()) {
    pk::PoolNode node = pool_node(*n);
    if (!decide::policy::selector_matches(selector, node.labels, /*wildcard_values=*/true)) continue;
    for (const auto& p : src.pods_on(node.name)) {
      if (!counted(*p, reservation_ns)) continue;
      const std::string ns = p->ns.str();
      auto it = pdbs.find(ns);
      if (it == pdbs.end()) it = pdbs.emplace(ns, src.pdbs_in(ns)).first;
      std::vector<const api::PdbView*> ptrs;
      for (const auto& b : it->second) ptrs.push_back(b.get());
      pool.pods.push_back(pool_pod(*p, ptrs));
    }
    pool.nodes.push_back(std::move(node));
  }
  std::sort(pool.nodes.begin(), pool.nodes.end(),
            [](const pk::PoolNode& a, const pk::PoolNode& b) { return a.name < b.name; });
  std::sort(pool.pods.begin(), pool.pods.end(), [](const pk::PoolPod& a, const pk::PoolPod& b) {
    return std::tie(a.node, a.ns, a.name) < std::tie(b.node, b.ns, b.name);
  });
  return pool;
}

std::vector<ConsolidationTaint> taints_of(const Source& src) {
  std::vector<ConsolidationTaint> out;
  for (const auto& n : src.nodes()) {
    for (const auto& [key, value_effect] : n->taints) {
      if (key.view() != api::keys::kConsolidatingTaint) continue;
      const std::string ve = value_effect.str();
      out.push_back({n->name, ve.substr(0, ve.rfind(':'))});
    }
  }
  std::sort(out.begin(), out.end(),
            [](const ConsolidationTaint& a, const ConsolidationTaint& b) { return a.node < b.node; });
  return out;
}

class SourceInventory : public GpuInventory {
 public:
  pk::Pool pool(const api::LabelSelector& selector, const std::string& reservation_ns) const override {
    return build_pool(source(), selector, reservation_ns);
  }
  std::vector<ConsolidationTaint> consolidation_taints() const override { return taints_of(source()); }

 protected:
  virtual const Source& source() const = 0;
};

class CachedSource final : public Source {
 public:
  explicit CachedSource(const Caches& c) : c_(c) {}
  std::vector<std::shared_ptr<const api::NodeView>> nodes() const override {
    std::vector<std::shared_ptr<const api::NodeView>> out;
    if (!c_.nodes) return out;
    for (const auto& o : c_.nodes->list()) {
      if (auto n = kube::as<api::NodeView>(o)) out.push_back(std::move(n));
    }
    return out;
  }
  std::vector<std::shared_ptr<const api::PodView>> pods_on(const std::string& node) const override {
    std::vector<std::shared_ptr<const api::PodView>> out;
    if (!c_.pods) return out;
    for (const auto& o : c_.pods->by_index(kIndexNodeName, node)) {
      if (auto p = kube::as<api::PodView>(o)) out.push_back(std::move(p));
    }
    return out;
  }
  std::vector<std::shared_ptr<const api::PdbView>> pdbs_in(const std::string& ns) const override {
    std::vector<std::shared_ptr<const api::PdbView>> out;
    if (!c_.pdbs) return out;
    for (const auto& o : c_.pdbs->by_index(kIndexNamespace, ns)) {
      if (auto b = kube::as<api::PdbView>(o)) out.push_back(std::move(b));
    }
    return out;
  }

 private:
  const Caches& c_;
};

class CachedInventory final : public SourceInventory {
 public:
  explicit CachedInventory(const Caches& c) : source_(c) {}

 protected:
  const Source& source() const override { return source_; }

 private:
  CachedSource source_;
};

// A LISTed snapshot.
class SnapshotSource final : public Source {
 public:
  std::vector<std::shared_ptr<const api::NodeView>> nodes() const override { return nodes_; }
  std::vector<std::shared_ptr<const api::PodView>> pods_on(const std::string& node) const override {
    auto it = pods_.find(node);
    return it == pods_.end() ? std::vector<std::shared_ptr<const api::PodView>>{} : it->second;
  }
  std::vector<std::shared_ptr<const api::PdbView>> pdbs_in(const std::string& ns) const override {
    auto it = pdbs_.find(ns);
    return it == pdbs_.end() ? std::vector<std::shared_ptr<const api::PdbView>>{} : it->second;
  }

  std::vector<std::shared_ptr<const api::NodeView>> nodes_;
  std::map<std::string, std::vector<std::shared_ptr<const api::PodView>>> pods_;
  std::map<std::string, std::vector<std::shared_ptr<const api::PdbView>>> pdbs_;
};

class SnapshotInventory final : public SourceInventory {
 public:
  SnapshotSource snapshot;

 protected:
  const Source& source() const override { return snapshot; }
};

}  // namespace

bool counted(const api::PodView& pod, const std::string& reservation_ns) {
  if (pod.node_name.empty()) return false;
  if (pod.phase.view() != "Pending" && pod.phase.view() != "Running") return false;
  return pod.ns.view() != reservation_ns;
}

pk::PoolNode pool_node(const api::NodeView& n) {
  pk::PoolNode node;
  node.name = n.name;
  node.gpu_capacity = n.gpu_allocatable;
  node.cpu_millis = n.cpu_allocatable_milli;
  node.memory_bytes = n.memory_allocatable;
  node.labels = label_map(n.labels);
  node.ready = n.ready;
  node.unschedulable = n.unschedulable;
  for (const auto& [key, value_effect] : n.taints) {
    const std::string ve = value_effect.str();
    const std::size_t colon = ve.rfind(':');
    pk::Taint t{key.str(), ve.substr(0, colon), colon == std::string::npos ? "" : ve.substr(colon + 1)};
    if (t.key == api::keys::kConsolidatingTaint) node.consolidating_policy = t.value;
    node.taints.push_back(std::move(t));
  }
  return node;
}

pk::PoolPod pool_pod(const api::PodView& p, const std::vector<const api::PdbView*>& pdbs) {
  pk::PoolPod out;
  out.ns = p.ns.str();
  out.name = p.name;
  out.node = p.node_name.str();
  if (const api::IStr* g = p.label(api::keys::kGpuGroupLabel)) out.gpu_group = g->str();
  // CON-2: the gpu-fraction value, else whole nvidia.com/gpu of the target containers (limits, else requests).
  const PodFraction f = pod_fraction(p);
  if (f.value && *f.value > 0) {
    out.fraction = *f.value;
  } else {
    for (const auto& c : p.containers) {
      if (!c.is_target()) continue;
      out.whole_gpus += c.gpu_limit ? *c.gpu_limit : c.gpu_request.value_or(0);
    }
  }
  // CON-6a: requests as the kube-scheduler counts them; a request the API server would default from the limit
  // counts as that limit.
  std::vector<pk::ContainerRequest> reqs;
  for (const auto& c : p.containers) {
    pk::ContainerRequest r;
    r.init = c.init;
    r.restartable = c.restartable;
    r.cpu_millis = c.cpu_request_milli ? *c.cpu_request_milli : c.cpu_limit_milli.value_or(0);
    r.memory_bytes = c.memory_request ? *c.memory_request : c.memory_limit.value_or(0);
    reqs.push_back(r);
  }
  pk::Requests total = pk::pod_requests(reqs);
  out.cpu_millis = total.cpu_millis;
  out.memory_bytes = total.memory_bytes;
  // CON-4 facts.
  pk::MovabilityFacts facts;
  if (const api::OwnerRef* c = p.controller()) facts.controller_kind = c->kind.str();
  facts.num_devices = p.annotation(api::keys::kGpuFractionNumDevices) != nullptr;
  facts.do_not_disrupt =
      annotation_true(p, api::keys::kDoNotDisrupt) || annotation_true(p, api::keys::kKarpenterDoNotDisrupt);
  for (const api::PdbView* b : pdbs) {
    if (b && b->disruptions_allowed <= 0 && pdb_selects(*b, p)) facts.pdb_blocked = true;
  }
  facts.terminating = p.deleting;
  out.leaving = p.deleting;
  read_scheduling(p, out, facts);
  // CON-5b: KAI 0.18's compute mode, from the pod-level annotation or a container's.
  if (const api::IStr* m = p.annotation(api::keys::kGpuComputeSharingMode)) out.compute_mode = m->str();
  for (const auto& [k, v] : p.annotations) {
    const std::string_view key = k.view();
    if (out.compute_mode.empty() && key.starts_with(api::keys::kContainerComputeModePrefix) &&
        key.ends_with(api::keys::kContainerComputeModeSuffix))
      out.compute_mode = v.str();
  }
  if (out.compute_mode == "time-slicing") out.compute_mode.clear();
  out.unmovable = pk::unmovable_reason(facts);
  return out;
}

std::unique_ptr<GpuInventory> cached_gpu_inventory(const Caches& caches) {
  return std::make_unique<CachedInventory>(caches);
}

kube::KResult<std::unique_ptr<GpuInventory>> read_gpu_inventory(kube::Client& client) {
  auto inv = std::make_unique<SnapshotInventory>();
  SnapshotSource& s = inv->snapshot;
  auto nodes = client.list(kube::resource_path("", "v1", "nodes"), {}, [&](json&& o) {
    s.nodes_.push_back(api::project_node(o));
  });
  if (!nodes) return std::unexpected(nodes.error());
  // Only bound pods matter (CON-2).
  auto pods = client.list(kube::resource_path("", "v1", "pods"), {}, [&](json&& o) {
    auto p = api::project_pod(o);
    if (!p->node_name.empty()) s.pods_[p->node_name.str()].push_back(std::move(p));
  });
  if (!pods) return std::unexpected(pods.error());
  auto pdbs = client.list(kube::resource_path("policy", "v1", "poddisruptionbudgets"), {}, [&](json&& o) {
    auto b = api::project_pdb(o);
    s.pdbs_[b->ns.str()].push_back(std::move(b));
  });
  if (!pdbs) return std::unexpected(pdbs.error());
  return std::unique_ptr<GpuInventory>(std::move(inv));
}

}  // namespace kubex::observe
