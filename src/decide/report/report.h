// What a platform team reads (SPEC §12a, RPT-1…RPT-3, RPT-5): per workload that holds or asks for a GPU, the
// GPUs as written (the template as the user wrote it, RBK-1 `original` when present, times the replicas running
// now) against the GPUs its running pods hold, the usage over the window (the PRO-2 metrics), the idle flag
// (RPT-2) and, with prices, GPU-hours and money saved and idle (RPT-3); then totals per namespace and for the
// cluster. Pure: observe/ fills the input from the caches and Prometheus; `kubex report`, the engine's
// kubex_workload_gpus gauge and the demo's closing report all read these numbers.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/objects.h"
#include "common/clock.h"
#include "decide/gpu_value.h"

namespace kubex::decide::actuation {
struct Original;
struct PodFacts;
}

namespace kubex::decide::report {

// RPT-3: the price of one node's GPUs per GPU-hour.
struct Price {
  double per_gpu_hour = 0;
  std::string currency;
  friend bool operator==(const Price&, const Price&) = default;
};
// The first spec.cost.gpuHourPrices entry whose nodeSelector matches the node's labels; nullopt = unpriced.
std::optional<Price> node_price(const std::vector<api::GpuHourPrice>& prices,
                                const std::map<std::string, std::string>& node_labels);

// GPUs of one pod as the user wrote it (RBK-1 `original`): its gpu-fraction annotation when it had one, else the
// sum of its containers' nvidia.com/gpu (request, else limit) in whole GPUs.
Hundredths written_gpus(const actuation::Original& original);

// RPT-5 (kubex_workload_gpus): a workload's GPUs as written (written_gpus of `original` × its running pods) and
// held (Σ the running pods' live allocations), from the pods as actuation reads them.
struct WorkloadGpus {
  Hundredths as_written = 0, held = 0;
  friend bool operator==(const WorkloadGpus&, const WorkloadGpus&) = default;
};
WorkloadGpus workload_gpus(const actuation::Original* original, const std::vector<actuation::PodFacts>& pods);

struct RunningPod {
  std::string name, node;
  Hundredths held = 0;           // its GPU allocation now (fractions, or whole GPUs × 100)
  common::TimePoint started{};   // status.startTime (creation when absent)
  std::optional<Price> price;    // its node's (RPT-3)
};

// What Prometheus said about the workload over the window (PRO-2 metrics, the busiest pod): nullopt fields when
// there is no data. `queried` is false when Prometheus could not be read at all.
struct WindowUsage {
  bool queried = false;
  std::optional<double> sm_p95_gpus;      // Σ over containers of the p95 SM use, in GPUs
  std::optional<double> memory_max_gpus;  // Σ over containers of the max memory footprint, in GPUs
  std::optional<std::chrono::seconds> span;  // the shorter span of the two signals inside the window
};

struct WorkloadInput {
  std::string ns, kind, name;
  bool managed = false;            // a policy manages it (kubex sizes its pods)
  Hundredths written_per_pod = 0;  // GPUs of one pod as the user wrote it (RBK-1 original, else the template)
  std::vector<RunningPod> running;  // its Running pods that are not terminating
  WindowUsage usage;
};

struct IdleRule {  // GlobalConfiguration spec.report.idle (RPT-2)
  std::int32_t sm_percent = 5, memory_percent = 10;
  std::int64_t minimum_gpus_milli = 250;
};
IdleRule idle_rule(const api::GlobalConfigSpec& g);

// Money per currency ("USD" -> 12.5).
using Money = std::map<std::string, double>;

struct WorkloadRow {
  std::string ns, kind, name;
  bool managed = false;
  int replicas = 0;           // running pods
  Hundredths as_written = 0;  // written_per_pod × replicas
  Hundredths held = 0;        // Σ held over the running pods
  WindowUsage usage;
  bool idle = false;          // RPT-2
  std::string idle_reason;    // why it is (or is not) idle, one sentence
  double hours = 0;           // hours of the window the numbers stand on
  double gpu_hours_saved = 0;  // (as written − held) × hours
  double gpu_hours_held = 0;   // held × hours
  Money saved, idle_cost;      // RPT-3, over priced pods only
  bool priced = false;         // some pod runs on a priced node
  Hundredths saved_gpus() const { return as_written > held ? as_written - held : 0; }
};

struct Totals {
  std::string ns;  // "" for the cluster
  int workloads = 0, idle_workloads = 0;
  Hundredths as_written = 0, held = 0;
  double gpu_hours_saved = 0, idle_gpu_hours = 0;
  Money saved, idle_cost;
  // held / as written saved, in percent of as written (0 when nothing is written).
  double saved_percent() const;
};

struct Summary {
  std::vector<WorkloadRow> workloads;  // idle first, then by namespace, kind, name
  std::vector<Totals> namespaces;      // by name
  Totals cluster;
};

// RPT-1…RPT-3. `window`: --since; `now`: the report's time. A workload's hours are the part of the window its
// numbers stand on: the span of its usage data when there is some, else the age of its oldest running pod,
// never more than the window. GPU-hours and money are rounded to two decimals per row, and totals are the sums
// of the rounded rows, so a table's rows add up to its totals.
Summary summarize(const std::vector<WorkloadInput>& workloads, const IdleRule& idle, std::chrono::seconds window,
                  common::TimePoint now);

// RPT-2 alone (also for tests): whether the workload is idle, and the sentence that says why (not).
bool is_idle(const WorkloadInput& w, Hundredths held, const IdleRule& rule, std::string* why);

// "12.50 USD", "12.50 USD + 3.00 EUR", "" for none (RPT-3: two decimals, the entry's currency).
std::string format_money(const Money& m);
// "1.5", "0.25": GPU-hours with at most two decimals.
std::string format_hours(double h);

// Pods per GPU (RPT-4's chart): how many GPUs hold k pods, k = 0 (empty), 1, 2, …, from each node's GPU
// capacity and its pods' GPU groups (pods of one group share one device; a whole-GPU pod fills its GPUs alone).
struct DevicePod {
  std::string node, gpu_group;  // "" group: not a shared fraction
  Hundredths fraction = 0;      // > 0: a KAI fraction
  std::int64_t whole_gpus = 0;  // whole GPUs of a pod without a fraction
};
std::map<int, int> pods_per_gpu(const std::map<std::string, std::int64_t>& node_gpus,
                                const std::vector<DevicePod>& pods);

}  // namespace kubex::decide::report
