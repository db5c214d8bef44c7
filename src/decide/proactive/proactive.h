// The pure parts of proactive recommendations (SPEC §7): the PRO-3 value and clamp, and the PRO-6
// ConfigMap document `recommendations.json`.
#pragma once

#include <compare>
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "api/objects.h"
#include "common/result.h"
#include "decide/gates.h"
#include "decide/gpu_value.h"

namespace kubex::decide {

// ---------------------------------------------------------------- PRO-3

struct ProactiveValue {
  Hundredths gpu = 0;
  Clamp clamp = Clamp::kNone;  // which bound changed the value
};

// gpu = max(compute, memory) × (1 + headroom_percent/100), rounded UP to 0.01 (minimum 0.01), then clamped
// to the strategy's requests.gpu floor and ceiling for `container` (a container entry wins, ADM-7).
// `compute_gpus` and `memory_gpus` are in GPUs (SM p95 30 % -> 0.30; memory 80 % of a 0.25 share -> 0.20).
ProactiveValue proactive_value(double compute_gpus, double memory_gpus, int headroom_percent,
                               const api::StrategySpec& strategy, const std::string& container);

// PRO-6: a ConfigMap value is clamped as in PRO-3 (no headroom is added).
ProactiveValue clamp_proactive(Hundredths gpu, const api::StrategySpec& strategy,
                               const std::string& container);

// ---------------------------------------------------------------- PRO-6

struct RecommendationKey {
  std::string ns, kind, name, container;
  friend auto operator<=>(const RecommendationKey&, const RecommendationKey&) = default;
  friend bool operator==(const RecommendationKey&, const RecommendationKey&) = default;
};

struct RecommendationSet {
  // The accepted values; when an entry repeats namespace/kind/name/container, the last one wins.
  std::map<RecommendationKey, Hundredths> entries;
  // Valid entries in the document, repeats included: status.recommendationReload.lastCount and the number
  // the RecommendationsLoaded message starts with.
  std::size_t accepted = 0;
  // One error per problem of a skipped entry, e.g. `[2].gpu: must be > 0`, `[0].kind: required`.
  std::vector<common::Error> problems;

  const Hundredths* find(const RecommendationKey& key) const {
    auto it = entries.find(key);
    return it == entries.end() ? nullptr : &it->second;
  }
};

// Parses the `recommendations.json` value: a JSON array of {"namespace","kind","name","container","gpu"};
// `kind` is a workload kind (SEL-1); `gpu` is a number or a decimal string > 0 (kept per GPU-2).
// Invalid entries are skipped and reported. Text that is not JSON, or JSON that is not an array, is an
// error (the caller keeps its previous set: InvalidRecommendations).
common::Result<RecommendationSet> parse_recommendations(std::string_view text);

// The RecommendationsLoaded=True message of a loaded set from ConfigMap `location` ("ns/name"):
// `loaded <accepted> recommendations from ConfigMap <location>`, then ` (<n> after repeats: the last one
// wins)` when entries repeat a namespace/kind/name/container, then `; skipped <k> invalid entries: <problem>;
// <problem>…` when entries were skipped. <accepted> is lastCount.
std::string recommendations_loaded_message(const RecommendationSet& set, std::string_view location);

}  // namespace kubex::decide
