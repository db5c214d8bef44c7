#include "decide/packing/constraints.h"

#include <algorithm>
#include <charconv>

namespace kubex::decide::packing {
namespace {

std::optional<std::int64_t> to_int(const std::string& s) {
  std::int64_t v = 0;
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, v);
  if (ec != std::errc() || p != end || s.empty()) return std::nullopt;
  return v;
}

bool contains(const std::vector<std::string>& values, const std::string& v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

// One requirement against a value lookup (present + value), as k8s.io/component-helpers nodeaffinity does.
bool requirement_matches(const NodeSelectorRequirement& r, const std::string* value) {
  if (r.op == "In") return value != nullptr && contains(r.values, *value);
  if (r.op == "NotIn") return value == nullptr || !contains(r.values, *value);
  if (r.op == "Exists") return value != nullptr;
  if (r.op == "DoesNotExist") return value == nullptr;
  if (r.op == "Gt" || r.op == "Lt") {
    if (value == nullptr || r.values.size() != 1) return false;
    auto have = to_int(*value), want = to_int(r.values[0]);
    if (!have || !want) return false;
    return r.op == "Gt" ? *have > *want : *have < *want;
  }
  return false;
}

bool term_matches(const NodeSelectorTerm& term, const PoolNode& node) {
  if (term.match_expressions.empty() && term.match_fields.empty()) return false;
  for (const auto& r : term.match_expressions) {
    auto it = node.labels.find(r.key);
    if (!requirement_matches(r, it == node.labels.end() ? nullptr : &it->second)) return false;
  }
  for (const auto& r : term.match_fields) {
    if (r.key != "metadata.name") return false;
    if (!requirement_matches(r, &node.name)) return false;
  }
  return true;
}

}  // namespace

bool node_selector_matches(const PoolPod& pod, const PoolNode& node) {
  for (const auto& [k, v] : pod.node_selector) {
    auto it = node.labels.find(k);
    if (it == node.labels.end() || it->second != v) return false;
  }
  return true;
}

bool node_affinity_matches(const PoolPod& pod, const PoolNode& node) {
  if (pod.required_affinity.empty()) return true;
  return std::any_of(pod.required_affinity.begin(), pod.required_affinity.end(),
                     [&](const NodeSelectorTerm& t) { return term_matches(t, node); });
}

bool tolerates(const Toleration& t, const Taint& taint) {
  if (!t.effect.empty() && t.effect != taint.effect) return false;
  if (t.op == "Exists") return t.key.empty() || t.key == taint.key;
  if (t.op != "Equal" && !t.op.empty()) return false;
  return t.key == taint.key && t.value == taint.value;
}

const Taint* untolerated_taint(const PoolPod& pod, const PoolNode& node) {
  for (const auto& taint : node.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    bool ok = std::any_of(pod.tolerations.begin(), pod.tolerations.end(),
                          [&](const Toleration& t) { return tolerates(t, taint); });
    if (!ok) return &taint;
  }
  return nullptr;
}

Check first_failed_check(const PoolPod& pod, const PoolNode& node, std::int64_t cpu_used, std::int64_t memory_used,
                         std::string* taint) {
  if (!node_selector_matches(pod, node)) return Check::kNodeSelector;
  if (!node_affinity_matches(pod, node)) return Check::kNodeAffinity;
  if (const Taint* t = untolerated_taint(pod, node)) {
    if (taint != nullptr) *taint = t->key;
    return Check::kTaint;
  }
  // NodeResourcesFit: only a positive request is compared with what is left.
  if (pod.cpu_millis > 0 && pod.cpu_millis > node.cpu_millis - cpu_used) return Check::kCpu;
  if (pod.memory_bytes > 0 && pod.memory_bytes > node.memory_bytes - memory_used) return Check::kMemory;
  return Check::kNone;
}

std::string check_name(Check check, const std::string& taint_key) {
  switch (check) {
    case Check::kNodeSelector: return "node selector";
    case Check::kNodeAffinity: return "node affinity";
    case Check::kTaint: return "taint " + taint_key;
    case Check::kCpu: return "cpu";
    case Check::kMemory: return "memory";
    case Check::kGpu: return "gpu";
    case Check::kGpuModel: return "gpu model";
    case Check::kComputeMode: return "compute mode";
    case Check::kReserve: return "reserve";
    case Check::kNone: break;
  }
  return "";
}

std::string blocker_name(Check check) {
  return check == Check::kTaint ? "taint" : check == Check::kNone ? "none" : check_name(check);
}

}  // namespace kubex::decide::packing
