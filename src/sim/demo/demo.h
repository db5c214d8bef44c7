// `kubex-sim demo` (DESIGN §1): a simulated GPU cluster, a real Prometheus scraping its GPU exporter, and the
// real `kubex engine` with its webhooks registered; then the guide's starter example and a few GPU workloads,
// a live view of where their pods run and what GPU share they got, and a final report.
#pragma once

#include <chrono>
#include <string>

namespace kubex::sim::demo {

struct DemoOptions {
  bool keep_running = false;        // leave everything up after the report, until Ctrl-C
  std::string kubex_binary;         // default: `kubex` next to this executable
  std::string prometheus_binary = "prometheus";
  std::string work_dir;             // default: a new /tmp/kubex-demo-XXXXXX
  std::chrono::seconds timeout{240};  // for the workloads to settle
};

// Runs the demo; returns the process exit code (0 after the report; 1 when something failed, with the
// failing step and the log to read; 130 when interrupted). Blocks SIGINT/SIGTERM itself: call it before
// other threads start.
int run_demo(const DemoOptions& options);

}  // namespace kubex::sim::demo
