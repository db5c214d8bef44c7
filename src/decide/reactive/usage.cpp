#include <cmath>

#include "decide/reactive/steps.h"

namespace kubex::decide::reactive {

namespace {
constexpr double kGuard = 1e-9;
}  // namespace

std::optional<double> sample_of(const Samples& s, Query q) {
  const std::optional<double>* v = nullptr;
  switch (q) {
    case Query::kComputeUpsize: v = &s.compute_upsize; break;
    case Query::kComputeScaleBack: v = &s.compute_scale_back; break;
    case Query::kMemoryUpsize: v = &s.memory_upsize; break;
    case Query::kMemoryScaleBack: v = &s.memory_scale_back; break;
  }
  if (!v || !*v || !std::isfinite(**v)) return std::nullopt;  // VAL-8
  return **v < 0 ? 0.0 : **v;
}

bool is_current_allocation(const api::PrometheusSignal& p) {
  return p.interpretation == "currentAllocation";
}

double container_usage(double v, Hundredths a_c, bool current_allocation) {
  const double gpus = v / 100.0;  // REA-4
  return current_allocation ? gpus * (static_cast<double>(a_c) / 100.0) : gpus;
}

std::vector<PodUsage> usage(const std::vector<PodInput>& pods, Query q, bool current_allocation) {
  std::vector<PodUsage> out;
  for (const PodInput& pod : pods) {
    PodUsage u;
    u.pod = pod.name;
    for (const ContainerInput& c : pod.containers) {
      if (c.allocation <= 0) continue;  // REA-2: not included
      u.containers.push_back(c.name);
      u.allocated += c.allocation;
      if (auto v = sample_of(c.samples, q)) {
        u.used += container_usage(*v, c.allocation, current_allocation);
        ++u.samples;
      }
    }
    if (!u.containers.empty()) out.push_back(std::move(u));
  }
  return out;
}

bool at_or_above(double used, Hundredths allocated, std::int32_t threshold_percent) {
  const double a = static_cast<double>(allocated) / 100.0;
  return used * 100.0 >= a * static_cast<double>(threshold_percent) - kGuard;
}

const PodUsage* select(const std::vector<PodUsage>& pods) {
  const PodUsage* best = nullptr;
  for (const PodUsage& p : pods) {
    if (p.samples == 0) continue;
    if (!best || p.used > best->used + kGuard ||
        (std::fabs(p.used - best->used) <= kGuard && p.pod < best->pod)) {
      best = &p;
    }
  }
  return best;
}

}  // namespace kubex::decide::reactive
