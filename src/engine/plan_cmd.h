// `kubex plan consolidation [--policy NAME | -f FILE] [-o json]` (SPEC CLI-2): runs CON-1…CON-6a on the live
// cluster without tainting or evicting, with the engine's own code path (observe::gpu_inventory →
// decide::packing), and prints per policy: the pool (nodes, GPUs, allocated, utilization per node and per GPU),
// the candidates in order with feasible or the reason, the drain sequence it would take if each drain succeeded
// in turn, and GPUs reclaimable against the lower bound ⌈Σ allocations⌉.
//
// Policies: --policy NAME reads that GpuConsolidationPolicy; -f FILE (or - for stdin) plans the
// GpuConsolidationPolicy documents of a manifest that need not be applied (validated first with the one
// validator, VAL-1); with neither, every GpuConsolidationPolicy of the cluster. The cluster is read with the
// ENG-3 kubeconfig rules (--kubeconfig, --context; in-cluster, $KUBECONFIG, ~/.kube/config) and never written.
//
// Output: a table on stdout, or with -o json one document {"apiVersion": "cli.kubex.ai/v1alpha1", "kind":
// "ConsolidationPlan", "policies": [...]} (see plan_report.h). Exit: 0 planned (a NoCandidate outcome
// included), 1 a policy not found, an invalid policy, or the cluster cannot be read, 2 bad usage.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "common/result.h"

namespace kubex::kube {
class Client;
}

namespace kubex::engine {

struct PlanOptions {
  std::string kubeconfig, context;
  std::string policy;  // --policy NAME
  std::string file;    // -f FILE ("-" = stdin)
  std::string output = "table";  // table | json
  std::string global_config_name = "global-config";
};

struct PolicyPlan;

// Every GpuConsolidationPolicy of the cluster planned as above (for `kubex report`, RPT-1), or why the cluster
// could not be read. Invalid policies come back with their errors.
common::Result<std::vector<PolicyPlan>> plan_cluster_policies(kube::Client& client,
                                                              const std::string& global_config_name);

// Never throws. `in` is standard input (for -f -).
int run_plan_consolidation(const PlanOptions& options, std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace kubex::engine
