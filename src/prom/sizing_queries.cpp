#include "prom/sizing_queries.h"

namespace kubex::prom {

std::string sizing_range_query(const SignalSelector& s, const std::vector<HistoryWorkload>& batch,
                               std::chrono::seconds step) {
  const std::string by = std::string(s.agg == Aggregation::kSum ? "sum" : "avg") + " by (" + s.namespace_label +
                         "," + s.pod_label + "," + s.container_label + ") ";
  const std::string selector = s.metric + "{" + history_matchers(batch, s.namespace_label, s.pod_label) + "}";
  if (is_counter(s.metric)) return by + "(rate(" + selector + "[1m]))";  // REA-3: a counter's gauge
  return by + "(max_over_time(" + selector + "[" + std::to_string(step.count()) + "s]))";
}

}  // namespace kubex::prom
