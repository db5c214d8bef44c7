// PRO-2 history reads (DESIGN §3 observe/): the batched queries of prom/history_queries.h sent through a prom::Querier,
// at most `max_in_flight` at once, each answer mapped back to its workloads (namespace and pod pattern) and reduced per
// container: the maximum over the workload's pods, and the span from its oldest sample. Read-only, and slow by nature
// (Prometheus reads days of samples): callers run it off the reconcile workers.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "decide/proactive/history.h"
#include "prom/history_queries.h"

namespace kubex::prom {
class Querier;
}
namespace kubex::api {
struct WorkloadView;
}

namespace kubex::observe {

struct Caches;

// PRO-4's "current allocation" of each target container of a workload: read from its newest Running, not
// terminating pod (a KAI fraction for the fraction container, else its whole nvidia.com/gpu), else from its pod
// template when no pod runs. Containers without a GPU are left out.
std::map<std::string, decide::Allocation> current_allocations(const Caches& caches, const api::WorkloadView& w);

// The start time of the workload's oldest Running, not terminating pod (nullopt: none runs or none has started).
std::optional<common::TimePoint> oldest_pod_start(const Caches& caches, const api::WorkloadView& w);

// The same as the controllers read it: the informer caches in the engine, a fake in controller tests.
class HistorySubjects {
 public:
  virtual ~HistorySubjects() = default;
  virtual std::map<std::string, decide::Allocation> allocations(const api::WorkloadView& w) const = 0;
  // When its oldest Running pod started (nullopt: none runs): where the history of a workload without samples yet
  // begins (decide::history_covered_at).
  virtual std::optional<common::TimePoint> oldest_start(const api::WorkloadView&) const { return std::nullopt; }
};
std::unique_ptr<HistorySubjects> cached_history_subjects(const Caches& caches);

struct HistoryRequest {
  prom::HistoryWorkload workload;
  std::chrono::seconds lookback{0};         // L = maxAnalysisAgeDays × 86400 s
  std::chrono::seconds memory_lookback{0};  // Lm = min(L, now − the last allocation transition)
};

struct HistoryReadResult {
  // history_key(workload) -> container -> what came back (a signal whose query failed or matched nothing is unset).
  std::map<std::string, std::map<std::string, decide::ContainerHistory>> workloads;
  std::set<std::string> failed_workloads;  // keys whose batch had a failed query: their history could not be refreshed
  std::vector<std::string> errors;         // one message per failed query
  std::size_t queries = 0;          // requests sent, retries included (after a batch failed for good the rest are not
                                    // sent: their workloads are failed too)
  std::size_t failed_requests = 0;  // requests that failed, retried or not (kubex_prometheus_queries_total{error})
};

// "Kind/ns/name".
std::string history_key(const prom::HistoryWorkload& w);

// The queries of one reload, in the order they are sent: per lookback, per kind batch (≤ 100 workloads), compute
// and its span; memory and its span in the same batches for workloads whose Lm equals L, one batch each otherwise.
struct HistoryJob {
  prom::HistorySignal signal;
  std::vector<prom::HistoryWorkload> batch;
  std::chrono::seconds lookback;
  std::string promql;
};
std::vector<HistoryJob> history_jobs(const std::vector<HistoryRequest>& requests);

struct HistoryReadOptions {
  std::size_t max_in_flight = 2;  // PRO-2: at most 2 in flight per engine
  // Per-batch back-off: a failed query is sent again after each of these delays; when it still fails, the read
  // stops (the caller keeps every value and retries the whole reload later, PRO-8).
  std::vector<common::Duration> retry_after = {std::chrono::seconds(1), std::chrono::seconds(2)};
};

HistoryReadResult read_history(prom::Querier& querier, const std::vector<HistoryRequest>& requests,
                               common::TimePoint now, const HistoryReadOptions& options = {});

}  // namespace kubex::observe
