#include <algorithm>

#include "decide/reactive/steps.h"

namespace kubex::decide::reactive {

namespace {
constexpr double kGuard = 1e-9;
constexpr double kSaturatedPercent = 90.0;  // REA-11: ≥ 90 % of a_c
}  // namespace

bool memory_saturated(const PodInput& pod, const api::SignalConfig& memory, common::TimePoint now) {
  const bool current = is_current_allocation(memory.prometheus);
  const auto window = std::chrono::duration_cast<common::TimePoint::duration>(memory.upsize.metrics_window);
  for (const ContainerInput& c : pod.containers) {
    if (c.allocation <= 0 || !c.last_terminated_at) continue;
    const common::TimePoint t = *c.last_terminated_at;
    if (t < now - window || t > now) continue;  // the restart lies inside the memory upsize window
    const auto v = sample_of(c.samples, Query::kMemoryUpsize);
    if (!v) continue;  // a restart without the usage evidence is ignored
    const double used = container_usage(*v, c.allocation, current);
    if (used * 100.0 >= static_cast<double>(c.allocation) * kSaturatedPercent / 100.0 - kGuard) return true;
  }
  return false;
}

bool out_of_memory_before_samples(const PodInput& pod, const api::SignalConfig& memory, common::TimePoint now) {
  const auto window = std::chrono::duration_cast<common::TimePoint::duration>(memory.upsize.metrics_window);
  for (const ContainerInput& c : pod.containers) {
    if (c.allocation <= 0 || !c.oom_exit || !c.last_terminated_at) continue;
    const common::TimePoint t = *c.last_terminated_at;
    if (t < now - window || t > now) continue;
    if (!sample_of(c.samples, Query::kMemoryUpsize)) return true;
  }
  return false;
}

std::optional<Candidate> oom(const std::vector<PodInput>& pods, const std::vector<PodUsage>& memory_upsize,
                             const api::SignalConfig& memory, common::TimePoint now) {
  std::vector<PodUsage> saturated;
  const PodUsage* unsampled = nullptr;  // the largest pod that died of OOM before any sample (ties by name)
  for (const PodUsage& u : memory_upsize) {
    auto pod = std::find_if(pods.begin(), pods.end(), [&](const PodInput& p) { return p.name == u.pod; });
    if (pod == pods.end()) continue;
    if (memory_saturated(*pod, memory, now)) saturated.push_back(u);
    if (u.samples == 0 && out_of_memory_before_samples(*pod, memory, now) &&
        (!unsampled || u.allocated > unsampled->allocated ||
         (u.allocated == unsampled->allocated && u.pod < unsampled->pod))) {
      unsampled = &u;
    }
  }
  const PodUsage* sel = select(saturated);  // a saturated pod always has its memory upsize sample
  if (!sel) sel = unsampled;
  if (!sel) return std::nullopt;
  Candidate c;
  c.signal = kMemory;
  c.direction = kUpsize;
  c.pod = sel->pod;
  c.allocated = sel->allocated;
  c.oom = true;
  c.exact = static_cast<double>(sel->allocated) / 100.0 * std::max(memory.upsize.max_percent, 0) / 100.0;
  c.total = desired_value(c.exact);  // the largest step allowed
  if (c.total <= sel->allocated) return std::nullopt;
  return c;
}

}  // namespace kubex::decide::reactive
