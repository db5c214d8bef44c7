// What the policy decisions take as input: the workload (SEL-1 owner) as the caches see it, and the
// candidate policies with what the caller already knows about them (SEL-4 validity, resolved strategy).
#pragma once

#include <map>
#include <string>

#include "api/objects.h"

namespace kubex::decide::policy {

// The workload: the top owner of a pod (SEL-1), or the object a controller reconciles.
struct Workload {
  std::string
      kind;  // Deployment, StatefulSet, DaemonSet, Job, CronJob, Rollout, AnalysisRun, StrimziPodSet, Model
  std::string name, ns;
  std::map<std::string, std::string> labels;  // metadata.labels of the workload object (SEL-3)
  std::map<std::string, std::string>
      annotations;  // metadata.annotations (desired-resource-*, pause-until, …)
  std::map<std::string, std::string> template_annotations;  // its pod template's annotations (ADM-4)
  std::string model_engine;  // kubeai.org Model spec.engine ("VLLM", …); "" for other kinds (VLM-1)

  // OBS-4 `owner`: "Deployment/train".
  std::string ref() const { return kind + "/" + name; }
};

// One policy that might match the workload.
struct Candidate {
  const api::Policy* policy = nullptr;  // required; owned by the caller
  // SEL-4: the policy passes validation AND its strategy exists and is Valid (computed by the caller).
  bool valid = false;
  // False when the scope itself is unusable (api::PolicyParse::scope_evaluates): such a policy matches
  // nothing.
  bool scope_evaluates = true;
  // The strategy the policy references (API-3), nullptr when it does not exist. A candidate marked valid
  // without a strategy is treated as invalid.
  const api::Strategy* strategy = nullptr;
};

// "StaticPolicy/s", "ClusterAutomationStrategy/kai-gpu-sharing".
std::string ref_of(const api::Policy& p);
std::string ref_of(const api::Strategy& s);

}  // namespace kubex::decide::policy
