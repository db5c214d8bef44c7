#include <algorithm>

#include "decide/reactive/reactive.h"
#include "decide/reactive/steps.h"

namespace kubex::decide::reactive {

std::map<std::string, Hundredths> peak_limits(const Input& in, const std::map<std::string, Hundredths>& requests) {
  std::map<std::string, Hundredths> out = in.existing_limits;
  if (!in.spec) return out;
  const bool current_allocation = is_current_allocation(in.spec->memory.prometheus);
  std::map<std::string, double> peak;        // GPUs, per container
  std::map<std::string, Hundredths> alloc;   // the largest a_c, per container
  for (const PodInput& pod : in.pods) {
    for (const ContainerInput& c : pod.containers) {
      if (c.allocation <= 0) continue;  // REA-2: not included
      alloc[c.name] = std::max(alloc[c.name], c.allocation);
      auto v = sample_of(c.samples, Query::kMemoryUpsize);
      if (!v) continue;
      const double gpus = container_usage(*v, c.allocation, current_allocation);
      auto [it, inserted] = peak.try_emplace(c.name, gpus);
      if (!inserted) it->second = std::max(it->second, gpus);
    }
  }
  for (const auto& [name, gpus] : peak) {
    Hundredths request = alloc[name];
    if (auto r = requests.find(name); r != requests.end()) {
      request = r->second;
    } else if (auto e = in.existing.find(name); e != in.existing.end()) {
      request = e->second;
    }
    const Hundredths value = std::max(desired_value(gpus), request);  // GPU-2, never below the request
    auto old = in.existing_limits.find(name);
    if (old != in.existing_limits.end()) {
      if (value == old->second) continue;
      auto before = in.existing.find(name);
      auto after = requests.find(name);
      const bool request_unchanged =
          before != in.existing.end() && after != requests.end() && before->second == after->second;
      if (value < old->second && request_unchanged && old->second >= request) continue;  // never lowered
    }
    out[name] = value;
  }
  return out;
}

}  // namespace kubex::decide::reactive
