// What a sizing replay runs (replay.h), read from policy documents: the documents of a file given to
// `bench-sizing --policy` or `kubex plan sizing --policy FILE`, or the objects `kubex plan sizing --policy NAME`
// read from the cluster. Every document is validated with the one validator (VAL-1) first.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "common/result.h"
#include "decide/sizing/replay.h"

namespace kubex::decide::sizing {

// Exactly one GpuReactivePolicy or ClusterGpuReactivePolicy (the one named `name` when several; "" = the only
// one), the (Cluster)AutomationStrategy it references when present among the documents (else the guide's
// starter strategy), a StaticPolicy/ClusterStaticPolicy's requests.gpu for the GPU container ("*" or the only
// named entry), and a ProactivePolicy/ClusterProactivePolicy (the history source). Documents of other kinds are
// ignored. Errors name the document and field path ("document 3: spec.minPodMetricsAge: ...").
common::Result<ReplayPolicies> replay_policies(const std::vector<nlohmann::json>& docs, const std::string& name = "");

// The guide's starter strategy (examples/kai-gpu-sharing.yaml, `kai-gpu-sharing`): KAI, GPU requests may go
// up and down, ceiling 1.
api::StrategySpec starter_strategy();

}  // namespace kubex::decide::sizing
