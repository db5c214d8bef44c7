// `kubex plan sizing`'s history reads (issue 36; DESIGN §3 observe/): a reactive policy's own compute and memory
// metrics over a past window, read with one range query per signal and batch (prom/sizing_queries.h, batched as
// SPEC PRO-2 "Batching (revised)": never per workload), mapped back to workloads by namespace and pod-name pattern
// (the longest name wins), and turned into the replay's samples in GPUs (REA-4): fullGPU v/100, currentAllocation
// v/100 × the container's allocation. Per timestamp the highest value over the workload's pods is kept. Read-only.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "api/objects.h"
#include "common/clock.h"
#include "decide/gpu_value.h"
#include "decide/sizing/replay.h"
#include "prom/history_queries.h"

namespace kubex::prom {
class Querier;
}

namespace kubex::observe {

// One container to read: its workload (kind, namespace, name) and the allocation a currentAllocation sample is a
// share of (REA-4's a_c, hundredths of a GPU).
struct SizingSubject {
  prom::HistoryWorkload workload;
  std::string container;
  decide::Hundredths allocation = 0;
};

struct SizingRead {
  // sizing_key(subject) -> its samples in time order (absent: no sample came back).
  std::map<std::string, std::vector<decide::sizing::UsageSample>> samples;
  std::size_t queries = 0;
  std::vector<std::string> errors;  // one per failed query (its batch has no samples)
};

// "Kind/ns/name/container".
std::string sizing_key(const SizingSubject& s);

// The compute and memory signals of `reactive` over [start, end] at `step`, for `subjects` (workloads of a kind
// without a pod pattern are not read).
SizingRead read_sizing_history(prom::Querier& querier, const api::ReactiveSpec& reactive,
                               const std::vector<SizingSubject>& subjects, common::TimePoint start,
                               common::TimePoint end, std::chrono::seconds step);

}  // namespace kubex::observe
