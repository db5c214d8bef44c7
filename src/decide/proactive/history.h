// The pure decisions of history-based proactive recommendations (SPEC §7): what one container's GPU history is worth
// (PRO-2's span rule, PRO-3's value, PRO-4's coverage, the memory peak of PRO-7) and which source the owner's value
// comes from (PRO-7: ConfigMap over history; "any previous value stays" only for a history value that cannot be
// refreshed). No I/O: the caller reads Prometheus (prom/history_queries.h) and passes what came back.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "api/objects.h"
#include "decide/gates.h"
#include "decide/gpu_value.h"

namespace kubex::decide {

inline constexpr std::chrono::hours kMinHistorySpan{1};  // PRO-2: each signal needs ≥ 1h inside its lookback

// What Prometheus said about one container of a workload (maxima over the workload's pods, PRO-2), or nothing for a
// signal whose query failed or matched no series.
struct ContainerHistory {
  std::optional<double> compute_percent;  // SM p95, % of a full GPU
  std::optional<double> memory_percent;   // max footprint: % of the allocation (KAI) or of one device (whole GPUs)
  std::optional<std::chrono::seconds> compute_span, memory_span;  // now − the oldest sample inside the lookback
};

// The container's current GPU allocation (PRO-4): a KAI fraction, whole GPUs, or none.
struct Allocation {
  Hundredths gpu = 0;      // 0: no GPU (no history recommendation, PRO-4)
  bool whole_gpu = false;  // nvidia.com/gpu (memory relative to one device) vs a KAI fraction (relative to it)
};

enum class HistoryOutcome {
  kValue,             // a value from at least an hour of both signals
  kNoAllocation,      // PRO-4: the container holds no GPU
  kNoData,            // a signal has no samples
  kTooLittleHistory,  // a signal's span is under kMinHistorySpan
};

struct HistoryValue {
  HistoryOutcome outcome = HistoryOutcome::kNoData;
  Hundredths gpu = 0;        // kValue: PRO-3's value, clamped
  Clamp clamp = Clamp::kNone;
  Hundredths peak = 0;       // kValue: the memory peak in GPUs, rounded up (PRO-7, limits.gpu under KAI-2)
  std::chrono::seconds span{0};  // kValue: the shorter of the two spans (the history the value stands on)
  std::string reason;        // why there is no value, for the summary and `kubex explain`
};

// PRO-2 … PRO-4 for one container. compute = p95/100 GPUs; memory = v/100 × allocation (KAI) or v/100 (whole GPUs);
// value = max(compute, memory) × (1 + headroom/100), rounded up to 0.01, clamped to the strategy (PRO-3).
HistoryValue history_value(const ContainerHistory& history, const Allocation& allocation, int headroom_percent,
                           const api::StrategySpec& strategy, const std::string& container);

enum class ProactiveSource { kNone, kHistory, kConfigMap };
const char* source_name(ProactiveSource s);  // "", "history", "configmap"

struct ProactiveChoice {
  ProactiveSource source = ProactiveSource::kNone;  // kNone: no value (remove any)
  Hundredths gpu = 0;
  bool kept = false;  // the previous history value, kept because history could not be refreshed
};

// PRO-7 for one container. `configmap`: its ConfigMap entry (clamped), if any. `history`: this evaluation's outcome,
// or nullopt when the history could not be read (Prometheus down, a query failed). `previous`: the value and source
// the owner holds now. A ConfigMap entry always wins; else a fresh history value; else a previous HISTORY value stays
// when the history could not be refreshed (query failed, too little or no data); a value whose source vanished
// (a ConfigMap entry gone, no history) is removed.
ProactiveChoice choose_proactive(std::optional<Hundredths> configmap, const std::optional<HistoryValue>& history,
                                 std::optional<std::pair<Hundredths, ProactiveSource>> previous);

}  // namespace kubex::decide
