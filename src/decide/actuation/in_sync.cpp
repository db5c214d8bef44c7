// ACT-1: the in-sync check, the candidates and the canonical text of a desired value.
#include <algorithm>
#include <map>

#include "decide/actuation/steps.h"

namespace kubex::decide::actuation {

namespace {

std::map<std::string, const GpuAllocation*> by_container(const Allocation& a) {
  std::map<std::string, const GpuAllocation*> out;
  for (const GpuAllocation& g : a) out.emplace(g.container, &g);
  return out;
}

}  // namespace

bool in_sync(const Allocation& desired, const Allocation& live) {
  const auto d = by_container(desired);
  const auto l = by_container(live);
  if (d.size() != l.size()) return false;
  return std::equal(d.begin(), d.end(), l.begin(), [](const auto& x, const auto& y) {
    return x.first == y.first && x.second->value == y.second->value &&
           x.second->fraction == y.second->fraction;
  });
}

const std::optional<Allocation>& desired_for(const PodFacts& pod, const std::optional<Allocation>& workload) {
  return pod.desired ? pod.desired : workload;
}

std::vector<std::size_t> candidates(const std::vector<PodFacts>& pods,
                                    const std::optional<Allocation>& desired) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < pods.size(); ++i) {
    const PodFacts& p = pods[i];
    if (!p.controller_owned || p.finished()) continue;
    const std::optional<Allocation>& d = desired_for(p, desired);
    if (d && !in_sync(*d, p.live)) out.push_back(i);
  }
  return out;
}

std::string desired_key(const Allocation& a) {
  std::string out;
  for (const auto& [name, g] : by_container(a)) {
    if (!out.empty()) out += ',';
    out += name + '=' + format_gpu(g->value) + (g->fraction ? 'f' : 'w');
  }
  return out;
}

std::string pdb_key(std::string_view pod_uid, std::string_view desired) {
  return std::string(pod_uid) + '|' + std::string(desired);
}

}  // namespace kubex::decide::actuation
