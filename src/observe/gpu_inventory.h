// One snapshot of a GPU node pool (DESIGN §3 observe/, §4 "Consolidation"; SPEC CON-1, CON-2, CON-4, CON-6a):
// the nodes matching a GpuConsolidationPolicy's spec.nodeSelector (SEL-3 `*` wildcards in In/NotIn values)
// with their allocatable GPUs, CPU and memory, labels, taints, readiness and spec.unschedulable, and the pods
// counted on them (spec.nodeName on a pool node, phase Pending or Running, namespace other than
// spec.kai.reservationNamespace) with their GPU group, fraction or whole GPUs, CPU/memory requests (containers
// plus init-container maximum), scheduling constraints, and the facts that make a pod unmovable (controller
// owner kind, gpu-fraction-num-devices, do-not-disrupt, a PDB with disruptionsAllowed 0, terminating, inter-pod
// affinity or hard topology spread). Fills decide/packing/model.h; read-only.
//
// Two sources with one builder: the engine's informer caches (cached_gpu_inventory) and a one-shot LIST of
// nodes, pods and PDBs for `kubex plan consolidation` (read_gpu_inventory), so that the CLI prints what the
// controller does.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "api/objects.h"
#include "api/views.h"
#include "decide/packing/model.h"
#include "kube/client/client.h"

namespace kubex::observe {

struct Caches;

// A node carrying a `rightsizing.kubex.ai/consolidating` taint (CON-7, CON-9).
struct ConsolidationTaint {
  std::string node, policy;  // policy: the taint's value
};

class GpuInventory {
 public:
  virtual ~GpuInventory() = default;
  // CON-1, CON-2: the nodes matching `selector` and their counted pods. Empty when no node matches.
  virtual decide::packing::Pool pool(const api::LabelSelector& selector,
                                     const std::string& reservation_namespace) const = 0;
  // Every node of the cluster carrying a consolidation taint (any policy), by node name.
  virtual std::vector<ConsolidationTaint> consolidation_taints() const = 0;
};

// Over the engine's informer caches (nodes, pods by node, PDBs by namespace). `caches` must outlive it.
std::unique_ptr<GpuInventory> cached_gpu_inventory(const Caches& caches);

// One-shot: LISTs nodes, pods and PodDisruptionBudgets through `client` (paginated) and answers from that
// snapshot. For `kubex plan consolidation` (CLI-2):
//   auto inv = observe::read_gpu_inventory(*client);   // kube::KResult<std::unique_ptr<GpuInventory>>
//   decide::packing::Pool pool = (*inv)->pool(policy.spec.node_selector, global.kai_reservation_namespace);
kube::KResult<std::unique_ptr<GpuInventory>> read_gpu_inventory(kube::Client& client);

// Building blocks, exposed for tests: the model of one node and of one pod (`pdbs`: the PDBs of the pod's
// namespace).
decide::packing::PoolNode pool_node(const api::NodeView& node);
decide::packing::PoolPod pool_pod(const api::PodView& pod, const std::vector<const api::PdbView*>& pdbs);
// CON-2: a pod counted on its node.
bool counted(const api::PodView& pod, const std::string& reservation_namespace);

}  // namespace kubex::observe
