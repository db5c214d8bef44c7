#include "engine/plan_report.h"

#include <algorithm>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "engine/text_table.h"

namespace kubex::engine {
namespace {

using nlohmann::json;
namespace pk = decide::packing;

std::string gpus_text(const std::vector<decide::Hundredths>& gpus) {
  std::string s = "[";
  for (std::size_t i = 0; i < gpus.size(); ++i) s += (i ? " " : "") + decide::format_gpu(gpus[i]);
  return s + "]";
}

std::string index_text(const std::vector<int>& gpus) {
  std::string s;
  for (std::size_t i = 0; i < gpus.size(); ++i) s += (i ? "," : "") + std::to_string(gpus[i]);
  return s;
}

json placements_json(const std::vector<pk::Placement>& ps) {
  json a = json::array();
  for (const auto& p : ps)
    a.push_back({{"pod", p.ns + "/" + p.name}, {"size", decide::format_gpu(p.size)}, {"to", p.to}, {"gpus", p.gpus}});
  return a;
}

std::string outcome(const PolicyPlan& p) {
  if (!p.errors.empty()) return p.invalid_reason;
  if (p.empty_pool) return "NoMatchingNodeSelector";
  return p.plan.first_feasible() != nullptr ? "WouldDrain" : "NoCandidate";
}

std::string message(const PolicyPlan& p) {
  if (!p.errors.empty()) {
    std::string m;
    for (const auto& e : p.errors) m += (m.empty() ? "" : "; ") + e;
    return m;
  }
  if (p.empty_pool) return "no node matches spec.nodeSelector";
  if (const auto* c = p.plan.first_feasible())
    return "would drain " + c->node + " (" + pk::format_percent(c->utilization_centi_percent) + ")";
  return p.plan.message;
}

std::string moves_text(const std::vector<pk::Placement>& ps) {
  std::string s;
  for (const auto& p : ps)
    s += (s.empty() ? "" : ", ") + p.ns + "/" + p.name + " (" + decide::format_gpu(p.size) + ") -> " + p.to +
         " gpu " + index_text(p.gpus);
  return s;
}

}  // namespace

json policy_plan_json(const PolicyPlan& p) {
  json j = {{"name", p.name},
            {"source", p.source},
            {"thresholdPercent", p.threshold_percent},
            {"valid", p.errors.empty()},
            {"errors", p.errors},
            {"outcome", outcome(p)},
            {"message", message(p)},
            {"drainingNode", p.draining_node}};
  if (!p.errors.empty()) return j;
  const pk::Plan& plan = p.plan;
  json nodes = json::array();
  for (const auto& n : plan.nodes) {
    json gpus = json::array();
    for (auto g : n.gpus) gpus.push_back(decide::format_gpu(g));
    nodes.push_back({{"name", n.name},
                     {"gpuCapacity", n.gpu_capacity},
                     {"allocated", pk::format_allocated(n.allocated)},
                     {"utilizationPercent", pk::format_percent(n.utilization_centi_percent())},
                     {"gpus", gpus},
                     {"overCapacity", n.over_capacity},
                     {"destination", n.destination},
                     {"notDestination", n.not_destination},
                     {"gpuProduct", n.product},
                     {"gpuCap", decide::format_gpu(n.cap)}});
  }
  json models = json::array();
  for (const auto& m : plan.gpu_models) models.push_back({{"product", m.product}, {"nodes", m.nodes}});
  j["pool"] = {{"nodes", plan.pool_nodes},
               {"gpuCapacity", plan.gpu_capacity},
               {"gpuAllocated", pk::format_allocated(plan.gpu_allocated)},
               {"estimatedReclaimableGPUs", plan.estimated_reclaimable_gpus},
               {"gpuModels", models},
               {"nodeUsage", nodes}};
  json cands = json::array();
  for (const auto& c : plan.candidates)
    cands.push_back({{"node", c.node},
                     {"utilizationPercent", pk::format_percent(c.utilization_centi_percent)},
                     {"candidate", c.candidate},
                     {"feasible", c.feasible},
                     {"reason", c.reason},
                     {"result", c.result},
                     {"blocker", c.blocker},
                     {"placements", placements_json(c.placements)}});
  j["candidates"] = cands;
  json seq = json::array();
  for (const auto& s : p.sequence.steps)
    seq.push_back({{"node", s.node},
                   {"utilizationPercent", pk::format_percent(s.utilization_centi_percent)},
                   {"placements", placements_json(s.placements)}});
  j["drainSequence"] = seq;
  j["afterSequence"] = {{"message", p.sequence.final_plan.message}};
  j["reclaimable"] = {{"gpuCapacity", plan.gpu_capacity},
                      {"lowerBoundGPUs", p.sequence.lower_bound_gpus},
                      {"gpusFreed", p.sequence.gpus_freed},
                      {"gpusInUseAfter", p.sequence.gpus_in_use_after},
                      {"estimatedReclaimableGPUs", plan.estimated_reclaimable_gpus}};
  return j;
}

void print_policy_plan(const PolicyPlan& p, std::ostream& out) {
  out << "GpuConsolidationPolicy " << p.name << " (" << p.source << ", threshold " << p.threshold_percent
      << "%)\n";
  if (!p.errors.empty()) {
    out << "  " << p.invalid_reason << ":\n";
    for (const auto& e : p.errors) out << "    " << e << "\n";
    return;
  }
  if (p.empty_pool) {
    out << "  NoMatchingNodeSelector: no node matches spec.nodeSelector\n";
    return;
  }
  const pk::Plan& plan = p.plan;
  if (!p.draining_node.empty())
    out << "  Draining " << p.draining_node << " now: the controller looks at no new candidate until it ends (CON-9)\n";
  out << "  Pool: " << plan.pool_nodes << " nodes, " << plan.gpu_capacity << " GPUs, "
      << pk::format_allocated(plan.gpu_allocated) << " allocated, estimatedReclaimableGPUs "
      << plan.estimated_reclaimable_gpus << "\n";
  if (plan.gpu_models.size() > 1) {  // CON-5a
    out << "  GPU models:";
    for (std::size_t k = 0; k < plan.gpu_models.size(); ++k)
      out << (k ? ", " : " ") << (plan.gpu_models[k].product.empty() ? "unlabelled" : plan.gpu_models[k].product)
          << " (" << plan.gpu_models[k].nodes << " nodes)";
    out << "; drains stay within one model\n";
  }
  std::vector<std::vector<std::string>> rows = {
      {"NODE", "GPUS", "ALLOCATED", "UTILIZATION", "PER GPU", "CAP", "MODEL", "DESTINATION"}};
  for (const auto& n : plan.nodes)
    rows.push_back({n.name, std::to_string(n.gpu_capacity), pk::format_allocated(n.allocated),
                    pk::format_percent(n.utilization_centi_percent()), gpus_text(n.gpus), decide::format_gpu(n.cap),
                    n.product.empty() ? "-" : n.product, n.destination ? "yes" : "no (" + n.not_destination + ")"});
  print_table(out, rows, "    ");
  out << "  Candidates (lowest utilization first):\n";
  rows = {{"#", "NODE", "UTILIZATION", "BLOCKER", "RESULT"}};
  int i = 0;
  for (const auto& c : plan.candidates) {
    std::string result = !c.candidate ? "not a candidate: " + c.reason
                         : c.feasible ? "feasible: " + moves_text(c.placements)
                                      : c.reason;
    rows.push_back({c.candidate ? std::to_string(++i) : "-", c.node, pk::format_percent(c.utilization_centi_percent),
                    c.blocker.empty() || c.blocker == "none" ? "-" : c.blocker, result});
  }
  print_table(out, rows, "    ");
  out << "  Drain sequence (each drain assumed to succeed):\n";
  if (p.sequence.steps.empty()) out << "    none\n";
  i = 0;
  for (const auto& s : p.sequence.steps)
    out << "    " << ++i << ". " << s.node << " (" << pk::format_percent(s.utilization_centi_percent)
        << "): " << moves_text(s.placements) << "\n";
  out << "    then: " << (p.sequence.final_plan.message.empty() ? "stopped" : "NoCandidate: " + p.sequence.final_plan.message)
      << "\n";
  out << "  GPUs: " << plan.gpu_capacity << " in the pool, " << p.sequence.gpus_in_use_after
      << " in use after the sequence (" << p.sequence.gpus_freed << " freed); lower bound ⌈Σ allocations⌉ = "
      << p.sequence.lower_bound_gpus << " (at most " << plan.estimated_reclaimable_gpus << " reclaimable)\n";
}

}  // namespace kubex::engine
