// The CSV files of the Alibaba GPU cluster trace `cluster-trace-gpu-v2023` (SIM-6): the node lists
// (`openb_node_list_*.csv`: sn,cpu_milli,memory_mib,gpu,model) and the pod lists (`openb_pod_list_*.csv`:
// name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,...). Columns are found by
// their header names, in any order; extra columns are ignored. A bad file is one error naming the file, the
// line and the column: `pods.csv:12:2: cpu_milli: "12x" is not a whole number`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

namespace kubex::sim::cluster {

struct TraceNode {
  std::string name;  // sn
  std::int64_t cpu_milli = 0, memory_mib = 0;
  int gpus = 0;
  std::string model;  // "" for a CPU node
};

struct TracePod {
  std::string name;
  std::int64_t cpu_milli = 0, memory_mib = 0;
  int num_gpu = 0;
  int gpu_milli = 0;                  // a share of one GPU in thousandths when num_gpu == 1
  std::vector<std::string> gpu_spec;  // allowed models ("" in the file = any)
  std::string qos, phase;
  std::int64_t creation_time = 0;  // seconds from the trace start
  int line = 0;                    // where it was in its file
};

// `file` names the file in errors; `text` is its content.
common::Result<std::vector<TraceNode>> parse_trace_nodes(const std::string& file, const std::string& text);
common::Result<std::vector<TracePod>> parse_trace_pods(const std::string& file, const std::string& text);

}  // namespace kubex::sim::cluster
