#include "decide/packing/occupancy.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <string>
#include <tuple>

namespace kubex::decide::packing {
namespace {

bool by_name(const PoolPod* a, const PoolPod* b) { return std::tie(a->name, a->ns) < std::tie(b->name, b->ns); }

}  // namespace

Occupancy occupancy(std::int64_t gpu_capacity, const std::vector<const PoolPod*>& pods) {
  Occupancy out;
  out.gpus.assign(static_cast<std::size_t>(std::max<std::int64_t>(0, gpu_capacity)), 0);
  out.pod_gpus.resize(pods.size());
  std::vector<bool> taken(out.gpus.size(), false);  // claimed by a whole pod or a group

  std::vector<std::size_t> whole, loose;
  std::map<std::string, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < pods.size(); ++i) {
    const PoolPod& p = *pods[i];
    if (p.fraction > 0) {
      if (p.gpu_group.empty()) loose.push_back(i);
      else groups[p.gpu_group].push_back(i);
    } else if (p.whole_gpus > 0) {
      whole.push_back(i);
    }
  }
  auto lowest_free = [&]() -> int {
    for (std::size_t g = 0; g < out.gpus.size(); ++g)
      if (!taken[g] && out.gpus[g] == 0) return static_cast<int>(g);
    return -1;
  };

  std::sort(whole.begin(), whole.end(), [&](std::size_t a, std::size_t b) {
    if (pods[a]->whole_gpus != pods[b]->whole_gpus) return pods[a]->whole_gpus > pods[b]->whole_gpus;
    return by_name(pods[a], pods[b]);
  });
  for (std::size_t i : whole) {
    std::vector<int> got;
    for (std::int64_t k = 0; k < pods[i]->whole_gpus; ++k) {
      int g = lowest_free();
      if (g < 0) break;
      taken[static_cast<std::size_t>(g)] = true;
      out.gpus[static_cast<std::size_t>(g)] = kOneGpu;
      got.push_back(g);
    }
    if (static_cast<std::int64_t>(got.size()) < pods[i]->whole_gpus) out.over_capacity = true;
    out.pod_gpus[i] = std::move(got);
  }

  struct Group {
    std::string name;
    Hundredths sum = 0;
    std::vector<std::size_t> members;
  };
  std::vector<Group> ordered;
  for (auto& [name, members] : groups) {
    Hundredths sum = 0;
    for (std::size_t i : members) sum += pods[i]->fraction;
    ordered.push_back({name, sum, members});
  }
  std::stable_sort(ordered.begin(), ordered.end(), [](const Group& a, const Group& b) { return a.sum > b.sum; });
  for (const auto& grp : ordered) {
    int g = lowest_free();
    if (g < 0) {
      out.over_capacity = true;
      continue;
    }
    taken[static_cast<std::size_t>(g)] = true;
    out.gpus[static_cast<std::size_t>(g)] = grp.sum;
    if (grp.sum > kOneGpu) out.over_capacity = true;
    for (std::size_t i : grp.members) out.pod_gpus[i] = {g};
  }

  std::sort(loose.begin(), loose.end(), [&](std::size_t a, std::size_t b) {
    if (pods[a]->fraction != pods[b]->fraction) return pods[a]->fraction > pods[b]->fraction;
    return by_name(pods[a], pods[b]);
  });
  for (std::size_t i : loose) {
    bool placed = false;
    for (std::size_t g = 0; g < out.gpus.size(); ++g) {
      bool whole_gpu = taken[g] && out.gpus[g] == kOneGpu;
      if (whole_gpu || out.gpus[g] + pods[i]->fraction > kOneGpu) continue;
      out.gpus[g] += pods[i]->fraction;
      out.pod_gpus[i] = {static_cast<int>(g)};
      placed = true;
      break;
    }
    if (!placed) out.over_capacity = true;
  }
  return out;
}

}  // namespace kubex::decide::packing
