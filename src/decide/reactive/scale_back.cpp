#include <algorithm>

#include "decide/reactive/steps.h"

namespace kubex::decide::reactive {

std::optional<Candidate> scale_back(const std::vector<PodUsage>& pods, const api::ScaleBackRule& rule,
                                    const std::map<std::string, Hundredths>& baseline,
                                    std::string_view signal) {
  if (pods.empty()) return std::nullopt;
  for (const PodUsage& p : pods) {
    // REA-7: missing or partial data never causes a downsize; one pod at or above the threshold blocks it.
    if (!p.complete() || at_or_above(p.used, p.allocated, rule.threshold_percent)) return std::nullopt;
  }
  const PodUsage* sel = select(pods);
  if (!sel) return std::nullopt;
  const Hundredths b = baseline_total(*sel, baseline);
  const double headroom = 1.0 + std::max(rule.headroom_percent, 0) / 100.0;
  const double wanted = sel->used * headroom;
  Candidate c;
  c.signal = signal;
  c.direction = kScaleBack;
  c.pod = sel->pod;
  c.allocated = sel->allocated;
  const Hundredths wanted_h = desired_value(wanted);
  if (wanted_h >= b) {
    c.exact = wanted;
    c.total = wanted_h;
  } else {  // never below the baseline
    c.exact = static_cast<double>(b) / 100.0;
    c.total = desired_value(b);
  }
  if (c.total >= sel->allocated) return std::nullopt;  // counts only if less than A_sel
  return c;
}

}  // namespace kubex::decide::reactive
