// `kubex plan sizing [--policy NAME|FILE] [--since 7d] [-o table|json]` (issue 36 item 3): what a reactive policy
// would have done on the cluster's own workloads, before it is enabled. The same replay as bench-sizing
// (decide/sizing/replay.h: the engine's REA decisions scrape by scrape, the strategy's floor, ceiling and
// direction gates, ADM-8), fed by the user's Prometheus: range queries of the policy's OWN metrics, one point per
// gpuReactiveCheckInterval (1m by default) over --since, for the workloads the policy wins (SEL-7), batched as PRO-2's history
// reads (observe/sizing_history.h). Read-only: nothing in the cluster is written.
//
// Policies: --policy FILE (a path that exists, or - for stdin) replays the GpuReactivePolicy /
// ClusterGpuReactivePolicy documents of a manifest that need not be applied, with the strategy and StaticPolicy
// beside them (the referenced strategy is read from the cluster when the file lacks it), matched against the
// cluster's workloads as if the file were applied; --policy NAME replays the cluster's reactive policy of that
// name (NAMESPACE/NAME for a GpuReactivePolicy) with the strategy it references; neither: every reactive policy
// of the cluster, one section each.
//
// Per workload and GPU container: GPUs as written (RBK-1 `original`: the template's nvidia.com/gpu or
// gpu-fraction), the average GPUs the policy would have held, saved %, samples whose memory exceeds the held
// allocation, episodes, resizes per day; a total; and three reference sizers on the same samples. A
// currentAllocation sample is read as a share of the container's allocation NOW (its newest running pod's, else
// its template's): where that changed inside --since, older samples are scaled by today's allocation.
//
// Exit: 0 replayed, 1 a policy not found or invalid, or the cluster or Prometheus cannot be read (a message on
// stderr), 2 bad usage.
#pragma once

#include <iosfwd>
#include <string>

namespace kubex::engine {

struct PlanSizingOptions {
  std::string kubeconfig, context;
  std::string policy;  // --policy NAME | FILE | - ("" = every reactive policy of the cluster)
  std::string since = "7d";
  std::string output = "table";  // table | json
  std::string global_config_name = "global-config";
  std::string policy_evaluation_name = "policy-evaluation";
  std::string prometheus_url, prometheus_bearer_token_file, prometheus_ca_file;
};

// Never throws. `in` is standard input (for --policy -).
int run_plan_sizing(const PlanSizingOptions& options, std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace kubex::engine
