// PromQL text of `kubex plan sizing`'s history reads (issue 36): a reactive policy's OWN metric (spec.metrics.
// <signal>.prometheus: metric, label names, interpretation) over a past window, as a range query with one point per
// step, batched as PRO-2's history reads are (SPEC PRO-2 "Batching (revised)"): one query per signal covers up to
// kMaxWorkloadsPerHistoryQuery workloads of one owner kind, with history_matchers()' pod-name alternation + kind
// suffix and namespace alternation. Pure: no I/O, no state.
//
//   gauge:    agg by (<ns>,<pod>,<ctr>) (max_over_time(<metric>{<matchers>}[<step>s]))
//   counter:  agg by (<ns>,<pod>,<ctr>) (rate(<metric>{<matchers>}[1m]))          (a `_total` metric, REA-3)
//
// agg is REA-3's: sum for fullGPU, avg for currentAllocation. Each point of a gauge is the highest sample of the
// step before it, so a memory peak between two steps is not lost; with a scrape interval of one step (the engine's
// 1m gpuReactiveCheckInterval) it is exactly the sample the engine's windows would hold.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "prom/history_queries.h"
#include "prom/promql.h"

namespace kubex::prom {

// One range query of signal `s` for `batch` (1..kMaxWorkloadsPerHistoryQuery workloads of ONE kind with a pod
// pattern, as history_batches() makes them); `step` in whole seconds.
std::string sizing_range_query(const SignalSelector& s, const std::vector<HistoryWorkload>& batch,
                               std::chrono::seconds step);

}  // namespace kubex::prom
