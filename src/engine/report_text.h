// Phrases `kubex report`'s table, JSON and HTML share (report_render.cpp, report_html.cpp). Internal to src/engine.
#pragma once

#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "decide/report/report.h"
#include "engine/report_model.h"

namespace kubex::engine {

double round2(double v);
double round3(double v);
bool has_data(const decide::report::WindowUsage& u);  // Prometheus answered and some signal has samples
std::string gpus_or_dash(const std::optional<double>& g);  // "0.12" or "-"
// "2.55 (51%)": GPUs saved and the share of as written; "-0.2 (-10%)" when more is held than written.
std::string saved_text(const decide::report::Totals& t);
// The report's first line: as written vs held for the cluster, the saving, the idle count.
std::string headline(const ReportData& r);
// One consolidation policy: GPUs reclaimable now (CON-11) and what `kubex plan consolidation` would free.
std::string consolidation_line(const PolicyPlan& p);
nlohmann::json consolidation_entry(const PolicyPlan& p);
// The pool's nodes with GPUs and no GPU allocation: reclaimable without a drain.
std::vector<std::string> empty_nodes(const PolicyPlan& p);
// "2026-12-05T08:10:00Z gpu-consolidation drained g-node-3", one carried-out drain.
std::string drain_line(const CarriedDrain& d);
// "0 pods: 2 GPUs, 1 pod: 3 GPUs, 2 pods: 1 GPU".
std::string pods_per_gpu_text(const std::map<int, int>& pods_per_gpu);

}  // namespace kubex::engine
