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

namespace kubex::sim::cluster {

class ClusterContext;
class ClusterIo;
class GpuPart;
class Subsystem;

// The front door the simulation runs behind (SIM-1, SIM-2). `serve` owns its API server and runs the whole
// cluster: CRDs, nodes, workload controllers, the default and KAI-like schedulers, kubelet, GPUs. `agent` shares a
// real cluster: it registers its nodes (labelled kNodeAgentLabel=<name>) and keeps their Leases fresh, and runs the
// KAI-like scheduler, kubelet and GPUs for its nodes only; the cluster's own controllers and scheduler do the rest.
struct Front {
  enum class Kind { kServe, kAgent } kind = Kind::kServe;
  std::string agent_name;  // kAgent: the value of kNodeAgentLabel on its nodes
  bool external_kai = false;  // kAgent: the real KAI schedules kai-scheduler pods; no KAI-like scheduler (SIM-9)
  static Front serve() { return {}; }
  static Front agent(std::string name, bool external_kai = false) {
    return {Kind::kAgent, std::move(name), external_kai};
  }
};

class Cluster {
 public:
  // `make_gpu` builds the GPU usage model (gpu::make_gpu_model) on the cluster's context.
  Cluster(ClusterIo& io, ClusterConfig config, const GpuPartFactory& make_gpu, Front front = Front::serve());
  ~Cluster();
  // serve: installs CRDs and namespaces; both: creates missing nodes (agent: fails on a node of that name it did
  // not create), starts every part. `metrics_listen` ("" = no exporter) is HOST:PORT for the GPU metrics
  // endpoint; returns the bound port (0 when disabled).
  common::Result<int> start(const std::string& metrics_listen);
  void stop();
  // agent: deletes the nodes it registered (their Leases go with them). Call after stop().
  common::Result<void> delete_nodes();
  ClusterContext& context();

 private:
  common::Result<void> install_crds();
  common::Result<void> create_nodes();

  Front front_;
  std::unique_ptr<ClusterContext> ctx_;
  std::unique_ptr<GpuPart> gpu_;
  std::vector<std::unique_ptr<Subsystem>> parts_;
  bool started_ = false;
};

// The CRDs kubex-sim installs for the external kinds it emulates.
std::string queue_crd_yaml();
std::string model_crd_yaml();

}  // namespace kubex::sim::cluster
