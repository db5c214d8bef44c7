#include "sim/cluster/sched_ledger.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace kubex::sim::cluster::sched {

namespace {

constexpr std::int64_t kDefaultMilliCpu = 100;
constexpr std::int64_t kDefaultMemory = 200LL * 1024 * 1024;

void sort_groups(std::vector<GpuGroupUse>& groups) {
  std::sort(groups.begin(), groups.end(), [](const GpuGroupUse& a, const GpuGroupUse& b) {
    auto ia = a.index < 0 ? INT32_MAX : a.index, ib = b.index < 0 ? INT32_MAX : b.index;
    return ia != ib ? ia < ib : a.id < b.id;
  });
}

// CPU and memory a pod with these requests holds on `node`; zero requests count as the scheduler's defaults.
Ledger::Holding base_holding(const std::string& node, std::int64_t cpu_milli, std::int64_t memory_bytes) {
  Ledger::Holding h;
  h.node = node;
  h.cpu_milli = cpu_milli;
  h.memory_bytes = memory_bytes;
  h.nonzero_cpu_milli = cpu_milli > 0 ? cpu_milli : kDefaultMilliCpu;
  h.nonzero_memory_bytes = memory_bytes > 0 ? memory_bytes : kDefaultMemory;
  return h;
}

}  // namespace

std::string reservation_pod_name(const std::string& node, const std::string& suffix) {
  return "gpu-reservation-" + node + "-" + suffix;
}

std::optional<Ledger::Holding> Ledger::holding_of(const SimPod& p, KaiVersion kai_version) {
  if (!p.active_on_node()) return std::nullopt;
  Holding h = base_holding(p.node, p.cpu_milli, p.memory_bytes);
  std::string group = p.gpu_group();
  if (p.ns == api::keys::kDefaultReservationNamespace && !group.empty()) {
    h.reservation = true;
    h.group = group;
    auto idx = p.gpu_indices();
    if (!idx.empty()) h.gpu_index = idx.front();
    return h;
  }
  h.gpus = p.gpu_whole;
  if (p.gpu_fraction > 0 && !group.empty()) {
    h.group = group;
    h.fraction = fraction_hundredths(p.gpu_fraction);
    h.compute_mode = compute_mode(p, kai_version);
  }
  return h;
}

void Ledger::add(const std::string& key, const Holding& h) {
  auto [uit, inserted] = uses_.try_emplace(h.node);
  if (inserted) slots_dirty_ = true;
  NodeUse& u = uit->second;
  u.cpu_milli += h.cpu_milli;
  u.memory_bytes += h.memory_bytes;
  u.nonzero_cpu_milli += h.nonzero_cpu_milli;
  u.nonzero_memory_bytes += h.nonzero_memory_bytes;
  u.pods += 1;
  u.whole_gpus += h.gpus;
  if (h.group.empty()) return;
  auto it = std::find_if(u.groups.begin(), u.groups.end(), [&](const GpuGroupUse& g) { return g.id == h.group; });
  if (it == u.groups.end()) {
    u.groups.push_back(GpuGroupUse{h.group});
    it = std::prev(u.groups.end());
  }
  if (h.reservation) {
    ++it->reservations;
    reservation_pods_[h.group].insert(key);
    if (h.gpu_index >= 0) it->index = h.gpu_index;
  } else {
    if (it->members == 0) it->compute_mode = h.compute_mode;  // the first member sets the GPU's mode
    ++it->members;
    it->hundredths += h.fraction;
  }
  sort_groups(u.groups);
}

void Ledger::sub(const std::string& key, const Holding& h, bool& emptied) {
  auto uit = uses_.find(h.node);
  if (uit == uses_.end()) return;
  NodeUse& u = uit->second;
  u.cpu_milli -= h.cpu_milli;
  u.memory_bytes -= h.memory_bytes;
  u.nonzero_cpu_milli -= h.nonzero_cpu_milli;
  u.nonzero_memory_bytes -= h.nonzero_memory_bytes;
  u.pods -= 1;
  u.whole_gpus -= h.gpus;
  if (!h.group.empty()) {
    auto it = std::find_if(u.groups.begin(), u.groups.end(), [&](const GpuGroupUse& g) { return g.id == h.group; });
    if (it != u.groups.end()) {
      if (h.reservation) {
        --it->reservations;
        if (auto r = reservation_pods_.find(h.group); r != reservation_pods_.end()) {
          r->second.erase(key);
          if (r->second.empty()) reservation_pods_.erase(r);
        }
      } else {
        --it->members;
        it->hundredths -= h.fraction;
        if (it->members <= 0 && it->reservations > 0 && !it->dying) emptied = true;
      }
      if (it->members <= 0 && it->reservations <= 0) u.groups.erase(it);
    }
  }
}

void Ledger::notify(bool freed, bool emptied) {
  if (freed) {
    for (auto& cb : freed_cbs_) cb();
  }
  if (emptied) {
    for (auto& cb : emptied_cbs_) cb();
  }
}

void Ledger::upsert_pod(const SimPod& p) {
  bool freed = false, emptied = false;
  {
    std::lock_guard lk(mu_);
    std::string key = p.key();
    auto h = holding_of(p, kai_version_);
    auto it = pods_.find(key);
    if (it != pods_.end()) {
      // An assumed pod stays assumed until the feed shows it bound (the label patch before the binding
      // arrives unbound) or terminal/deleted.
      if (it->second.assumed && !h && p.node.empty() && !p.terminal()) return;
      if (!it->second.assumed && h && it->second.h == *h) return;
      bool shrank = !h || h->node != it->second.h.node || h->gpus < it->second.h.gpus ||
                    h->fraction < it->second.h.fraction || h->cpu_milli < it->second.h.cpu_milli ||
                    h->memory_bytes < it->second.h.memory_bytes || h->group != it->second.h.group;
      sub(key, it->second.h, emptied);
      freed = shrank;
      pods_.erase(it);
    }
    if (h) {
      add(key, *h);
      pods_[key] = Entry{*h, false};
    }
  }
  notify(freed, emptied);
}

