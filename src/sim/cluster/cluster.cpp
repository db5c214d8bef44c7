#include "sim/cluster/cluster.h"

#include <nlohmann/json.hpp>

#include "common/yaml.h"
#include "sim/cluster/cluster_io.h"
#include "sim/cluster/context.h"
#include "sim/cluster/node_lease.h"
#include "sim/cluster/node_objects.h"
#include "sim/cluster/subsystem.h"

namespace kubex::sim::cluster {

using nlohmann::json;

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
                url: {type: string, description: "Where the model comes from (hf://..., ollama://...)."}
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

Cluster::Cluster(ClusterIo& io, ClusterConfig config, const GpuPartFactory& make_gpu, Front front)
    : front_(std::move(front)), ctx_(std::make_unique<ClusterContext>(io, std::move(config))) {
  gpu_ = make_gpu(*ctx_);
  if (front_.kind == Front::Kind::kServe) {
    parts_ = make_workload_controllers(*ctx_);
    parts_.push_back(make_default_scheduler(*ctx_));
  } else {
    parts_.push_back(make_node_heartbeat(*ctx_));
  }
  if (!front_.external_kai) parts_.push_back(make_kai_scheduler(*ctx_));
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
  const bool agent = front_.kind == Front::Kind::kAgent;
  int index = 0;
  for (const auto& spec : node_specs(ctx_->config())) {
    int i = index++;
    auto existing = ctx_->client().get(core_path("nodes", "", spec.name));
    if (existing.ok()) {
      if (!agent) continue;
      json labels = existing.json()["metadata"].value("labels", json::object());
      std::string owner = labels.is_object() ? labels.value(kNodeAgentLabel, "") : "";
      if (owner != front_.agent_name) {
        return common::fail("node " + spec.name + " already exists and was not registered by this agent (" +
                            kNodeAgentLabel + "=" + (owner.empty() ? "<none>" : owner) + ", this agent is " +
                            front_.agent_name + "): rename the pool or remove the node");
      }
      continue;  // a restarted agent adopts its nodes; the heartbeat marks them Ready again
    }
    if (existing.status != 404) return common::fail("reading node " + spec.name + ": " + existing.body);
    json node = node_object(spec, i);
    if (agent) node["metadata"]["labels"][kNodeAgentLabel] = front_.agent_name;
    auto r = ctx_->client().create(core_path("nodes", ""), node);
    if (!r.ok()) return common::fail("creating node " + spec.name + ": " + r.body);
  }
  return {};
}

common::Result<void> Cluster::delete_nodes() {
  std::string failures;
  for (const auto& spec : node_specs(ctx_->config())) {
    auto r = ctx_->client().remove(core_path("nodes", "", spec.name));
    if (!r.ok() && r.status != 404) failures += (failures.empty() ? "" : "; ") + spec.name + ": " + r.body;
  }
  if (!failures.empty()) return common::fail("deleting nodes: " + failures);
  return {};
}

common::Result<int> Cluster::start(const std::string& metrics_listen) {
  if (front_.kind == Front::Kind::kServe) {
    if (auto r = install_crds(); !r) return std::unexpected(r.error());
  }
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
