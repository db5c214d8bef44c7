#include "sim/cluster/cluster.h"

#include <nlohmann/json.hpp>

#include "common/hash.h"
#include "common/yaml.h"
#include "sim/apiserver/api_server.h"
#include "sim/cluster/context.h"
#include "sim/cluster/subsystem.h"

namespace kubex::sim::cluster {

using nlohmann::json;

namespace {
// A stable UUID-shaped identifier derived from `seed` (node identities must not change across restarts).
std::string uuid_of(const std::string& seed) {
  std::string h = common::sha256_hex(seed);
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-" + h.substr(20, 12);
}
}  // namespace

std::string queue_crd_yaml() {
  return R"(apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: queues.scheduling.run.ai
spec:
  group: scheduling.run.ai
  scope: Cluster
  names: {plural: queues, singular: queue, kind: Queue, listKind: QueueList}
  versions:
    - name: v2
      served: true
      storage: true
      subresources: {status: {}}
      additionalPrinterColumns:
        - {name: Parent, type: string, jsonPath: .spec.parentQueue}
        - {name: GPU Quota, type: number, jsonPath: .spec.resources.gpu.quota}
        - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
      schema:
        openAPIV3Schema:
          type: object
          description: A KAI-Scheduler queue (emulated by kubex-sim). Pods name their leaf queue in the kai.scheduler/queue label.
          properties:
            spec:
              type: object
              x-kubernetes-preserve-unknown-fields: true
              properties:
                parentQueue: {type: string, description: Name of the parent queue; empty for a top-level queue.}
                displayName: {type: string}
                priority: {type: integer}
                resources:
                  type: object
                  description: Quota, limit and over-quota weight per resource; -1 means unlimited.
                  properties:
                    cpu: &res
                      type: object
                      properties:
                        quota: {type: number}
                        limit: {type: number}
                        overQuotaWeight: {type: number}
                    gpu: *res
                    memory: *res
            status:
              type: object
              x-kubernetes-preserve-unknown-fields: true
)";
}

std::string model_crd_yaml() {
  return R"(apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: models.kubeai.org
spec:
  group: kubeai.org
  scope: Namespaced
  names: {plural: models, singular: model, kind: Model, listKind: ModelList}
  versions:
    - name: v1
      served: true
      storage: true
      subresources:
        status: {}
        scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas.all}
      additionalPrinterColumns:
        - {name: Engine, type: string, jsonPath: .spec.engine}
        - {name: Profile, type: string, jsonPath: .spec.resourceProfile}
        - {name: Replicas, type: integer, jsonPath: .spec.replicas}
        - {name: Ready, type: integer, jsonPath: .status.replicas.ready}
        - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
      schema:
        openAPIV3Schema:
          type: object
          description: A KubeAI Model (emulated by kubex-sim). Its pods are owned directly by the Model.
          properties:
            spec:
              type: object
              x-kubernetes-preserve-unknown-fields: true
              required: [url, engine]
              properties:
                url: {type: string, description: Where the model comes from (hf://..., ollama://...).}
                engine: {type: string, enum: [OLlama, VLLM, FasterWhisper, Infinity], description: Serving engine.}
                features: {type: array, items: {type: string}}
                resourceProfile: {type: string, description: "NAME:COUNT, e.g. nvidia-gpu-t4:1."}
                args: {type: array, items: {type: string}, description: Extra arguments for the engine.}
                env: {type: object, additionalProperties: {type: string}}
                replicas: {type: integer, minimum: 0}
                minReplicas: {type: integer, minimum: 0, default: 0}
                maxReplicas: {type: integer, minimum: 0}
            status:
              type: object
              x-kubernetes-preserve-unknown-fields: true
)";
}

Cluster::Cluster(ApiServer& api, ClusterConfig config, const GpuPartFactory& make_gpu)
    : ctx_(std::make_unique<ClusterContext>(api, std::move(config), api.clock())) {
  gpu_ = make_gpu(*ctx_);
  parts_ = make_workload_controllers(*ctx_);
  parts_.push_back(make_default_scheduler(*ctx_));
  parts_.push_back(make_kai_scheduler(*ctx_));
  parts_.push_back(make_kubelet(*ctx_, gpu_.get()));
}

Cluster::~Cluster() { stop(); }

ClusterContext& Cluster::context() { return *ctx_; }

common::Result<void> Cluster::install_crds() {
  for (const auto& y : {queue_crd_yaml(), model_crd_yaml()}) {
    auto crd = common::yaml_to_json(y);
    if (!crd) return std::unexpected(crd.error());
    std::string name = (*crd)["metadata"]["name"];
    if (ctx_->client().get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + name).ok()) continue;
    auto r = ctx_->client().create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", *crd);
    if (!r.ok()) return common::fail("installing CRD " + name + ": " + r.body);
  }
  for (const char* ns : {api::keys::kDefaultReservationNamespace}) {
    if (ctx_->client().get(core_path("namespaces", "", ns)).ok()) continue;
    ctx_->client().create(core_path("namespaces", ""), {{"apiVersion", "v1"}, {"kind", "Namespace"},
                                                        {"metadata", {{"name", ns}}}});
  }
  return {};
}

