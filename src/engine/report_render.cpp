// `kubex report`'s table and JSON (RPT-1): the same numbers, so that `-o json` matches the table.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>

#include "common/time_format.h"
#include "engine/report_model.h"
#include "engine/report_text.h"
#include "engine/text_table.h"

namespace kubex::engine {
namespace {

using nlohmann::json;
namespace dr = decide::report;

json usage_json(const dr::WindowUsage& u, bool with_data) {
  json j = json::object();
  if (!with_data) {
    j["data"] = false;
    return j;
  }
  j["data"] = true;
  j["smP95Gpus"] = u.sm_p95_gpus ? json(round3(*u.sm_p95_gpus)) : json();
  j["memoryMaxGpus"] = u.memory_max_gpus ? json(round3(*u.memory_max_gpus)) : json();
  j["spanSeconds"] = u.span ? json(u.span->count()) : json();
  return j;
}

json money_json(const dr::Money& m) {
  json j = json::object();
  for (const auto& [c, v] : m) j[c] = round2(v);
  return j;
}

json totals_json(const dr::Totals& t) {
  return {{"workloads", t.workloads},
          {"idleWorkloads", t.idle_workloads},
          {"gpusAsWritten", decide::format_gpu(t.as_written)},
          {"gpusHeld", decide::format_gpu(t.held)},
          {"gpusSaved", decide::format_gpu(t.as_written - t.held)},
          {"savedPercent", round2(t.saved_percent())},
          {"gpuHoursSaved", round2(t.gpu_hours_saved)},
          {"idleGpuHours", round2(t.idle_gpu_hours)},
          {"costSaved", money_json(t.saved)},
          {"idleCost", money_json(t.idle_cost)}};
}

}  // namespace

json report_json(const ReportData& r) {
  json j = {{"apiVersion", "cli.kubex.ai/v1alpha1"},
            {"kind", "Report"},
            {"cluster", r.cluster},
            {"generatedAt", common::format_rfc3339(r.now)},
            {"since", r.since},
            {"windowSeconds", r.window.count()},
            {"prometheus", {{"url", r.prometheus_url}, {"error", r.prometheus_error}}},
            {"idleRule",
             {{"smPercent", r.idle.sm_percent},
              {"memoryPercent", r.idle.memory_percent},
              {"minimumGpus", round2(static_cast<double>(r.idle.minimum_gpus_milli) / 1000.0)}}},
            {"priced", r.priced}};
  json ws = json::array();
  for (const auto& w : r.summary.workloads) {
    json row = {{"namespace", w.ns},
                {"owner", w.kind + "/" + w.name},
                {"managed", w.managed},
                {"replicas", w.replicas},
                {"gpusAsWritten", decide::format_gpu(w.as_written)},
                {"gpusHeld", decide::format_gpu(w.held)},
                {"gpusSaved", decide::format_gpu(w.saved_gpus())},
                {"usage", usage_json(w.usage, has_data(w.usage))},
                {"idle", w.idle},
                {"idleReason", w.idle_reason},
                {"hours", round2(w.hours)},
                {"gpuHoursSaved", round2(w.gpu_hours_saved)},
                {"gpuHoursHeld", round2(w.gpu_hours_held)}};
    if (w.priced) {
      row["costSaved"] = money_json(w.saved);
      row["idleCost"] = money_json(w.idle_cost);
    }
    ws.push_back(std::move(row));
  }
  j["workloads"] = std::move(ws);
  json ns = json::array();
  for (const auto& t : r.summary.namespaces) {
    json n = totals_json(t);
    n["namespace"] = t.ns;
    ns.push_back(std::move(n));
  }
  j["totals"] = {{"cluster", totals_json(r.summary.cluster)}, {"namespaces", std::move(ns)}};
  json cons = json::array();
  for (const auto& p : r.consolidation) cons.push_back(consolidation_entry(p));
  json drains = json::array();
  for (const auto& d : r.drains)
    drains.push_back({{"policy", d.policy}, {"node", d.node}, {"at", d.at}, {"message", d.message}});
  j["consolidation"] = {{"policies", std::move(cons)}, {"error", r.consolidation_error}, {"drains", std::move(drains)}};
  json ppg = json::object();
  for (const auto& [k, n] : r.pods_per_gpu) ppg[std::to_string(k)] = n;
  j["podsPerGpu"] = std::move(ppg);
  json rs = json::array();
  for (const auto& e : r.resizes) {
    rs.push_back({{"namespace", e.ns}, {"owner", e.workload}, {"pod", e.pod}, {"at", e.at}, {"message", e.message}});
  }
  j["resizesByEviction"] = {{"events", std::move(rs)}, {"error", r.events_error}};
  return j;
}

void print_report_table(const ReportData& r, std::ostream& out) {
  out << "kubex report: " << (r.cluster.empty() ? "cluster" : r.cluster) << ", " << common::format_rfc3339(r.now)
      << ", last " << r.since << "\n";
  out << "Prometheus " << r.prometheus_url
      << (r.prometheus_error.empty() ? "" : ": no data (" + r.prometheus_error + ")") << "\n\n";

  const dr::Totals& c = r.summary.cluster;
  out << headline(r) << "\n\n";

  std::vector<std::vector<std::string>> rows = {{"NAMESPACE", "WORKLOAD", "MANAGED", "PODS", "AS WRITTEN", "HELD",
                                                 "SAVED", "SM P95", "MEM MAX", "IDLE", "GPU-H SAVED"}};
  if (r.priced) {
    rows[0].push_back("COST SAVED");
    rows[0].push_back("IDLE COST");
  }
  for (const auto& w : r.summary.workloads) {
    const bool data = has_data(w.usage);
    std::vector<std::string> row = {w.ns,
                                    w.kind + "/" + w.name,
                                    w.managed ? "yes" : "no",
                                    std::to_string(w.replicas),
                                    decide::format_gpu(w.as_written),
                                    decide::format_gpu(w.held),
                                    decide::format_gpu(w.saved_gpus()),
                                    data ? gpus_or_dash(w.usage.sm_p95_gpus) : "no data",
                                    data ? gpus_or_dash(w.usage.memory_max_gpus) : "no data",
                                    w.idle ? "IDLE" : "-",
                                    dr::format_hours(w.gpu_hours_saved)};
    if (r.priced) {
      row.push_back(w.priced ? dr::format_money(w.saved) : "-");
      row.push_back(w.priced && w.idle ? dr::format_money(w.idle_cost) : "-");
    }
    rows.push_back(std::move(row));
  }
  out << "Workloads holding or asking for GPUs (GPUs; usage is the busiest pod's over the window):\n";
  if (r.summary.workloads.empty()) {
    out << "  none\n";
  } else {
    print_table(out, rows, "  ");
  }

  out << "\nIdle workloads (RPT-2: p95 SM < " << r.idle.sm_percent << "% of a GPU and memory < "
      << r.idle.memory_percent << "% of what they hold, over at least 1h of data):\n";
  bool any_idle = false;
  for (const auto& w : r.summary.workloads) {
    if (!w.idle) continue;
    any_idle = true;
    out << "  " << w.ns << " " << w.kind << "/" << w.name << ": holds " << decide::format_gpu(w.held) << " GPU, "
        << dr::format_hours(w.gpu_hours_held) << " GPU-hours in the window"
        << (w.priced ? ", " + dr::format_money(w.idle_cost) : "") << "; " << w.idle_reason << "\n";
  }
  if (!any_idle) out << "  none\n";

  rows = {{"NAMESPACE", "WORKLOADS", "IDLE", "AS WRITTEN", "HELD", "SAVED", "GPU-H SAVED", "IDLE GPU-H"}};
  if (r.priced) {
    rows[0].push_back("COST SAVED");
    rows[0].push_back("IDLE COST");
  }
  auto totals_row = [&](const dr::Totals& t, const std::string& name) {
    std::vector<std::string> row = {name,
                                    std::to_string(t.workloads),
                                    std::to_string(t.idle_workloads),
                                    decide::format_gpu(t.as_written),
                                    decide::format_gpu(t.held),
                                    saved_text(t),
                                    dr::format_hours(t.gpu_hours_saved),
                                    dr::format_hours(t.idle_gpu_hours)};
    if (r.priced) {
      row.push_back(t.saved.empty() ? "-" : dr::format_money(t.saved));
      row.push_back(t.idle_cost.empty() ? "-" : dr::format_money(t.idle_cost));
    }
    rows.push_back(std::move(row));
  };
  for (const auto& t : r.summary.namespaces) totals_row(t, t.ns);
  totals_row(c, "(cluster)");
  out << "\nTotals:\n";
  print_table(out, rows, "  ");

  out << "\nConsolidation (per GpuConsolidationPolicy):\n";
  if (!r.consolidation_error.empty()) out << "  cannot be read: " << r.consolidation_error << "\n";
  if (r.consolidation.empty() && r.consolidation_error.empty()) out << "  no GpuConsolidationPolicy\n";
  for (const auto& p : r.consolidation) out << "  " << consolidation_line(p) << "\n";
  out << "  drains kubex carried out in the window (DrainCompleted events, status.lastDrainedNode):";
  if (r.drains.empty()) out << " none";
  out << "\n";
  for (const auto& d : r.drains) out << "    " << drain_line(d) << "\n";

  out << "\nPods per GPU: " << pods_per_gpu_text(r.pods_per_gpu) << "\n";

  out << "\nResizes applied by eviction (kubex's PolicyEvaluationEvictResize events; sizes given at admission are "
         "not listed):\n";
  if (!r.events_error.empty()) out << "  events cannot be read: " << r.events_error << "\n";
  if (r.resizes.empty() && r.events_error.empty()) out << "  none\n";
  for (const auto& e : r.resizes) {
    out << "  " << e.at << " " << e.ns << " " << (e.workload.empty() ? "?" : e.workload) << " pod " << e.pod << ": "
        << e.message << "\n";
  }
}

}  // namespace kubex::engine
