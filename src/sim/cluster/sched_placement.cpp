#include "sim/cluster/sched_placement.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <utility>

namespace kubex::sim::cluster::sched {

using nlohmann::json;

namespace {

constexpr const char* kNotReadyTaint = "node.kubernetes.io/not-ready";
constexpr const char* kUnschedulableTaint = "node.kubernetes.io/unschedulable";
constexpr const char* kReasonUnschedulable = "node(s) were unschedulable";
constexpr const char* kReasonAffinity = "node(s) didn't match Pod's node affinity/selector";
constexpr const char* kReasonKaiGpus = "node(s) didn't have enough resources: GPUs";
// kube-scheduler scores pods without requests as if they asked for this much (NonZeroRequested).
constexpr std::int64_t kDefaultMilliCpu = 100;
constexpr std::int64_t kDefaultMemory = 200LL * 1024 * 1024;

std::string str_at(const json& obj, const char* key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

std::vector<SelectorRequirement> parse_requirements(const json& list) {
  std::vector<SelectorRequirement> out;
  if (!list.is_array()) return out;
  for (const auto& r : list) {
    if (!r.is_object()) continue;
    SelectorRequirement req{str_at(r, "key"), str_at(r, "operator"), {}};
    if (auto it = r.find("values"); it != r.end() && it->is_array()) {
      for (const auto& v : *it) {
        if (v.is_string()) req.values.push_back(v.get<std::string>());
      }
    }
    out.push_back(std::move(req));
  }
  return out;
}

std::optional<std::int64_t> parse_int(const std::string& s) {
  if (s.empty()) return std::nullopt;
  std::size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (i == s.size()) return std::nullopt;
  std::int64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    if (v > (INT64_MAX - (s[i] - '0')) / 10) return std::nullopt;
    v = v * 10 + (s[i] - '0');
  }
  return s[0] == '-' ? -v : v;
}

bool matches_term(const NodeSelectorTerm& term, const PlacementNode& node) {
  if (term.match_expressions.empty() && term.match_fields.empty()) return false;  // an empty term matches nothing
  for (const auto& r : term.match_expressions) {
    if (!matches_requirement(r, node.labels)) return false;
  }
  for (const auto& r : term.match_fields) {
    if (r.key != "metadata.name" || (r.op != "In" && r.op != "NotIn")) return false;
    if (!matches_requirement(r, {{"metadata.name", node.name}})) return false;
  }
  return true;
}

std::int64_t free_gpus(const PlacementNode& node, const NodeUse& use) {
  return std::max<std::int64_t>(0, node.gpus - use.gpus_held());
}

// KAI binpack on one node: the fullest group that still fits the fraction (first in GPU order on ties);
// nullptr with `fresh` set when a free GPU can take a new group; nullptr and !fresh when nothing fits.
const GpuGroupUse* best_group(int fraction, const std::string& mode, const PlacementNode& node, const NodeUse& use,
                              bool& fresh) {
  const GpuGroupUse* best = nullptr;
  for (const auto& g : use.groups) {
    if (g.dying || g.hundredths + fraction > 100) continue;
    if (g.members > 0 && g.compute_mode != mode) continue;  // CON-5b: compute modes never share a GPU
    if (!best || g.hundredths > best->hundredths) best = &g;
  }
  fresh = !best && free_gpus(node, use) > 0;
  return best;
}

std::int64_t free_percent(std::int64_t allocatable, std::int64_t used) {
  if (allocatable <= 0) return 0;
  return std::max<std::int64_t>(0, (allocatable - used) * 100 / allocatable);
}

// default-scheduler's score: LeastAllocated (cpu, memory) and TaintToleration (PreferNoSchedule).
std::int64_t least_allocated_score(const PlacementPod& pod, const PlacementNode& node, const NodeUse& use) {
  std::int64_t cpu = pod.cpu_milli > 0 ? pod.cpu_milli : kDefaultMilliCpu;
  std::int64_t mem = pod.memory_bytes > 0 ? pod.memory_bytes : kDefaultMemory;
  std::int64_t score = (free_percent(node.cpu_milli, use.nonzero_cpu_milli + cpu) +
                        free_percent(node.memory_bytes, use.nonzero_memory_bytes + mem)) /
                       2;
  return score - 50 * untolerated_prefer_no_schedule(pod, node);
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------
// parsing

std::vector<Toleration> parse_tolerations(const json& list) {
  std::vector<Toleration> out;
  if (!list.is_array()) return out;
  for (const auto& t : list) {
    if (!t.is_object()) continue;
    Toleration tol{str_at(t, "key"), str_at(t, "operator"), str_at(t, "value"), str_at(t, "effect")};
    if (tol.op.empty()) tol.op = "Equal";
    out.push_back(std::move(tol));
  }
  return out;
}

std::vector<Taint> parse_taints(const json& list) {
  std::vector<Taint> out;
  if (!list.is_array()) return out;
  for (const auto& t : list) {
    if (t.is_object()) out.push_back({str_at(t, "key"), str_at(t, "value"), str_at(t, "effect")});
  }
  return out;
}

void parse_required_node_affinity(const json& affinity, PlacementPod& pod) {
  if (!affinity.is_object()) return;
  auto na = affinity.find("nodeAffinity");
  if (na == affinity.end() || !na->is_object()) return;
  auto req = na->find("requiredDuringSchedulingIgnoredDuringExecution");
  if (req == na->end() || !req->is_object()) return;
  pod.has_required_affinity = true;
  auto terms = req->find("nodeSelectorTerms");
  if (terms == req->end() || !terms->is_array()) return;
  for (const auto& t : *terms) {
    if (!t.is_object()) continue;
    NodeSelectorTerm term;
    if (auto e = t.find("matchExpressions"); e != t.end()) term.match_expressions = parse_requirements(*e);
    if (auto f = t.find("matchFields"); f != t.end()) term.match_fields = parse_requirements(*f);
    pod.required_terms.push_back(std::move(term));
  }
}

int fraction_hundredths(double fraction) {
  if (!(fraction > 0)) return 0;
  auto h = static_cast<long long>(std::llround(fraction * 100));
  return static_cast<int>(std::clamp<long long>(h, 1, 100));
}

// ---------------------------------------------------------------------------------------------------------
// filters

bool tolerates(const Toleration& t, const Taint& taint) {
  if (!t.effect.empty() && t.effect != taint.effect) return false;
  if (!t.key.empty() && t.key != taint.key) return false;
  if (t.op == "Exists") return true;
  if (t.op == "Equal") return t.value == taint.value;
  return false;
}

namespace {

const Taint kNotReady{kNotReadyTaint, "", "NoSchedule"};
const Taint kCordon{kUnschedulableTaint, "", "NoSchedule"};

bool tolerated(const PlacementPod& pod, const Taint& taint) {
  return std::any_of(pod.tolerations.begin(), pod.tolerations.end(),
                     [&](const Toleration& t) { return tolerates(t, taint); });
}

// The first NoSchedule/NoExecute taint the pod does not tolerate, without copying (nullptr: none).
const Taint* first_untolerated(const PlacementPod& pod, const PlacementNode& node) {
  if (!node.ready && !tolerated(pod, kNotReady)) return &kNotReady;
  for (const auto& taint : node.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    if (!tolerated(pod, taint)) return &taint;
  }
  return nullptr;
}

enum class Misfit { kNone, kUnschedulable, kTaint, kAffinity, kResources };

// Allocation-free feasibility check in kube-scheduler's filter order (the hot path of every decision).
Misfit first_misfit(const PlacementPod& pod, const PlacementNode& node, const NodeUse& use, Strategy strategy,
                    const Taint** taint) {
  if (node.unschedulable && !tolerated(pod, kCordon)) return Misfit::kUnschedulable;
  if (const Taint* t = first_untolerated(pod, node)) {
    if (taint) *taint = t;
    return Misfit::kTaint;
  }
  if (!matches_node_affinity(pod, node)) return Misfit::kAffinity;
  if (use.pods + 1 > node.pods) return Misfit::kResources;
  if (pod.cpu_milli > 0 && use.cpu_milli + pod.cpu_milli > node.cpu_milli) return Misfit::kResources;
  if (pod.memory_bytes > 0 && use.memory_bytes + pod.memory_bytes > node.memory_bytes) return Misfit::kResources;
  if (pod.gpus > 0 && free_gpus(node, use) < pod.gpus) return Misfit::kResources;
  if (strategy == Strategy::kKai && pod.fraction > 0 && pod.gpus == 0) {
    bool fresh = false;
    if (!best_group(pod.fraction, pod.compute_mode, node, use, fresh) && !fresh) return Misfit::kResources;
  }
  return Misfit::kNone;
}

}  // namespace

std::optional<Taint> untolerated_taint(const PlacementPod& pod, const PlacementNode& node) {
  const Taint* t = first_untolerated(pod, node);
  if (!t) return std::nullopt;
  return *t;
}

int untolerated_prefer_no_schedule(const PlacementPod& pod, const PlacementNode& node) {
  int n = 0;
  for (const auto& taint : node.taints) {
    if (taint.effect != "PreferNoSchedule") continue;
    bool ok = std::any_of(pod.tolerations.begin(), pod.tolerations.end(),
                          [&](const Toleration& t) { return tolerates(t, taint); });
    if (!ok) ++n;
  }
  return n;
}

bool matches_requirement(const SelectorRequirement& r, const std::map<std::string, std::string>& labels) {
  auto it = labels.find(r.key);
  bool has = it != labels.end();
  auto in_values = [&] { return has && std::find(r.values.begin(), r.values.end(), it->second) != r.values.end(); };
  if (r.op == "In") return in_values();
  if (r.op == "NotIn") return !in_values();
  if (r.op == "Exists") return has;
  if (r.op == "DoesNotExist") return !has;
  if (r.op == "Gt" || r.op == "Lt") {
    if (!has || r.values.size() != 1) return false;
    auto label = parse_int(it->second), bound = parse_int(r.values[0]);
    if (!label || !bound) return false;
    return r.op == "Gt" ? *label > *bound : *label < *bound;
  }
  return false;
}

bool matches_node_affinity(const PlacementPod& pod, const PlacementNode& node) {
  for (const auto& [k, v] : pod.node_selector) {
    auto it = node.labels.find(k);
    if (it == node.labels.end() || it->second != v) return false;
  }
  if (!pod.has_required_affinity) return true;
  return std::any_of(pod.required_terms.begin(), pod.required_terms.end(),
                     [&](const NodeSelectorTerm& t) { return matches_term(t, node); });
}

std::optional<std::string> fraction_slot(int fraction, const PlacementNode& node, const NodeUse& use,
                                         const std::string& compute_mode) {
  bool fresh = false;
  if (const GpuGroupUse* g = best_group(fraction, compute_mode, node, use, fresh)) return g->id;
  if (fresh) return std::string();
  return std::nullopt;
}

std::vector<std::string> filter_node(const PlacementPod& pod, const PlacementNode& node, const NodeUse& use,
                                     Strategy strategy) {
  const Taint* taint = nullptr;
  switch (first_misfit(pod, node, use, strategy, &taint)) {
    case Misfit::kNone:
      return {};
    case Misfit::kUnschedulable:
      return {kReasonUnschedulable};
    case Misfit::kTaint:
      return {"node(s) had untolerated taint {" + taint->key + ": " + taint->value + "}"};
    case Misfit::kAffinity:
      return {kReasonAffinity};
    case Misfit::kResources:
      break;
  }
  std::vector<std::string> out;
  if (use.pods + 1 > node.pods) out.emplace_back("Too many pods");
  if (pod.cpu_milli > 0 && use.cpu_milli + pod.cpu_milli > node.cpu_milli) out.emplace_back("Insufficient cpu");
  if (pod.memory_bytes > 0 && use.memory_bytes + pod.memory_bytes > node.memory_bytes) {
    out.emplace_back("Insufficient memory");
  }
  if (pod.gpus > 0 && free_gpus(node, use) < pod.gpus) {
    out.emplace_back(strategy == Strategy::kKai ? kReasonKaiGpus : "Insufficient nvidia.com/gpu");
  } else if (strategy == Strategy::kKai && pod.fraction > 0 && pod.gpus == 0 &&
             !fraction_slot(pod.fraction, node, use, pod.compute_mode)) {
    out.emplace_back(kReasonKaiGpus);
  }
  return out;
}

std::string unschedulable_message(std::size_t total_nodes, const std::map<std::string, int>& reasons) {
  if (total_nodes == 0) return "no nodes available to schedule pods";
  std::vector<std::string> parts;
  for (const auto& [reason, count] : reasons) parts.push_back(std::to_string(count) + " " + reason);
  std::sort(parts.begin(), parts.end());
  std::string msg = "0/" + std::to_string(total_nodes) + " nodes are available: ";
  for (std::size_t i = 0; i < parts.size(); ++i) msg += (i ? ", " : "") + parts[i];
  return msg + ".";
}

// ---------------------------------------------------------------------------------------------------------
// choice

Decision place(const PlacementPod& pod, const std::vector<NodeSlot>& nodes, Strategy strategy) {
  Decision best;
  // Lower keys win: (a, b) then node name. The KAI keys are the order of KAI v0.13's summed node scores (SIM-9):
  // gpusharingorder +1000 for a node with a shared GPU group the fraction fits in (flat: how full the group is does
  // not matter), resourcetype +10 for a CPU-only pod on a node without GPUs, then nodeplacement binpack (0..9, fewer
  // free whole GPUs, or free millicores for a CPU-only pod, scores higher), then the node name (session.go sorts
  // equal scores by name). nodeavailability's +100 goes to every node here (nothing is releasing).
  using Key = std::pair<std::int64_t, std::int64_t>;
  std::optional<Key> best_key;
  const std::string* best_name = nullptr;
  const GpuGroupUse* best_group_ptr = nullptr;
  bool best_new_group = false;
  for (const auto& slot : nodes) {
    if (!slot.node || !slot.use) continue;
    const PlacementNode& node = *slot.node;
    const NodeUse& use = *slot.use;
    if (first_misfit(pod, node, use, strategy, nullptr) != Misfit::kNone) continue;
    Key key;
    bool new_group = false;
    const GpuGroupUse* g = nullptr;
    if (strategy == Strategy::kKai && pod.fraction > 0 && pod.gpus == 0) {
      // On the chosen node the fraction joins the fullest group it fits in (gpupack), a new GPU only without one.
      bool fresh = false;
      g = best_group(pod.fraction, pod.compute_mode, node, use, fresh);
      new_group = !g;
      key = {new_group ? 1 : 0, free_gpus(node, use)};
    } else if (strategy == Strategy::kKai && pod.gpus > 0) {
      key = {0, free_gpus(node, use)};
    } else if (strategy == Strategy::kKai) {
      // (KAI gives a node without allocatable CPU binpack 0; here it ranks as full. It only fits pods asking no CPU.)
      key = {node.gpus > 0 ? 1 : 0, std::max<std::int64_t>(0, node.cpu_milli - use.cpu_milli)};
    } else {
      key = {-least_allocated_score(pod, node, use), 0};
    }
    // Equal keys: the first node in name order wins (slots come in name order; compare names to be sure).
    if (!best_key || key < *best_key || (key == *best_key && node.name < *best_name)) {
      best_key = key;
      best_name = &node.name;
      best_group_ptr = g;
      best_new_group = new_group;
    }
  }
  if (best_key) {
    best.scheduled = true;
    best.node = *best_name;
    if (best_group_ptr) best.group = best_group_ptr->id;
    best.new_group = best_new_group;
    return best;
  }
  // Nothing fits: a second pass collects kube-style reasons (strings only on this slow path).
  std::map<std::string, int> reasons;
  for (const auto& slot : nodes) {
    if (!slot.node || !slot.use) continue;
    for (auto& w : filter_node(pod, *slot.node, *slot.use, strategy)) ++reasons[w];
  }
  Decision out;
  out.message = unschedulable_message(nodes.size(), reasons);
  return out;
}

}  // namespace kubex::sim::cluster::sched
