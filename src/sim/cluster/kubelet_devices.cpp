#include "sim/cluster/kubelet_devices.h"

#include <cstdio>

namespace kubex::sim::cluster::kubelet {

namespace {

bool parse_ipv4(const std::string& s, std::uint32_t& out) {
  unsigned a, b, c, d;
  char tail;
  if (std::sscanf(s.c_str(), "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) != 4) return false;
  if (a > 255 || b > 255 || c > 255 || d > 255) return false;
  out = (a << 24) | (b << 16) | (c << 8) | d;
  return true;
}

bool holds_exclusively(const SimPod& p) {
  return p.gpu_whole > 0 || (p.ns == api::keys::kDefaultReservationNamespace && !p.gpu_group().empty());
}

}  // namespace

std::string cidr_address(const std::string& cidr, int offset) {
  auto slash = cidr.find('/');
  if (slash == std::string::npos || offset < 0) return "";
  std::uint32_t base = 0;
  if (!parse_ipv4(cidr.substr(0, slash), base)) return "";
  int bits = 0;
  try {
    bits = std::stoi(cidr.substr(slash + 1));
  } catch (...) {
    return "";
  }
  if (bits < 0 || bits > 30) return "";
  std::uint64_t size = 1ULL << (32 - bits);
  if (static_cast<std::uint64_t>(offset) >= size - 1) return "";  // keep the broadcast address free
  std::uint32_t ip = (base & static_cast<std::uint32_t>(~(size - 1))) + static_cast<std::uint32_t>(offset);
  return std::to_string(ip >> 24) + "." + std::to_string((ip >> 16) & 255) + "." + std::to_string((ip >> 8) & 255) +
         "." + std::to_string(ip & 255);
}

std::string format_indices(const std::vector<int>& indices) {
  std::string out;
  for (std::size_t i = 0; i < indices.size(); ++i) out += (i ? "," : "") + std::to_string(indices[i]);
  return out;
}

void NodeDevices::set_node(const std::string& name, NodeNet net) {
  std::lock_guard lk(mu_);
  nodes_[name].net = std::move(net);
}

void NodeDevices::remove_node(const std::string& name) {
  std::lock_guard lk(mu_);
  nodes_.erase(name);
}

std::optional<NodeNet> NodeDevices::node(const std::string& name) const {
  std::lock_guard lk(mu_);
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return std::nullopt;
  return it->second.net;
}

void NodeDevices::release_locked(const std::string& key) {
  auto it = pods_.find(key);
  if (it == pods_.end()) return;
  auto n = nodes_.find(it->second.node);
  if (n != nodes_.end()) {
    for (int idx : it->second.exclusive) {
      auto e = n->second.exclusive.find(idx);
      if (e != n->second.exclusive.end() && e->second == key) n->second.exclusive.erase(e);
    }
    if (it->second.ip_offset > 0) n->second.ip_offsets.erase(it->second.ip_offset);
  }
  if (!it->second.group_key.empty()) {
    auto g = groups_.find(it->second.group_key);
    if (g != groups_.end() && g->second.first == key) groups_.erase(g);
  }
  pods_.erase(it);
}

void NodeDevices::release(const std::string& key) {
  std::lock_guard lk(mu_);
  release_locked(key);
}

void NodeDevices::observe(const SimPod& p) {
  std::string key = p.key();
  std::lock_guard lk(mu_);
  auto existing = pods_.find(key);
  if (!p.active_on_node() || (existing != pods_.end() && existing->second.node != p.node)) {
    release_locked(key);
    if (!p.active_on_node()) return;
  }
  PodState& ps = pods_[key];
  ps.node = p.node;
  std::vector<int> idx = p.gpu_indices();
  if (p.ns == api::keys::kDefaultReservationNamespace && !p.gpu_group().empty()) {
    ps.group_key = p.node + "|" + p.gpu_group();
    auto [g, inserted] = groups_.try_emplace(ps.group_key, key, -1);
    g->second.first = key;
    if (!idx.empty()) g->second.second = idx.front();
  }
  if (holds_exclusively(p) && !idx.empty() && idx != ps.exclusive) {
    NodeState& ns = nodes_[p.node];
    for (int i : ps.exclusive) {
      auto e = ns.exclusive.find(i);
      if (e != ns.exclusive.end() && e->second == key) ns.exclusive.erase(e);
    }
    ps.exclusive = idx;
    for (int i : idx) ns.exclusive[i] = key;
  }
}

NodeDevices::Allocation NodeDevices::allocate_exclusive(const std::string& key, const std::string& node,
                                                        std::int64_t count) {
  std::lock_guard lk(mu_);
  auto it = pods_.find(key);
  if (it != pods_.end() && !it->second.node.empty() && it->second.node != node) release_locked(key);
  return allocate_unlocked(key, node, count);
}

NodeDevices::Allocation NodeDevices::allocate_unlocked(const std::string& key, const std::string& node,
                                                       std::int64_t count) {
  Allocation out;
  NodeState& ns = nodes_[node];
  PodState& ps = pods_[key];
  ps.node = node;
  out.used = static_cast<std::int64_t>(ns.exclusive.size());
  if (static_cast<std::int64_t>(ps.exclusive.size()) == count) {
    out.ok = true;
    out.indices = ps.exclusive;
    return out;
  }
  std::vector<int> picked;
  for (int i = 0; i < ns.net.gpus && static_cast<std::int64_t>(picked.size()) < count; ++i) {
    auto e = ns.exclusive.find(i);
    if (e == ns.exclusive.end() || e->second == key) picked.push_back(i);
  }
  if (static_cast<std::int64_t>(picked.size()) < count) return out;
  for (int i : ps.exclusive) ns.exclusive.erase(i);
  ps.exclusive = picked;
  for (int i : picked) ns.exclusive[i] = key;
  if (!ps.group_key.empty()) {
    auto g = groups_.find(ps.group_key);
    if (g != groups_.end() && g->second.first == key && !picked.empty()) g->second.second = picked.front();
  }
  out.ok = true;
  out.indices = picked;
  return out;
}

NodeDevices::GroupState NodeDevices::group_index(const std::string& node, const std::string& group,
                                                 int& index) const {
  std::lock_guard lk(mu_);
  auto g = groups_.find(node + "|" + group);
  if (g == groups_.end()) return GroupState::kNoReservation;
  if (g->second.second < 0) return GroupState::kPending;
  index = g->second.second;
  return GroupState::kKnown;
}

int NodeDevices::shared_fallback(const std::string& node) const {
  std::lock_guard lk(mu_);
  auto n = nodes_.find(node);
  if (n == nodes_.end()) return 0;
  for (int i = 0; i < n->second.net.gpus; ++i) {
    if (!n->second.exclusive.count(i)) return i;
  }
  return 0;
}

std::string NodeDevices::allocate_ip(const std::string& key, const std::string& node) {
  std::lock_guard lk(mu_);
  NodeState& ns = nodes_[node];
  PodState& ps = pods_[key];
  ps.node = node;
  if (ps.ip_offset == 0) {
    int offset = 2;
    while (ns.ip_offsets.count(offset)) ++offset;
    ps.ip_offset = offset;
    ns.ip_offsets.insert(offset);
  }
  std::string ip = cidr_address(ns.net.pod_cidr, ps.ip_offset);
  return ip.empty() ? cidr_address("10.244.0.0/16", ps.ip_offset) : ip;
}

}  // namespace kubex::sim::cluster::kubelet
