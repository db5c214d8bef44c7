// KubeAI Model controller of the simulated cluster (kubeai.org/v1 Model, as KubeAI's model controller runs
// it): server pods owned directly by the Model, named `model-<model>-<hash>-<5 random>` where the hash covers
// the pod spec (a spec change rolls pods: one surge pod, out-of-date pods that are not ready replaced at
// once, ready ones one at a time once all pods are ready), the engine's container and arguments, and
// resources from the resource profile. Replicas: spec.replicas if set, else spec.minReplicas if > 0, else 1 —
// kubex-sim has no KubeAI proxy, so there is no scale-from-zero on requests.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "common/result.h"
#include "sim/cluster/config.h"
#include "sim/cluster/workload_common.h"

namespace kubex::sim::cluster {

inline constexpr const char* kModelLabel = "model";
inline constexpr const char* kModelPodHashLabel = "pod-hash";
inline constexpr const char* kOllamaImage = "ollama/ollama:latest";

// The server pod a Model's spec asks for (without name, namespace and owner): labels
// app.kubernetes.io/managed-by=kubeai, model=<name> and pod-hash=<hash of the pod spec>. Errors for a
// malformed or unknown resourceProfile (`NAME:COUNT` must name one of `profiles`).
common::Result<nlohmann::json> model_pod(const nlohmann::json& model, const ClusterConfig& config);

// The number of server pods a Model wants.
std::int64_t model_replicas(const nlohmann::json& model);

std::unique_ptr<Subsystem> make_model_controller(WorkloadEnv& env);

}  // namespace kubex::sim::cluster
