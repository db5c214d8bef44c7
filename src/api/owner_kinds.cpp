#include "api/owner_kinds.h"

#include <array>

namespace kubex::api {

const OwnerKind* owner_kind(std::string_view kind) {
  static constexpr std::array<OwnerKind, 10> kKinds = {{
      {"Deployment", "apps/v1", "deployments"},
      {"StatefulSet", "apps/v1", "statefulsets"},
      {"DaemonSet", "apps/v1", "daemonsets"},
      {"ReplicaSet", "apps/v1", "replicasets"},
      {"Job", "batch/v1", "jobs"},
      {"CronJob", "batch/v1", "cronjobs"},
      {"Rollout", "argoproj.io/v1alpha1", "rollouts"},
      {"AnalysisRun", "argoproj.io/v1alpha1", "analysisruns"},
      {"Model", "kubeai.org/v1", "models"},
      {"StrimziPodSet", "core.strimzi.io/v1beta2", "strimzipodsets"},
  }};
  for (const auto& k : kKinds) {
    if (k.kind == kind) return &k;
  }
  return nullptr;
}

}  // namespace kubex::api
