#include "decide/reactive/reactive.h"

namespace kubex::decide::reactive {

bool eligible(const PodFacts& pod, common::Duration min_pod_metrics_age, common::TimePoint now) {
  if (pod.phase != "Running" || pod.terminating || !pod.start_time) return false;  // REA-2
  if (min_pod_metrics_age <= common::Duration::zero()) return true;                // 0s disables the check
  return now - *pod.start_time >= min_pod_metrics_age;
}

}  // namespace kubex::decide::reactive
