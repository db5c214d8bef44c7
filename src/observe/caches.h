// The engine's informer caches (DESIGN §2.3): pods, nodes, namespaces and the owner kinds of SEL-1 as compact
// projections (api/views.h), with secondary indexes by namespace, owner UID and node name. Optional owner
// kinds (Argo Rollouts and AnalysisRuns, KubeAI Models, Strimzi pod sets) are skipped silently while their
// API is not installed (SPEC §1.8).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kubex::kube {
class Client;
class Informer;
}  // namespace kubex::kube

namespace kubex::observe {

inline constexpr const char* kIndexNamespace = "namespace";
inline constexpr const char* kIndexOwnerUid = "owner-uid";
inline constexpr const char* kIndexNodeName = "node-name";

struct Caches {
  std::shared_ptr<kube::Informer> pods, nodes, namespaces;
  // Owner kinds (SEL-1).
  std::shared_ptr<kube::Informer> replicasets, deployments, statefulsets, daemonsets, jobs, cronjobs;
  std::shared_ptr<kube::Informer> rollouts, analysisruns, models, strimzipodsets;  // optional APIs
  // KAI-Scheduler queues (scheduling.run.ai/v2, cluster-scoped; optional API): QUE, VAL-2.
  std::shared_ptr<kube::Informer> queues;
  // policy/v1 PodDisruptionBudgets (api::PdbView, indexed by namespace): CON-4 reads disruptionsAllowed.
  std::shared_ptr<kube::Informer> pdbs;
  // (name, informer) in start order, for the manager.
  std::vector<std::pair<std::string, std::shared_ptr<kube::Informer>>> all() const;
  // The informers of the workload kinds (SEL-1 top owners and Jobs), for observe/workloads.h.
  std::vector<std::shared_ptr<kube::Informer>> workload_informers() const;
  // The informer caching owner kind `kind` ("Deployment", "Model", ...), nullptr for other kinds.
  std::shared_ptr<kube::Informer> owner_informer(const std::string& kind) const;
};

Caches make_caches(const std::shared_ptr<kube::Client>& client);

// The cached annotations kubex reads of a namespace (pause-until), empty when it is not cached.
std::map<std::string, std::string> namespace_annotations(const Caches& caches, const std::string& ns);

}  // namespace kubex::observe
