// What `kubex report` and the engine's kubex_workload_gpus gauge read (SPEC RPT-1, RPT-5; DESIGN §3 observe/):
// per workload of the caches, GPUs as the user wrote them (RBK-1 `original` on the owner, else the pod template or
// the first pod admission left alone), its running pods with what they hold and where (node, price), and over a
// window the PRO-2 usage metrics, read with the proactive recommender's batched queries. Read-only.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/objects.h"
#include "common/clock.h"
#include "decide/actuation/rollback.h"
#include "decide/proactive/history.h"
#include "decide/report/report.h"
#include "prom/history_queries.h"

namespace kubex::prom {
class Querier;
}
namespace kubex::api {
struct WorkloadView;
}

namespace kubex::observe {

struct Caches;

struct ReportWorkload {
  std::shared_ptr<const api::WorkloadView> view;
  decide::report::WorkloadInput input;  // usage and `managed` are filled by the caller
  std::map<std::string, decide::Allocation> allocations;  // current allocation per container (PRO-4)
};

// RBK-1 `original` of the workload: the owner's rollback-state when it parses, else from its template (or the
// first pod admission left alone). nullopt when neither can be read.
std::optional<decide::actuation::Original> written_original(const Caches& caches, const api::WorkloadView& w);

// The GPU figures of one workload: `written_per_pod` and its running pods (held, node, start, price).
decide::report::WorkloadInput workload_gpus(const Caches& caches, const api::WorkloadView& w,
                                            const std::vector<api::GpuHourPrice>& prices);

// Every workload of the caches whose pods hold a GPU or whose template asks for one.
std::vector<ReportWorkload> report_workloads(const Caches& caches, const std::vector<api::GpuHourPrice>& prices);

struct UsageReadResult {
  std::size_t queries = 0;
  std::vector<std::string> errors;  // one per failed query; the workloads of a failed batch have no data
};
// Fills input.usage of each workload over `window` (the PRO-2 compute and memory metrics, batched as PRO-2).
UsageReadResult read_report_usage(prom::Querier& querier, std::vector<ReportWorkload>& workloads,
                                  std::chrono::seconds window, common::TimePoint now);

// RPT-4's pods-per-GPU chart input: every node's GPU capacity and the GPU pods running on nodes.
struct DeviceInventory {
  std::map<std::string, std::int64_t> node_gpus;
  std::vector<decide::report::DevicePod> pods;
};
DeviceInventory device_inventory(const Caches& caches, const std::string& reservation_namespace);

}  // namespace kubex::observe
