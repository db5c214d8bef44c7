// `kubex-sim agent` (SIM-2): the simulated GPU cluster's nodes, kubelet, KAI-like scheduler and GPU exporter
// against any Kubernetes API server, like KWOK plus NVIDIA's fake GPU operator.
#pragma once

#include <string>

namespace kubex::sim::agent {

struct AgentOptions {
  std::string kubeconfig;  // "" = ENG-3 resolution (in-cluster, $KUBECONFIG, ~/.kube/config)
  std::string context;
  std::string config;                          // node pools etc. (YAML); "" = kubex-sim's default pools
  std::string kai_version;       // --kai-version 0.17|0.18 ("" = the config file's, else 0.18), SIM-4
  std::string gpu_sharing_mode;  // --gpu-sharing-mode ("" = the config file's, else from memoryIsolation), KAI-1
  // --kai-scheduler internal|external (SIM-9): internal runs the KAI-like scheduler; external leaves kai-scheduler
  // pods to the real KAI (its scheduler, binder and podgrouper) and plays only the NVIDIA node side for it.
  std::string kai_scheduler = "internal";
  std::string name = "kubex-sim-agent";        // the sim.kubex.ai/agent label value of its nodes
  std::string metrics_listen = "127.0.0.1:0";  // the GPU exporter; "" disables it
  std::string log_level = "info";
  bool delete_nodes_on_exit = false;
};

// Runs until SIGINT/SIGTERM; returns the process exit code (2 for bad flags, 1 for a failed start).
int run_agent(const AgentOptions& options);

}  // namespace kubex::sim::agent
