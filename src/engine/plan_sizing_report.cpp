#include "engine/plan_sizing_report.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>

#include "engine/text_table.h"

namespace kubex::engine {
namespace {

using nlohmann::json;
using decide::sizing::Tally;

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

double hours(const Tally& t) { return t.days * 24.0; }

json tally_json(const Tally& t) {
  return {{"gpu_hours_as_written", t.gpu_hours_as_written},
          {"gpu_hours_held", t.gpu_hours_held},
          {"saved_percent", t.saved_percent()},
          {"over_allocation_percent", t.over_allocation_percent()},
          {"over_allocation_episodes", t.over_allocation_episodes},
          {"resizes_per_container_day", t.resizes_per_container_day()},
          {"samples", t.samples},
          {"over_allocation_samples", t.over_allocation_samples},
          {"resizes", t.resizes},
          {"average_gpus_held", hours(t) > 0 ? t.gpu_hours_held / hours(t) : 0.0}};
}

json with_baselines(json j, const Tally& oracle, const Tally& peak, const Tally& p95) {
  j["baselines"] = {{"oracle_hourly", tally_json(oracle)}, {"static_peak", tally_json(peak)},
                    {"p95_history", tally_json(p95)}};
  return j;
}

// The table's columns for one tally: average held, saved, samples above the allocation, episodes, resizes/day.
std::vector<std::string> cells(const Tally& t) {
  return {fixed(hours(t) > 0 ? t.gpu_hours_held / hours(t) : 0.0, 2), fixed(t.saved_percent(), 1) + "%",
          std::to_string(t.over_allocation_samples) + " (" + fixed(t.over_allocation_percent(), 2) + "%)",
          std::to_string(t.over_allocation_episodes), fixed(t.resizes_per_container_day(), 2)};
}

std::string baseline_line(const char* name, const Tally& t) {
  return std::string(name) + ": saved " + fixed(t.saved_percent(), 1) + "%, samples above allocation " +
         std::to_string(t.over_allocation_samples) + " (" + fixed(t.over_allocation_percent(), 2) + "%), " +
         fixed(t.resizes_per_container_day(), 2) + " resizes/day";
}

}  // namespace

Tally total(const std::vector<SizingRow>& rows, Tally SizingRow::*which) {
  Tally t;
  for (const auto& r : rows) {
    if (r.has_history) t += r.*which;
  }
  return t;
}

json sizing_plan_json(const std::vector<SizingSection>& sections, const std::string& since) {
  json doc = {{"apiVersion", "cli.kubex.ai/v1alpha1"}, {"kind", "SizingPlan"}, {"since", since},
              {"policies", json::array()}};
  for (const auto& s : sections) {
    json p = {{"name", s.name}, {"policy", s.ref}, {"source", s.source}, {"strategy", s.strategy},
              {"workloads", json::array()}};
    if (!s.errors.empty()) p["errors"] = s.errors;
    for (const auto& r : s.rows) {
      json w = {{"namespace", r.ns}, {"kind", r.kind}, {"name", r.name}, {"container", r.container},
                {"gpus_as_written", decide::format_gpu(r.as_written)}, {"history", r.has_history}};
      if (r.has_history) {
        w.update(with_baselines(tally_json(r.kubex), r.oracle_hourly, r.static_peak, r.p95_history));
      }
      p["workloads"].push_back(std::move(w));
    }
    p["total"] = with_baselines(tally_json(total(s.rows, &SizingRow::kubex)), total(s.rows, &SizingRow::oracle_hourly),
                                total(s.rows, &SizingRow::static_peak), total(s.rows, &SizingRow::p95_history));
    doc["policies"].push_back(std::move(p));
  }
  return doc;
}

void print_sizing_plan(const SizingSection& s, const std::string& since, std::ostream& out) {
  out << s.ref << " (" << (s.source == "cluster" ? "in the cluster" : s.source) << "), strategy "
      << (s.strategy.empty() ? "kai-gpu-sharing (the guide's starter)" : s.strategy) << ", replayed over the last "
      << since << "\n";
  if (!s.errors.empty()) {
    out << "  invalid, not replayed:\n";
    for (const auto& e : s.errors) out << "    " << e << "\n";
    return;
  }
  if (s.rows.empty()) {
    out << "  wins no workload that holds a GPU\n";
    return;
  }
  std::vector<std::vector<std::string>> rows = {
      {"WORKLOAD", "CONTAINER", "WRITTEN", "HELD(AVG)", "SAVED", "ABOVE-ALLOCATION", "EPISODES", "RESIZES/DAY"}};
  for (const auto& r : s.rows) {
    std::vector<std::string> row = {r.ns + "/" + r.kind + "/" + r.name, r.container, decide::format_gpu(r.as_written)};
    if (r.has_history) {
      for (auto& c : cells(r.kubex)) row.push_back(std::move(c));
    } else {
      row.push_back("no history");
    }
    rows.push_back(std::move(row));
  }
  std::vector<std::string> last = {"TOTAL", "", ""};
  for (auto& c : cells(total(s.rows, &SizingRow::kubex))) last.push_back(std::move(c));
  rows.push_back(std::move(last));
  print_table(out, rows, "  ");
  out << "  the same samples, sized by:\n";
  out << "    " << baseline_line("an hourly oracle (each hour's peak x 1.2)", total(s.rows, &SizingRow::oracle_hourly))
      << "\n";
  out << "    " << baseline_line("the whole window's peak x 1.2", total(s.rows, &SizingRow::static_peak)) << "\n";
  out << "    " << baseline_line("p95 of history so far x 1.2", total(s.rows, &SizingRow::p95_history)) << "\n";
}

}  // namespace kubex::engine
