#include "sim/gpu/demand.h"

#include <algorithm>

#include "sim/cluster/kai_modes.h"

namespace kubex::sim::gpu {

const char* allocation_type_label(AllocationType t) {
  return t == AllocationType::kFraction ? "fraction" : "whole";
}

std::vector<GpuContainer> gpu_containers(const cluster::SimPod& pod) {
  std::vector<GpuContainer> out;
  const auto& cs = pod.containers;
  // Non-restartable init containers run to completion before the others; they never show up in the model.
  auto target = [&](std::size_t i) { return cs[i].restart_always; };
  std::optional<std::size_t> fraction_index;
  if (pod.gpu_fraction > 0 && !pod.gpu_fraction_invalid) {
    static const std::string kKey = api::keys::kGpuFractionContainerName;  // no temporary string per lookup
    auto named = pod.annotations.find(kKey);
    for (std::size_t i = 0; i < cs.size() && !fraction_index; ++i) {
      if (!target(i)) continue;
      if (named == pod.annotations.end() || named->second.empty()) {
        if (!cs[i].init) fraction_index = i;
      } else if (cs[i].name == named->second) {
        fraction_index = i;
      }
    }
  }
  for (std::size_t i = 0; i < cs.size(); ++i) {
    if (!target(i)) continue;
    if (fraction_index == i) {
      out.push_back({i, AllocationType::kFraction, pod.gpu_fraction, 0,
                     cluster::valid_fraction_limit(pod).value_or(0)});
    } else if (cs[i].gpu > 0) {
      out.push_back({i, AllocationType::kWhole, 0, cs[i].gpu});
    }
  }
  return out;
}

const std::pair<const std::string, std::string>* demand_annotation(const cluster::SimPod& pod,
                                                                   std::string_view base,
                                                                   const std::string& container) {
  std::string key(base);
  key += '.';
  key += container;
  if (auto it = pod.annotations.find(key); it != pod.annotations.end()) return &*it;
  key.resize(base.size());
  if (auto it = pod.annotations.find(key); it != pod.annotations.end()) return &*it;
  return nullptr;
}

std::vector<std::string> stray_container_keys(const cluster::SimPod& pod, std::string_view base,
                                              const std::vector<GpuContainer>& gpu) {
  std::vector<std::string> out;
  std::string prefix(base);
  prefix += '.';
  for (auto it = pod.annotations.lower_bound(prefix); it != pod.annotations.end(); ++it) {
    if (it->first.compare(0, prefix.size(), prefix) != 0) break;
    std::string name = it->first.substr(prefix.size());
    bool known = std::any_of(gpu.begin(), gpu.end(),
                             [&](const GpuContainer& g) { return pod.containers[g.index].name == name; });
    if (!known) out.push_back(it->first);
  }
  return out;
}

PatternCache::Entry PatternCache::get(const std::string& text) {
  std::lock_guard lk(mu_);
  auto it = by_text_.find(text);
  if (it != by_text_.end()) return it->second;
  // Bounded: distinct annotation texts are few in practice; start over if a client floods us.
  if (by_text_.size() >= 10000) by_text_.clear();
  auto entry = std::make_shared<const common::Result<UsagePattern>>(UsagePattern::parse(text));
  by_text_.emplace(text, entry);
  return entry;
}

}  // namespace kubex::sim::gpu
