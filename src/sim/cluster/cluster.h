// The simulated GPU cluster: nodes from the configuration, the CRDs of the external kinds it emulates
// (scheduling.run.ai/v2 Queue, kubeai.org/v1 Model), workload controllers, the default and KAI-like
// schedulers, the kubelet emulation, and the GPU usage model with its Prometheus exporter.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "sim/cluster/config.h"
#include "sim/cluster/subsystem.h"

namespace kubex::sim {
class ApiServer;
}

namespace kubex::sim::cluster {

class ClusterContext;
class GpuPart;
class Subsystem;

class Cluster {
 public:
  // `make_gpu` builds the GPU usage model (gpu::make_gpu_model) on the cluster's context.
  Cluster(ApiServer& api, ClusterConfig config, const GpuPartFactory& make_gpu);
  ~Cluster();
  // Installs CRDs and namespaces, creates missing nodes, starts every part. `metrics_listen` ("" = no
  // exporter) is HOST:PORT for the GPU metrics endpoint; returns the bound port (0 when disabled).
  common::Result<int> start(const std::string& metrics_listen);
  void stop();
  ClusterContext& context();

 private:
  common::Result<void> install_crds();
  common::Result<void> create_nodes();

  std::unique_ptr<ClusterContext> ctx_;
  std::unique_ptr<GpuPart> gpu_;
  std::vector<std::unique_ptr<Subsystem>> parts_;
  bool started_ = false;
};

// The CRDs kubex-sim installs for the external kinds it emulates.
std::string queue_crd_yaml();
std::string model_crd_yaml();

}  // namespace kubex::sim::cluster
