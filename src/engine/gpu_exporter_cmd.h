// `kubex gpu-exporter` (TEL-1): the node-side exporter of the per-container GPU series, run as a DaemonSet on GPU
// nodes. Loads NVML (--nvml-library), watches the pods of --node-name with the ENG-3 kubeconfig rules, samples
// every --interval (telemetry/exporter.h) and serves GET /metrics on --listen. Without NVML it exits 1 with one
// line that says so; bad flags exit 2. Runs until SIGTERM/SIGINT.
#pragma once

#include <iosfwd>
#include <string>

namespace kubex::engine {

struct GpuExporterOptions {
  std::string nvml_library = "libnvidia-ml.so.1";
  std::string proc_root = "/host/proc";
  std::string node_name;  // default: $NODE_NAME
  std::string kubeconfig, context;
  std::string listen = ":9400";
  std::string interval = "1s";
  std::string log_level = "info";
};

int run_gpu_exporter(GpuExporterOptions options, std::ostream& err);

}  // namespace kubex::engine
