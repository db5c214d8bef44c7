#include "controllers/recommendations_counter.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>

#include <optional>

#include "decide/desired_annotations.h"
#include "kube/runtime/metrics.h"

namespace kubex::controllers {

GpuRecommendationsCounter::GpuRecommendationsCounter(kube::Metrics* metrics) {
  if (metrics) {
    family_ = &metrics->counter_family(
        "kubex_gpu_recommendations_total",
        "GPU values written to workloads' desired-resource-requests annotations when they change, by policy "
        "kind and direction (initial, upsize, downsize).");
  }
}

void GpuRecommendationsCounter::written(const api::WorkloadView& w,
                                        const std::map<std::string, std::string>& set) {
  if (!family_) return;
  using api::Kind;
  for (Kind kind : {Kind::kStaticPolicy, Kind::kClusterStaticPolicy, Kind::kProactivePolicy,
                    Kind::kClusterProactivePolicy, Kind::kGpuReactivePolicy, Kind::kClusterGpuReactivePolicy}) {
    auto it = set.find(decide::desired_requests_key(kind));
    if (it == set.end()) continue;
    const common::IStr* before = w.annotation(it->first);
    std::optional<std::string> old;
    if (before) old = before->str();
    for (const std::string& direction : decide::gpu_recommendation_directions(old, it->second)) {
      family_->Add({{"policy_kind", api::info(kind).name}, {"direction", direction}}).Increment();
    }
  }
}

}  // namespace kubex::controllers
