// Builders for the decide/ unit tests: typed strategies and policies (as api/parse would produce them,
// defaults applied), realistic pods as kube-apiserver sends them in an AdmissionReview (defaulted fields
// present), and a Scenario that owns everything a decision points at.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/objects.h"
#include "common/json_projection.h"
#include "common/quantity.h"
#include "decide/admission/pod_mutation.h"
#include "decide/policy/candidate.h"

namespace kubex::decide::test {

using nlohmann::json;

inline common::Quantity q(const char* s) {
  return *common::Quantity::parse(s);
}

inline common::TimePoint at(std::int64_t seconds) {
  return common::TimePoint{std::chrono::seconds(seconds)};
}
// The fake "now" of the tests (the FakeClock default start).
inline const common::TimePoint kNow = at(1'800'000'000);

// The strategy of SPEC's E1-E6: KAI, upsize and downsize on, setFromUnspecified off, ceiling "1".
inline api::Strategy kai_strategy(const std::string& name = "kai", const std::string& ns = "ml") {
  api::Strategy s;
  s.kind = api::Kind::kAutomationStrategy;
  s.meta.name = name;
  s.meta.ns = ns;
  s.spec.has_experimental = true;
  s.spec.gpu_kai_contract = "v1alpha1-2026-07";
  s.spec.override_scheduler = "kai";
  s.spec.gpu_requests.upsize = true;
  s.spec.gpu_requests.downsize = true;
  s.spec.gpu_requests.set_from_unspecified = false;
  s.spec.gpu_requests.bounds.ceiling = q("1");
  return s;
}

inline api::Strategy vanilla_strategy(const std::string& name = "plain", const std::string& ns = "ml") {
  api::Strategy s;
  s.kind = api::Kind::kAutomationStrategy;
  s.meta.name = name;
  s.meta.ns = ns;
  s.spec.override_scheduler = "none";
  s.spec.gpu_requests.upsize = true;
  s.spec.gpu_requests.downsize = true;
  s.spec.gpu_requests.set_from_unspecified = true;
  return s;
}

inline api::Strategy as_cluster(api::Strategy s) {
  s.kind = api::Kind::kClusterAutomationStrategy;
  s.meta.ns.clear();
  return s;
}

// A policy of any kind; cluster kinds get `namespaceSelector: In ["*"]`.
inline api::Policy policy_of(api::Kind kind, const std::string& name, const std::string& strategy,
                             const std::string& ns = "ml") {
  api::Policy p;
  p.kind = kind;
  p.meta.name = name;
  p.meta.created = at(1'700'000'000);
  api::PolicyCommon common;
  common.strategy_ref = strategy;
  if (api::is_cluster_policy(kind)) {
    common.scope.present = true;
    common.scope.has_namespace_selector = true;
    common.scope.namespace_operator = "In";
    common.scope.namespace_values = {"*"};
  } else {
    p.meta.ns = ns;
  }
  if (api::is_static(kind)) p.static_spec.common = common;
  if (api::is_reactive(kind)) {
    p.reactive.common = common;
    p.reactive.has_experimental = true;
    p.reactive.gpu_kai_contract = "v1alpha1-2026-07";
  }
  if (api::is_proactive(kind)) p.proactive.common = common;
  return p;
}

inline api::StaticResources gpu_request(const char* v) {
  api::StaticResources r;
  r.gpu_request = q(v);
  return r;
}

inline api::Policy static_policy(const std::string& name, const std::string& strategy,
                                 std::map<std::string, api::StaticResources> containers,
                                 api::Kind kind = api::Kind::kStaticPolicy) {
  api::Policy p = policy_of(kind, name, strategy);
  p.static_spec.containers = std::move(containers);
  return p;
}

// A container as the API server defaults it.
inline json container(const std::string& name, const std::string& image, json resources = json::object()) {
  return {{"name", name},
          {"image", image},
          {"resources", std::move(resources)},
          {"volumeMounts", json::array({{{"name", "kube-api-access-7xk2p"},
                                         {"readOnly", true},
                                         {"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"}}})},
          {"terminationMessagePath", "/dev/termination-log"},
          {"terminationMessagePolicy", "File"},
          {"imagePullPolicy", "IfNotPresent"}};
}

inline json whole_gpus(int n) {
  const std::string v = std::to_string(n);
  return {{"limits", {{"nvidia.com/gpu", v}}}, {"requests", {{"nvidia.com/gpu", v}}}};
}

// A Deployment pod (Pod -> ReplicaSet -> Deployment "train") in namespace "ml", as request.object.
inline json pod(json containers, json annotations = json::object(), json labels = json::object()) {
  json meta = {{"generateName", "train-5d8f7c9b4-"},
               {"namespace", "ml"},
               {"creationTimestamp", nullptr},
               {"labels", {{"app", "train"}, {"pod-template-hash", "5d8f7c9b4"}}},
               {"ownerReferences", json::array({{{"apiVersion", "apps/v1"},
                                                 {"kind", "ReplicaSet"},
                                                 {"name", "train-5d8f7c9b4"},
                                                 {"uid", "0b6f4a52-3d1e-4c84-9a57-8f0b2c1d9e11"},
                                                 {"controller", true},
                                                 {"blockOwnerDeletion", true}}})}};
  for (auto it = labels.begin(); it != labels.end(); ++it) meta["labels"][it.key()] = it.value();
  if (!annotations.empty()) meta["annotations"] = std::move(annotations);
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", std::move(meta)},
          {"spec",
           {{"volumes",
             json::array({{{"name", "kube-api-access-7xk2p"},
                           {"projected",
                            {{"sources", json::array({{{"serviceAccountToken",
                                                        {{"expirationSeconds", 3607}, {"path", "token"}}}}})},
                             {"defaultMode", 420}}}}})},
            {"containers", std::move(containers)},
            {"restartPolicy", "Always"},
            {"terminationGracePeriodSeconds", 30},
            {"dnsPolicy", "ClusterFirst"},
            {"serviceAccountName", "default"},
            {"serviceAccount", "default"},
            {"securityContext", json::object()},
            {"schedulerName", "default-scheduler"},
            {"tolerations", json::array({{{"key", "node.kubernetes.io/not-ready"},
                                          {"operator", "Exists"},
                                          {"effect", "NoExecute"},
                                          {"tolerationSeconds", 300}},
                                         {{"key", "node.kubernetes.io/unreachable"},
                                          {"operator", "Exists"},
                                          {"effect", "NoExecute"},
                                          {"tolerationSeconds", 300}}})},
            {"priority", 0},
            {"enableServiceLinks", true},
            {"preemptionPolicy", "PreemptLowerPriority"}}},
          {"status", json::object()}};
}

// A one-container GPU pod ("app", a PyTorch image).
inline json app_pod(json resources = json::object(), json annotations = json::object(),
                    json labels = json::object()) {
  return pod(json::array({container("app", "nvcr.io/nvidia/pytorch:24.01-py3", std::move(resources))}),
             std::move(annotations), std::move(labels));
}

inline policy::Workload deployment(const std::string& name = "train", const std::string& ns = "ml") {
  policy::Workload w;
  w.kind = "Deployment";
  w.name = name;
  w.ns = ns;
  w.labels = {{"app", name}, {"nvidia.com/gpu.present", "true"}};
  return w;
}

// Owns the strategies, policies and configuration a decision points at (stable addresses).
struct Scenario {
  api::GlobalConfigSpec global;
  api::PolicyEvaluation evaluation;
  policy::Workload workload = deployment();
  std::deque<api::Strategy> strategies;
  std::deque<api::Policy> policies;
  std::vector<policy::Candidate> candidates;
  std::map<std::string, std::string> namespace_annotations;

  const api::Strategy* add_strategy(api::Strategy s) { return &strategies.emplace_back(std::move(s)); }
  const api::Policy* add_policy(api::Policy p, const api::Strategy* strategy, bool valid = true) {
    const api::Policy* ptr = &policies.emplace_back(std::move(p));
    candidates.push_back({ptr, valid, true, strategy});
    return ptr;
  }

  AdmissionInput input(const json& pod, Pass pass = Pass::kLate) const {
    AdmissionInput in;
    in.pod = &pod;
    in.pass = pass;
    in.now = kNow;
    in.global = &global;
    in.evaluation = &evaluation;
    in.ns = workload.ns;
    in.namespace_annotations = namespace_annotations;
    in.workload = &workload;
    in.candidates = candidates;
    return in;
  }
  // Every case is decided twice: on the whole pod and on the pod cut to admission_pod_fields(), as the
  // webhook decodes it. Both must give the same patch and the same decision.
  AdmissionDecision run(const json& pod, Pass pass = Pass::kLate) const {
    AdmissionDecision whole = decide_admission(input(pod, pass));
    const json cut_pod = common::project(pod, admission_pod_fields());
    const AdmissionDecision cut = decide_admission(input(cut_pod, pass));
    EXPECT_EQ(cut.patch->dump(), whole.patch->dump())
        << "the projected pod is patched differently: " << pod.dump();
    EXPECT_EQ(cut.result, whole.result);
    EXPECT_EQ(summary_members(cut.summary, cut.ignored_sources),
              summary_members(whole.summary, whole.ignored_sources));
    EXPECT_EQ(cut.constraints.to_json(), whole.constraints.to_json());
    EXPECT_EQ(cut.allocation, whole.allocation);
    EXPECT_EQ(cut.stale_owner_annotations, whole.stale_owner_annotations);
    EXPECT_EQ(cut.strategy_conflict, whole.strategy_conflict);
    return whole;
  }
};

// Applies a decision's patch to its input: the patch must turn the input into the returned pod.
inline json patched(const json& input, const AdmissionDecision& d) {
  return input.patch(*d.patch);
}

}  // namespace kubex::decide::test
