#include "engine/report_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace kubex::engine {

namespace dr = decide::report;
using nlohmann::json;

double round2(double v) { return std::round(v * 100.0) / 100.0; }
double round3(double v) { return std::round(v * 1000.0) / 1000.0; }

bool has_data(const dr::WindowUsage& u) { return u.queried && (u.sm_p95_gpus || u.memory_max_gpus); }

std::string gpus_or_dash(const std::optional<double>& g) {
  if (!g) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", *g);
  return buf;
}

std::string saved_text(const dr::Totals& t) {
  char buf[64];
  std::snprintf(buf, sizeof buf, " (%.0f%%)", t.saved_percent());
  return decide::format_gpu(t.as_written - t.held) + (t.as_written > 0 ? buf : "");
}

std::string headline(const ReportData& r) {
  const dr::Totals& c = r.summary.cluster;
  std::string out = "GPUs as written " + decide::format_gpu(c.as_written) + " (each template as its user wrote it, "
                    "times the replicas running now), held now " + decide::format_gpu(c.held);
  if (c.as_written > c.held) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.0f%%", c.saved_percent());
    out += ": " + decide::format_gpu(c.as_written - c.held) + " GPUs (" + buf + ") fewer";
  }
  out += ".";
  if (!c.saved.empty()) out += " Saved over the window: " + dr::format_money(c.saved) + ".";
  if (c.idle_workloads > 0) {
    out += "\n" + std::to_string(c.idle_workloads) + " idle workload" + (c.idle_workloads == 1 ? "" : "s") +
           " held " + dr::format_hours(c.idle_gpu_hours) + " GPU-hours" +
           (c.idle_cost.empty() ? "" : " (" + dr::format_money(c.idle_cost) + ")") + " in the window.";
  }
  return out;
}

std::string consolidation_line(const PolicyPlan& p) {
  if (!p.errors.empty()) return p.name + ": invalid (" + p.invalid_reason + "): " + p.errors.front();
  if (p.empty_pool) return p.name + ": no node matches its nodeSelector";
  const auto& plan = p.plan;
  std::string out = p.name + ": " + std::to_string(plan.estimated_reclaimable_gpus) +
                    " GPUs reclaimable now (pool of " + std::to_string(plan.pool_nodes) + " nodes, " +
                    std::to_string(plan.gpu_capacity) + " GPUs, " +
                    decide::packing::format_allocated(plan.gpu_allocated) + " allocated): ";
  // Which of them sit on nodes that are already empty (nothing to drain), and what draining adds.
  const std::vector<std::string> empty = empty_nodes(p);
  std::int64_t empty_gpus = 0;
  for (const auto& n : plan.nodes)
    if (std::find(empty.begin(), empty.end(), n.name) != empty.end()) empty_gpus += n.gpu_capacity;
  if (empty.empty()) {
    out += "no node is empty";
  } else {
    out += std::to_string(empty.size()) + (empty.size() == 1 ? " node is" : " nodes are") + " empty (";
    for (std::size_t i = 0; i < empty.size(); ++i) out += (i ? ", " : "") + empty[i];
    out += ", " + std::to_string(empty_gpus) + " GPUs)";
  }
  out += "; a drain would free " + std::to_string(p.sequence.gpus_freed) + (empty.empty() ? "" : " more");
  if (!p.sequence.steps.empty()) {
    out += " (kubex plan consolidation: drain";
    for (std::size_t i = 0; i < p.sequence.steps.size(); ++i) out += (i ? ", " : " ") + p.sequence.steps[i].node;
    out += ")";
  }
  if (!p.draining_node.empty()) out += "; draining " + p.draining_node + " now";
  return out;
}

std::vector<std::string> empty_nodes(const PolicyPlan& p) {
  std::vector<std::string> out;
  for (const auto& n : p.plan.nodes)
    if (n.gpu_capacity > 0 && n.allocated == 0) out.push_back(n.name);
  return out;
}

json consolidation_entry(const PolicyPlan& p) {
  json j = {{"name", p.name}, {"valid", p.errors.empty()}, {"emptyPool", p.empty_pool}};
  if (!p.errors.empty()) {
    j["errors"] = p.errors;
    return j;
  }
  j["poolNodes"] = p.plan.pool_nodes;
  j["gpuCapacity"] = p.plan.gpu_capacity;
  j["gpuAllocated"] = decide::packing::format_allocated(p.plan.gpu_allocated);
  j["reclaimableNowGPUs"] = p.plan.estimated_reclaimable_gpus;
  j["planFreesGPUs"] = p.sequence.gpus_freed;
  json nodes = json::array();
  for (const auto& s : p.sequence.steps) nodes.push_back(s.node);
  j["planDrains"] = std::move(nodes);
  j["emptyNodes"] = empty_nodes(p);
  j["drainingNode"] = p.draining_node;
  j["line"] = consolidation_line(p);
  return j;
}

std::string drain_line(const CarriedDrain& d) {
  return d.at + " " + d.policy + " drained " + (d.node.empty() ? "a node" : d.node) +
         (d.message.empty() ? "" : ": " + d.message);
}

std::string pods_per_gpu_text(const std::map<int, int>& ppg) {
  if (ppg.empty()) return "no GPU node";
  std::string out;
  for (const auto& [k, n] : ppg) {
    if (!out.empty()) out += ", ";
    out += std::to_string(k) + (k == 1 ? " pod: " : " pods: ") + std::to_string(n) + (n == 1 ? " GPU" : " GPUs");
  }
  return out;
}

}  // namespace kubex::engine
