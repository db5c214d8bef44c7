#include <algorithm>

#include "decide/reactive/steps.h"

namespace kubex::decide::reactive {

std::optional<Candidate> upsize(const std::vector<PodUsage>& pods, const api::UpsizeRule& rule,
                                std::string_view signal) {
  // REA-6: any pod at or above its threshold triggers the signal.
  const bool triggered = std::any_of(pods.begin(), pods.end(), [&](const PodUsage& p) {
    return p.samples > 0 && at_or_above(p.used, p.allocated, rule.threshold_percent);
  });
  if (!triggered) return std::nullopt;
  const PodUsage* sel = select(pods);
  if (!sel) return std::nullopt;
  const double a_sel = static_cast<double>(sel->allocated) / 100.0;
  const double headroom = 1.0 + std::max(rule.headroom_percent, 0) / 100.0;
  const double cap = a_sel * std::max(rule.max_percent, 0) / 100.0;  // relative to the CURRENT allocation
  Candidate c;
  c.signal = signal;
  c.direction = kUpsize;
  c.pod = sel->pod;
  c.allocated = sel->allocated;
  c.exact = std::min(sel->used * headroom, cap);
  c.total = desired_value(c.exact);
  if (c.total <= sel->allocated) return std::nullopt;  // counts only if greater than A_sel
  return c;
}

}  // namespace kubex::decide::reactive
