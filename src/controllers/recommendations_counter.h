// OBS-5 kubex_gpu_recommendations_total{policy_kind,direction}: the GPU values the engine wrote into owners'
// desired-resource-requests annotations, counted when a written value changes
// (decide::gpu_recommendation_directions: initial, upsize, downsize). Every writer of those annotations
// holds one; the family is listed on /metrics from construction, before its first sample.
#pragma once

#include <map>
#include <string>

#include "api/views.h"

namespace kubex::kube {
class Metrics;
}
namespace prometheus {
class Counter;
template <typename T>
class Family;
}  // namespace prometheus

namespace kubex::controllers {

class GpuRecommendationsCounter {
 public:
  explicit GpuRecommendationsCounter(kube::Metrics* metrics);  // nullptr: counts nothing
  // After `set` was written to `w` (the cached object, so its annotations are the values before): counts
  // each desired-resource-requests key of `set` under the policy kind the key belongs to.
  void written(const api::WorkloadView& w, const std::map<std::string, std::string>& set);

 private:
  prometheus::Family<prometheus::Counter>* family_ = nullptr;
};

}  // namespace kubex::controllers
