#include "sim/cluster/workload_rollout.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>

#include "sim/cluster/workload_common.h"

namespace kubex::sim::cluster {

common::Result<RolloutLimits> resolve_fenceposts(const nlohmann::json& max_surge,
                                                 const nlohmann::json& max_unavailable,
                                                 std::int64_t replicas) {
  auto surge = scaled_int_or_percent(max_surge, replicas, true, 0);
  if (!surge) return common::fail(surge.error().message, "spec.strategy.rollingUpdate.maxSurge");
  auto unavailable = scaled_int_or_percent(max_unavailable, replicas, false, 0);
  if (!unavailable)
    return common::fail(unavailable.error().message, "spec.strategy.rollingUpdate.maxUnavailable");
  RolloutLimits l{std::max<std::int64_t>(*surge, 0), std::max<std::int64_t>(*unavailable, 0)};
  if (l.max_surge == 0 && l.max_unavailable == 0) l.max_unavailable = 1;
  return l;
}

std::int64_t rolling_new_replicas(std::int64_t replicas, std::int64_t max_surge, std::int64_t all_replicas,
                                  std::int64_t new_rs_replicas) {
  std::int64_t max_total = replicas + max_surge;
  if (all_replicas >= max_total) return new_rs_replicas;
  std::int64_t scale_up = std::min(max_total - all_replicas, replicas - new_rs_replicas);
  return new_rs_replicas + std::max<std::int64_t>(scale_up, 0);
}

std::vector<std::int64_t> rolling_scale_down_old(std::int64_t replicas, std::int64_t max_unavailable,
                                                 const RsView& new_rs, const std::vector<RsView>& old_rss) {
  std::vector<std::int64_t> sizes;
  for (const auto& rs : old_rss) sizes.push_back(rs.replicas);
  std::int64_t old_pods = std::accumulate(sizes.begin(), sizes.end(), std::int64_t{0});
  if (old_pods == 0) return sizes;
  std::int64_t all_pods = old_pods + new_rs.replicas;
  std::int64_t min_available = replicas - max_unavailable;
  std::int64_t new_unavailable = std::max<std::int64_t>(new_rs.replicas - new_rs.available, 0);
  std::int64_t max_scaled_down = all_pods - min_available - new_unavailable;
  if (max_scaled_down <= 0) return sizes;

  // Oldest first.
  std::vector<std::size_t> order(old_rss.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return old_rss[a].created < old_rss[b].created; });

  // 1. Unhealthy replicas of old sets go first: removing them costs no availability.
  std::int64_t cleaned = 0;
  for (std::size_t i : order) {
    if (cleaned >= max_scaled_down) break;
    std::int64_t unhealthy = sizes[i] - std::min(old_rss[i].available, sizes[i]);
    if (sizes[i] == 0 || unhealthy <= 0) continue;
    std::int64_t n = std::min(max_scaled_down - cleaned, unhealthy);
    sizes[i] -= n;
    cleaned += n;
  }

  // 2. Healthy replicas, as far as the available total above minAvailable allows.
  std::int64_t available = new_rs.available;
  for (const auto& rs : old_rss) available += rs.available;
  if (available <= min_available) return sizes;
  std::int64_t budget = available - min_available;
  std::int64_t scaled = 0;
  for (std::size_t i : order) {
    if (scaled >= budget) break;
    if (sizes[i] == 0) continue;
    std::int64_t n = std::min(sizes[i], budget - scaled);
    sizes[i] -= n;
    scaled += n;
  }
  return sizes;
}

std::vector<std::int64_t> proportional_sizes(std::int64_t replicas, std::int64_t max_surge,
                                             std::int64_t status_replicas, const std::vector<RsView>& rss) {
  std::vector<std::int64_t> sizes;
  std::int64_t total = 0;
  for (const auto& rs : rss) {
    sizes.push_back(rs.replicas);
    total += rs.replicas;
  }
  std::int64_t allowed = replicas > 0 ? replicas + max_surge : 0;
  std::int64_t to_add = allowed - total;
  if (to_add == 0 || rss.empty()) return sizes;

  // Scaling up: largest first, newer first among equals; scaling down: largest first, older first.
  std::vector<std::size_t> order(rss.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (rss[a].replicas != rss[b].replicas) return rss[a].replicas > rss[b].replicas;
    return to_add > 0 ? rss[a].created > rss[b].created : rss[a].created < rss[b].created;
  });

  std::int64_t added = 0;
  for (std::size_t i : order) {
    const RsView& rs = rss[i];
    std::int64_t fraction = 0;
    if (replicas == 0) {
      fraction = -rs.replicas;
    } else {
      std::int64_t annotated = rs.max_replicas >= 0 ? rs.max_replicas : status_replicas;
      if (annotated > 0) {
        double size =
            static_cast<double>(rs.replicas) * static_cast<double>(allowed) / static_cast<double>(annotated);
        fraction = static_cast<std::int64_t>(std::llround(size)) - rs.replicas;
      }
    }
    std::int64_t left = to_add - added;
    std::int64_t proportion = to_add > 0 ? std::min(fraction, left) : std::max(fraction, left);
    sizes[i] += proportion;
    added += proportion;
  }
  // Any remainder goes to the largest set.
  std::size_t first = order.front();
  sizes[first] = std::max<std::int64_t>(sizes[first] + (to_add - added), 0);
  for (auto& s : sizes) s = std::max<std::int64_t>(s, 0);
  return sizes;
}

}  // namespace kubex::sim::cluster