common::Result<void> Cluster::create_nodes() {
  int index = 0;
  for (const auto& pool : ctx_->config().pools) {
    for (int i = 0; i < pool.count; ++i, ++index) {
      std::string name = pool.name + "-node-" + std::to_string(i);
      if (ctx_->client().get(core_path("nodes", "", name)).ok()) continue;
      json labels = {{"kubernetes.io/hostname", name},
                     {"kubernetes.io/os", "linux"},
                     {"kubernetes.io/arch", "amd64"},
                     {"node.kubernetes.io/instance-type", "sim-" + pool.name},
                     {"sim.kubex.ai/node-pool", pool.name},
                     {"sim.kubex.ai/node-index", std::to_string(index)}};
      json capacity = {{"cpu", pool.cpu}, {"memory", pool.memory}, {"pods", std::to_string(pool.max_pods)},
                       {"ephemeral-storage", "100Gi"}};
      if (pool.gpus_per_node > 0) {
        labels["nvidia.com/gpu.present"] = "true";
        labels["nvidia.com/gpu.product"] = pool.gpu_product;
        labels["nvidia.com/gpu.memory"] = std::to_string(pool.gpu_memory_mib);
        labels["nvidia.com/gpu.count"] = std::to_string(pool.gpus_per_node);
        capacity[api::keys::kGpuResource] = std::to_string(pool.gpus_per_node);
      }
      for (const auto& [k, v] : pool.labels) labels[k] = v;
      std::string ip = "10.0." + std::to_string(index / 250) + "." + std::to_string(index % 250 + 2);
      json node = {{"apiVersion", "v1"},
                   {"kind", "Node"},
                   {"metadata", {{"name", name}, {"labels", labels}}},
                   {"spec", {{"podCIDR", "10.244." + std::to_string(index % 256) + ".0/24"}}},
                   {"status",
                    {{"capacity", capacity},
                     {"allocatable", capacity},
                     {"addresses", {{{"type", "InternalIP"}, {"address", ip}}, {{"type", "Hostname"}, {"address", name}}}},
                     {"nodeInfo",
                      {{"machineID", common::sha256_hex(name).substr(0, 32)},
                       {"systemUUID", uuid_of(name)},
                       {"bootID", uuid_of("boot/" + name)},
                       {"kernelVersion", "6.1.0-kubex-sim"},
                       {"kubeletVersion", "v1.32.0-kubex-sim"},
                       {"kubeProxyVersion", "v1.32.0-kubex-sim"},
                       {"containerRuntimeVersion", "containerd://1.7.0-kubex-sim"},
                       {"osImage", "kubex-sim"},
                       {"operatingSystem", "linux"},
                       {"architecture", "amd64"}}},
                     {"conditions",
                      {{{"type", "Ready"}, {"status", "True"}, {"reason", "KubeletReady"},
                        {"message", "kubelet is posting ready status (simulated)"}},
                       {{"type", "MemoryPressure"}, {"status", "False"}, {"reason", "KubeletHasSufficientMemory"}},
                       {{"type", "DiskPressure"}, {"status", "False"}, {"reason", "KubeletHasNoDiskPressure"}},
                       {{"type", "PIDPressure"}, {"status", "False"}, {"reason", "KubeletHasSufficientPID"}}}}}}};
      for (const auto& t : pool.taints) {
        json taint = {{"key", t.key}, {"effect", t.effect}};
        if (!t.value.empty()) taint["value"] = t.value;
        node["spec"]["taints"].push_back(taint);
      }
      auto r = ctx_->client().create(core_path("nodes", ""), node);
      if (!r.ok()) return common::fail("creating node " + name + ": " + r.body);
    }
  }
  return {};
}

common::Result<int> Cluster::start(const std::string& metrics_listen) {
  if (auto r = install_crds(); !r) return std::unexpected(r.error());
  if (auto r = create_nodes(); !r) return std::unexpected(r.error());
  int port = 0;
  if (!metrics_listen.empty()) {
    auto p = gpu_->listen(metrics_listen);
    if (!p) return std::unexpected(p.error());
    port = *p;
  }
  ctx_->start_feeds();
  for (auto& p : parts_) p->start();
  gpu_->start();
  started_ = true;
  return port;
}

void Cluster::stop() {
  if (!started_) return;
  started_ = false;
  gpu_->stop();
  for (auto& p : parts_) p->stop();
  ctx_->stop_feeds();
}

}  // namespace kubex::sim::cluster
