// PromQL text for the PRO-2 history reads, batched (SPEC §7 PRO-2 "Batching (revised)"). Pure: no I/O, no state.
//
// One instant query covers up to kMaxWorkloadsPerHistoryQuery workloads of one owner kind that share a lookback:
//   compute:  sum by (namespace,pod,container) (quantile_over_time(0.95, M{namespace=~"a|b",pod=~"(n1|n2)<suffix>"}[Ls]))
//   memory:   avg by (…) (max_over_time(F{…KAI pods…}[Ls]))  or  sum by (…) (max_over_time(F{…whole-GPU pods…}[Ls]))
//   span:     min by (…) (min_over_time(timestamp(M{…})[Ls:5m]))      (the caller takes now − value)
// with M = kubex_gpu_container_sm_utilization_percent and F = kubex_gpu_container_memory_footprint_percent. Results
// come back per (namespace, pod, container); history_owner() maps a pod back to its workload by namespace and the
// same pattern (the longest matching name wins).
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kubex::prom {

inline constexpr std::size_t kMaxWorkloadsPerHistoryQuery = 100;
inline constexpr std::string_view kHistoryComputeMetric = "kubex_gpu_container_sm_utilization_percent";
inline constexpr std::string_view kHistoryMemoryMetric = "kubex_gpu_container_memory_footprint_percent";

// A workload whose pods' history is read: its owner kind (SEL-1 spelling: Deployment, Rollout, StatefulSet,
// StrimziPodSet, DaemonSet, Job, CronJob, Model), namespace and name. `whole_gpu`: its pods hold whole GPUs (memory
// is then relative to one device and summed over devices, PRO-2), else KAI fractions.
struct HistoryWorkload {
  std::string kind, ns, name;
  bool whole_gpu = false;
  friend bool operator==(const HistoryWorkload&, const HistoryWorkload&) = default;
};

// The pod-name pattern of PRO-2 for one owner kind, as (prefix, suffix regex): Deployment and Rollout
// ("", "-[a-z0-9]+-[a-z0-9]+"); StatefulSet and StrimziPodSet ("", "-[0-9]+"); DaemonSet and Job ("", "-[a-z0-9]+");
// CronJob ("", "-[0-9]+-[a-z0-9]+"); Model ("model-", "-[a-z0-9]+-[a-z0-9]+"). nullopt for a kind without one
// (AnalysisRun pods are named one by one).
struct PodPattern {
  std::string_view prefix, suffix;
};
std::optional<PodPattern> pod_pattern(std::string_view kind);

// The two matchers of one batch (1..kMaxWorkloadsPerHistoryQuery workloads of ONE kind with a pod pattern), e.g.
// `namespace=~"a|b",pod=~"(n1|n2)-[a-z0-9]+-[a-z0-9]+"`, with the label names a policy's metric uses (REA-3's
// labels; the history queries use namespace and pod). Names are regex-escaped, namespaces and names sorted and
// de-duplicated.
std::string history_matchers(const std::vector<HistoryWorkload>& batch, std::string_view namespace_label,
                             std::string_view pod_label);

enum class HistorySignal { kCompute, kMemory, kComputeSpan, kMemorySpan };

// One query for `batch` (1..kMaxWorkloadsPerHistoryQuery workloads of ONE kind with a pod pattern), over `lookback`
// (whole seconds). Names are regex-escaped and de-duplicated; namespaces sorted and de-duplicated.
std::string history_query(HistorySignal signal, const std::vector<HistoryWorkload>& batch,
                          std::chrono::seconds lookback);

// The batches of `workloads` for one lookback: grouped by kind (kinds without a pod pattern are left out), each
// kind's workloads sorted by (namespace, name) and split into chunks of at most kMaxWorkloadsPerHistoryQuery.
std::vector<std::vector<HistoryWorkload>> history_batches(std::vector<HistoryWorkload> workloads);

// The workload of `batch` that pod `ns/pod` belongs to: same namespace, and the pod name is prefix + name + a
// suffix matching the kind's pattern; the longest name wins (`web` and `web-api` both match `web-api-7d9f-x2z`
// only through `web-api`'s pattern). nullptr when none does.
const HistoryWorkload* history_owner(const std::vector<HistoryWorkload>& batch, std::string_view ns,
                                     std::string_view pod);

}  // namespace kubex::prom
