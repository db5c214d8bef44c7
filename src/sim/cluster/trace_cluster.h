// `kubex-sim serve --trace DIR` (SIM-6): a cluster built from the Alibaba `cluster-trace-gpu-v2023` CSV files
// (trace_csv.h). Every trace node becomes a node with its CPU, memory, GPUs and model
// (`nvidia.com/gpu.product`, and `nvidia.com/gpu.memory` when the model's memory is known, SIM-5; pool label
// sim.kubex.ai/node-pool = the model in lower case, `cpu` for CPU nodes). Every kept pod becomes a
// one-replica Deployment in namespace `trace`: a KAI `gpu-fraction` pod (kai-scheduler, queue `trace`) when
// num_gpu == 1 and 0 < gpu_milli < 1000, else whole `nvidia.com/gpu` (none for CPU pods), with gpu_spec as
// required node affinity on the product. Deployments are created in creation-time order, so the schedulers
// take their pods in that order.
#pragma once

#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "common/result.h"
#include "sim/cluster/config.h"
#include "sim/cluster/trace_csv.h"

namespace kubex::sim {
class ApiServer;
}

namespace kubex::sim::cluster {

inline constexpr const char* kTraceNamespace = "trace";
inline constexpr const char* kTraceQueue = "trace";             // the leaf queue of the fraction pods
inline constexpr const char* kTraceParentQueue = "trace-root";  // its parent

struct TraceOptions {
  std::string dir;
  // File names are read in `dir` unless they contain a '/'.
  std::string nodes_file = "openb_node_list_gpu_node.csv";
  std::string pods_file = "openb_pod_list_default.csv";
  std::string phase = "Running";  // keep the pods whose pod_phase is this; "all" keeps every pod
};

// The path `file` is read from.
std::string trace_file_path(const TraceOptions& options, const std::string& file);

// The pool (and sim.kubex.ai/node-pool label) of a trace node: its model in lower case, "cpu" without GPUs.
std::string trace_pool(const TraceNode& node);
std::vector<NodeSpec> trace_node_specs(const std::vector<TraceNode>& nodes);

// The Deployment of one trace pod.
nlohmann::json trace_deployment(const TracePod& pod);
// gpu_milli / 1000 as a decimal: 460 -> "0.46", 5 -> "0.005".
std::string gpu_fraction_text(int gpu_milli);

struct TraceWorkloads {
  // The namespace, the two queues, then one Deployment per kept pod in creation-time order (file order on
  // ties).
  std::vector<nlohmann::json> objects;
  std::size_t pods_in_file = 0, deployments = 0;
};
TraceWorkloads trace_workloads(std::vector<TracePod> pods, const std::string& phase);

struct Trace {
  std::vector<NodeSpec> nodes;
  TraceWorkloads workloads;
};
// Reads and checks both files; the error names the file, line and column.
common::Result<Trace> load_trace(const TraceOptions& options);

// Creates `objects` in order through the API (as a controller would); objects that already exist (a restart
// on the same --data-dir) are left alone. Returns how many were created.
common::Result<std::size_t> create_trace_objects(ApiServer& api, const std::vector<nlohmann::json>& objects);

}  // namespace kubex::sim::cluster
