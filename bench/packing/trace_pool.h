// bench-packing's trace mode (issue 22): the consolidation planner on a real production GPU cluster, the
// Alibaba Cluster Trace Program's cluster-trace-gpu-v2023 ("openb", CC BY 4.0). The GPU nodes and the Running pods
// of a pod list are placed, in creation_time order, by kubex-sim's own KAI scheduler code (sim/cluster/
// sched_placement: binpack, per-GPU sums ≤ 1.00, CPU and memory); the nodes are split into one pool per GPU model
// (CON-5a) and each pool is planned and drained like the synthetic pool of packing_bench.cpp, kubex's planner
// side by side with the GPU-capacity-only node-level baseline. Prints Markdown.
#pragma once

#include <string>
#include <vector>

namespace kubex::bench::packing {

struct TraceConfig {
  std::string dir;                     // the folder holding openb_node_list_gpu_node.csv and the pod lists
  std::vector<std::string> pod_lists;  // file names inside `dir`
  int replicate = 1;                   // copies of every node and pod (suffixed -r1, -r2, …)
  int reps = 5;                        // timings: the median of this many runs
  int threshold = 75;                  // utilizationThresholdPercent (CON-4)
};

// The trace folder's default place: <repo>/../shared/data/alibaba-gpu-v2023.
std::string default_trace_dir();

// Runs the trace mode and prints its report; returns the process exit code (1 when a file cannot be read).
int run_trace(const TraceConfig& config);

}  // namespace kubex::bench::packing
