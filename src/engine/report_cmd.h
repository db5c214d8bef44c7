// `kubex report [--since 24h] [-o|--output table|json|html] [--output-file FILE] [--prometheus-url URL]`
// (SPEC RPT-1…RPT-4, CLI-4): what kubex saves and what sits idle, read-only. Per workload that holds or asks for a GPU: GPUs as
// written (the template as the user wrote it — RBK-1 `original` when present — times the replicas running now)
// against the GPUs its running pods hold, p95 SM use and max memory footprint over --since (the PRO-2 metrics,
// batched as PRO-2), the idle flag (RPT-2) and, with GlobalConfiguration's prices, GPU-hours and money saved and
// idle (RPT-3); totals per namespace and for the cluster; per GpuConsolidationPolicy the GPUs reclaimable now and
// what `kubex plan consolidation` would free; the resizes kubex applied by eviction (its events). Without
// Prometheus the usage columns say `no data` and the rest is still printed.
//
// Output: a table, `-o json` ({"apiVersion": "cli.kubex.ai/v1alpha1", "kind": "Report", …}) or `-o html` (one
// self-contained file with inline SVG charts), on stdout or in --output-file FILE. Exit: 0 reported, 1 the cluster
// cannot be read or FILE cannot be written, 2 bad usage.
#pragma once

#include <chrono>
#include <iosfwd>
#include <string>

#include "common/result.h"

namespace kubex::engine {

struct ReportOptions {
  std::string kubeconfig, context;
  std::string since = "24h";
  std::string output = "table";  // table | json | html
  std::string output_file;       // --output-file FILE ("" = stdout)
  std::string global_config_name = "global-config";
  std::string policy_evaluation_name = "policy-evaluation";
  std::string prometheus_url, prometheus_bearer_token_file, prometheus_ca_file;
};

// --since of `kubex report` and `kubex plan sizing`: a Go duration ("24h", "90m") or a number of days ("7d"), at
// least 1m.
common::Result<std::chrono::seconds> parse_since(const std::string& s);

// Never throws.
int run_report(const ReportOptions& options, std::ostream& out, std::ostream& err);

}  // namespace kubex::engine