void Ledger::remove_pod(const std::string& key) {
  bool emptied = false, freed = false;
  {
    std::lock_guard lk(mu_);
    auto it = pods_.find(key);
    if (it == pods_.end()) return;
    sub(key, it->second.h, emptied);
    pods_.erase(it);
    freed = true;
  }
  notify(freed, emptied);
}

bool Ledger::has_node(const std::string& name) const {
  std::lock_guard lk(mu_);
  return nodes_.count(name) > 0;
}

void Ledger::upsert_node(const SimNode& n) {
  PlacementNode pn;
  pn.name = n.name;
  pn.labels = n.labels;
  if (!n.taints_json.empty()) {
    auto t = nlohmann::json::parse(n.taints_json, nullptr, false);
    if (!t.is_discarded()) pn.taints = parse_taints(t);
  }
  pn.ready = n.ready;
  pn.unschedulable = n.unschedulable;
  pn.cpu_milli = n.cpu_milli;
  pn.memory_bytes = n.memory_bytes;
  pn.pods = n.pods;
  pn.gpus = n.gpus;
  {
    std::lock_guard lk(mu_);
    auto [it, inserted] = nodes_.insert_or_assign(n.name, std::move(pn));
    if (inserted) slots_dirty_ = true;
  }
  notify(true, false);
}

void Ledger::remove_node(const std::string& name) {
  std::lock_guard lk(mu_);
  nodes_.erase(name);
  slots_dirty_ = true;
}

Decision Ledger::schedule(const std::string& pod_key, const PlacementPod& pod, Strategy strategy,
                          const std::string& new_group_id, const std::string& reservation_suffix) {
  std::lock_guard lk(mu_);
  if (slots_dirty_) {
    slots_.clear();
    slots_.reserve(nodes_.size());
    for (const auto& [name, node] : nodes_) slots_.push_back({&node, &uses_[name]});
    slots_dirty_ = false;
  }
  Decision d = place(pod, slots_, strategy);
  if (!d.scheduled) return d;
  if (d.new_group && new_group_id.empty()) {  // the caller cannot create groups
    d = Decision{};
    d.message = "no GPU group can be created";
    return d;
  }
  Holding h = base_holding(d.node, pod.cpu_milli, pod.memory_bytes);
  h.gpus = pod.gpus;
  if (strategy == Strategy::kKai && pod.fraction > 0) {
    if (d.new_group) {
      d.group = new_group_id;
      Holding r;
      r.node = d.node;
      r.group = new_group_id;
      r.reservation = true;
      std::string rkey = std::string(api::keys::kDefaultReservationNamespace) + "/" +
                         reservation_pod_name(d.node, reservation_suffix);
      add(rkey, r);
      pods_[rkey] = Entry{r, true};
    }
    h.group = d.group;
    h.fraction = pod.fraction;
    h.compute_mode = pod.compute_mode;
  }
  if (auto it = pods_.find(pod_key); it != pods_.end()) {  // a stale holding of the same key (should not happen)
    bool ignored = false;
    sub(pod_key, it->second.h, ignored);
  }
  add(pod_key, h);
  pods_[pod_key] = Entry{h, true};
  return d;
}

bool Ledger::holds(const std::string& pod_key) const {
  std::lock_guard lk(mu_);
  return pods_.count(pod_key) > 0;
}

void Ledger::forget(const std::string& key) {
  bool emptied = false;
  {
    std::lock_guard lk(mu_);
    auto it = pods_.find(key);
    if (it == pods_.end() || !it->second.assumed) return;
    sub(key, it->second.h, emptied);
    pods_.erase(it);
  }
  notify(true, emptied);
}

std::vector<std::string> Ledger::claim_empty_groups() {
  std::lock_guard lk(mu_);
  std::vector<std::string> out;
  for (auto& [node, use] : uses_) {
    for (auto& g : use.groups) {
      if (g.members > 0 || g.reservations <= 0 || g.dying) continue;
      auto r = reservation_pods_.find(g.id);
      if (r == reservation_pods_.end()) continue;
      bool any_assumed = false;
      for (const auto& key : r->second) {
        auto e = pods_.find(key);
        if (e != pods_.end() && e->second.assumed) any_assumed = true;
      }
      if (any_assumed) continue;  // its pod is still being created; the creator cleans up on failure
      g.dying = true;
      out.insert(out.end(), r->second.begin(), r->second.end());
    }
  }
  return out;
}

std::vector<std::string> Ledger::confirmed_keys() const {
  std::lock_guard lk(mu_);
  std::vector<std::string> out;
  out.reserve(pods_.size());
  for (const auto& [k, e] : pods_) {
    if (!e.assumed) out.push_back(k);
  }
  return out;
}

NodeUse Ledger::use_of(const std::string& node) const {
  std::lock_guard lk(mu_);
  auto it = uses_.find(node);
  return it == uses_.end() ? NodeUse{} : it->second;
}

std::size_t Ledger::node_count() const {
  std::lock_guard lk(mu_);
  return nodes_.size();
}

void Ledger::on_capacity_freed(std::function<void()> cb) {
  std::lock_guard lk(mu_);
  freed_cbs_.push_back(std::move(cb));
}

void Ledger::on_group_emptied(std::function<void()> cb) {
  std::lock_guard lk(mu_);
  emptied_cbs_.push_back(std::move(cb));
}

}  // namespace kubex::sim::cluster::sched
