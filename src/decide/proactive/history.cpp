#include "decide/proactive/history.h"

#include <algorithm>

#include "decide/proactive/proactive.h"

namespace kubex::decide {

namespace {

std::string minutes_text(std::chrono::seconds s) {
  return std::to_string(s.count() / 60) + "m";
}

}  // namespace

HistoryValue history_value(const ContainerHistory& h, const Allocation& allocation, int headroom_percent,
                           const api::StrategySpec& strategy, const std::string& container) {
  HistoryValue out;
  if (allocation.gpu <= 0) {
    out.outcome = HistoryOutcome::kNoAllocation;
    out.reason = "no GPU allocated: only a ConfigMap entry gives a first value (PRO-4)";
    return out;
  }
  if (!h.compute_percent || !h.compute_span || !h.memory_percent || !h.memory_span) {
    out.outcome = HistoryOutcome::kNoData;
    out.reason = std::string("no GPU history: ") + (!h.compute_percent || !h.compute_span ? "no SM samples" : "no memory samples");
    return out;
  }
  for (auto [span, what] : {std::pair{*h.compute_span, "SM"}, std::pair{*h.memory_span, "memory"}}) {
    if (span < kMinHistorySpan) {
      out.outcome = HistoryOutcome::kTooLittleHistory;
      out.reason = std::string(what) + " history covers " + minutes_text(span) + ", under the 1h PRO-2 needs";
      return out;
    }
  }
  const double compute = std::max(*h.compute_percent, 0.0) / 100.0;
  const double share = allocation.whole_gpu ? 1.0 : static_cast<double>(allocation.gpu) / kOneGpu;
  const double memory = std::max(*h.memory_percent, 0.0) / 100.0 * share;
  ProactiveValue v = proactive_value(compute, memory, headroom_percent, strategy, container);
  out.outcome = HistoryOutcome::kValue;
  out.gpu = v.gpu;
  out.clamp = v.clamp;
  out.peak = std::max<Hundredths>(round_up(memory), 1);
  out.span = std::min(*h.compute_span, *h.memory_span);
  return out;
}

const char* source_name(ProactiveSource s) {
  switch (s) {
    case ProactiveSource::kHistory: return "history";
    case ProactiveSource::kConfigMap: return "configmap";
    case ProactiveSource::kNone: break;
  }
  return "";
}

ProactiveChoice choose_proactive(std::optional<Hundredths> configmap, const std::optional<HistoryValue>& history,
                                 std::optional<std::pair<Hundredths, ProactiveSource>> previous) {
  if (configmap) return {ProactiveSource::kConfigMap, *configmap, false};
  if (history && history->outcome == HistoryOutcome::kValue) return {ProactiveSource::kHistory, history->gpu, false};
  // No fresh history value. Only a previous history value survives, and only while the history cannot be refreshed:
  // a failed read, or too little / no data (never lowered or removed by a bad evaluation). A container that lost its
  // allocation, or a value whose ConfigMap entry vanished, has nothing to stand on.
  const bool unrefreshable = !history || history->outcome == HistoryOutcome::kNoData ||
                             history->outcome == HistoryOutcome::kTooLittleHistory;
  if (previous && previous->second == ProactiveSource::kHistory && unrefreshable) {
    return {ProactiveSource::kHistory, previous->first, true};
  }
  return {};
}

}  // namespace kubex::decide
