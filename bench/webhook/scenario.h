// The admission webhook benchmark's workload (issue 6): what kube-apiserver would send the engine for one
// vLLM Deployment pod, and the in-memory context the engine's caches would hold. Shared by the end-to-end
// benchmark (bench-webhook) and the micro-benchmark of the decision (bench-webhook-micro).
//
// Context: the user's guide starter (examples/kai-gpu-sharing.yaml, read and parsed as written: the KAI
// ClusterAutomationStrategy, the baseline ClusterProactivePolicy and the ClusterGpuReactivePolicy), a
// ClusterStaticPolicy giving the `vllm` container 0.5 GPU in namespace ml-inference (so every review is
// converted to a KAI fraction and answered with a patch), and 50 unrelated policies in other namespaces
// (namespaced StaticPolicies and ProactivePolicies with their AutomationStrategies, and cluster policies
// scoped to other namespaces), all built through api::parse_* like the engine's informers do.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "decide/policy/catalog.h"
#include "webhook/pod_admission.h"

namespace kubex::bench {

inline constexpr const char* kNamespace = "ml-inference";
inline constexpr int kOtherPolicies = 50;

struct Scenario {
  std::shared_ptr<const decide::policy::Catalog> catalog;
  decide::policy::Workload owner;  // Deployment ml-inference/llama-8b, labelled nvidia.com/gpu.present=true
  nlohmann::json pod;              // request.object
  std::string review;              // the AdmissionReview request body (uid kUid)
  int strategies = 0, policies = 0;
  // What pod_admission_deps() hands the handler (built on first use; lives as long as the scenario).
  mutable std::shared_ptr<webhook::PodAdmissionSource> source;
};

// The uid of `review`; load clients rewrite it in place (same length) so that every request is distinct.
inline constexpr const char* kUid = "5f0b1c2d-3e4f-4a5b-8c6d-000000000000";

// Builds everything; the error names what failed (e.g. the example file cannot be read or is invalid).
common::Result<Scenario> make_scenario(const std::string& source_dir);

// PodAdmission dependencies over the scenario: the catalog, synced caches, and an owner lambda returning the
// scenario's Deployment directly (the caches are not what is measured).
webhook::PodAdmissionDeps pod_admission_deps(const Scenario& s);

// Checks a decoded AdmissionReview response body: allowed, a base64 JSONPatch that turns the request's pod
// into a KAI pod with gpu-fraction "0.5", no nvidia.com/gpu, schedulerName kai-scheduler and the vLLM
// argument rewritten. Returns "" when it is right, else what is wrong.
std::string check_response(const Scenario& s, const std::string& body, const std::string& uid);

}  // namespace kubex::bench
