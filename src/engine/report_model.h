// One `kubex report` (report_cmd.h) as the three renderers read it: the table and JSON (report_render.cpp) and
// the HTML page (report_html.cpp). Internal to src/engine.
#pragma once

#include <chrono>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <iosfwd>
#include <string>
#include <vector>

#include "common/clock.h"
#include "decide/report/report.h"
#include "engine/plan_report.h"

namespace kubex::engine {

// A resize kubex applied by evicting a pod (its PolicyEvaluationEvictResize events, newest first).
struct EvictionResize {
  std::string ns, workload;  // "Deployment/chat-vllm" ("" when the pod's workload is unknown)
  std::string pod, at, message;
};

// A drain kubex carried out in the window (CON-8): its DrainCompleted events, and the policy's
// status.lastDrainedNode / lastDrainTime, which outlive the events' hour. Newest first.
struct CarriedDrain {
  std::string policy, node, at, message;
};

struct ReportData {
  std::string cluster;  // the kubeconfig context and server
  common::TimePoint now{};
  std::chrono::seconds window{0};
  std::string since;  // as given ("24h")
  std::string prometheus_url;
  std::string prometheus_error;  // "" when every usage query answered
  decide::report::IdleRule idle;
  bool priced = false;  // GlobalConfiguration has gpuHourPrices
  decide::report::Summary summary;
  std::vector<PolicyPlan> consolidation;
  std::string consolidation_error;  // the policies could not be read
  std::map<int, int> pods_per_gpu;
  std::vector<EvictionResize> resizes;
  std::vector<CarriedDrain> drains;
  std::string events_error;
};

nlohmann::json report_json(const ReportData& r);
void print_report_table(const ReportData& r, std::ostream& out);
void print_report_html(const ReportData& r, std::ostream& out);

}  // namespace kubex::engine
