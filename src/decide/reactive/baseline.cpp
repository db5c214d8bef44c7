#include <algorithm>

#include "decide/reactive/steps.h"

namespace kubex::decide::reactive {

std::map<std::string, Hundredths> baselines(const std::vector<PodInput>& pods,
                                            const std::map<std::string, Hundredths>& existing,
                                            const std::optional<State>& stored) {
  // a_c per container name; pods of one workload normally agree, and during a rollout the largest counts
  // (the baseline is a floor for scale-back, so the larger one is the careful choice).
  std::map<std::string, Hundredths> current;
  for (const PodInput& pod : pods) {
    for (const ContainerInput& c : pod.containers) {
      if (c.allocation <= 0) continue;
      Hundredths& v = current[c.name];
      v = std::max(v, c.allocation);
    }
  }
  std::map<std::string, Hundredths> out;
  for (const auto& [name, a] : current) {
    Hundredths b = a;  // REA-5: a_c whenever the owner has no reactive entry for c
    if (existing.contains(name) && stored) {
      if (auto it = stored->baseline.find(name); it != stored->baseline.end()) b = it->second;
    }
    out[name] = b;
  }
  return out;
}

Hundredths baseline_total(const PodUsage& pod, const std::map<std::string, Hundredths>& baseline) {
  Hundredths b = 0;
  for (const std::string& c : pod.containers) {
    if (auto it = baseline.find(c); it != baseline.end()) b += it->second;
  }
  return b;
}

}  // namespace kubex::decide::reactive
