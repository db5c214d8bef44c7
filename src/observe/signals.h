// What the reactive recommender observes (DESIGN §3 observe/): the pods of a workload that count (REA-2) with
// each included container's allocation and last termination (REA-11), and their Prometheus samples for the
// four REA-3 queries of a policy (compute and memory, upsize and scale-back windows), at most 500 pods per
// query and never one query per pod. Read-only.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/objects.h"
#include "api/views.h"
#include "common/clock.h"
#include "common/result.h"
#include "decide/reactive/reactive.h"
#include "prom/promql.h"

namespace kubex::prom {
class Querier;
}

namespace kubex::observe {

struct Caches;

// A policy signal's spec.metrics.<signal>.prometheus as the queries take it: metric, label names, and REA-3's
// aggregation (sum for fullGPU, avg for currentAllocation).
prom::SignalSelector selector_of(const api::PrometheusSignal& p);

// The live pods of a workload (SEL-1 in reverse): through its ReplicaSets (Deployment, Rollout) or Jobs
// (CronJob, AnalysisRun), else owned directly. Terminating pods included; callers filter.
std::vector<std::shared_ptr<const api::PodView>> pods_of(const Caches& caches, const api::WorkloadView& w);

// ADM-12: a cached pod's valid gpu-fraction (nullopt when absent or invalid) and the container it applies to:
// the one named by gpu-fraction-container-name, else the first regular container.
struct PodFraction {
  std::optional<decide::Hundredths> value;
  std::string container;
};
PodFraction pod_fraction(const api::PodView& pod);

// SPEC §0 a_c of each target container of `pod`, in pod order: the gpu-fraction for the fraction container
// (ADM-12), else its nvidia.com/gpu request, else its limit, else 0.
std::vector<decide::reactive::ContainerInput> pod_containers(const api::PodView& pod);

// The workload's pods a reactive policy evaluates.
struct WorkloadPods {
  std::string ns;
  std::vector<decide::reactive::PodInput> pods;  // REA-2 eligible, sorted by name; only containers with a_c > 0
};

// REA-2: the eligible pods of `w` (Running, not terminating, started at least `min_age` ago) with their
// included containers and, for a pod labelled with KAI's runai-gpu-group, its GPU ("<node>/<group>", TEL-4);
// a pod without any included container is left out.
WorkloadPods eligible_pods(const Caches& caches, const api::WorkloadView& w, common::Duration min_age,
                           common::TimePoint now);

// The workloads a reactive cycle looks at and their eligible pods: the informer caches in the engine
// (cached_signal_pods), a fake in controller tests.
class SignalPods {
 public:
  virtual ~SignalPods() = default;
  virtual std::vector<std::shared_ptr<const api::WorkloadView>> workloads() const = 0;
  virtual WorkloadPods eligible(const api::WorkloadView& w, common::Duration min_age,
                                common::TimePoint now) const = 0;
};
std::unique_ptr<SignalPods> cached_signal_pods(const Caches& caches);

// How the queries of one read went, for kubex_prometheus_queries_total{result}.
struct SignalRead {
  std::size_t succeeded = 0, failed = 0;
  std::optional<common::Error> error;  // the first failure (REA-10); the read stops there
  std::size_t non_finite = 0;          // NaN/Inf samples dropped (VAL-8)
};

// REA-3: sends the policy's queries (compute and memory, each over its upsize and its scale-back window;
// ⌈pods/500⌉ each) for every pod of `workloads`, and stores each returned sample in the matching container's
// Samples. A sample with no matching pod or container is ignored; a container without a sample keeps nullopt.
SignalRead read_signals(prom::Querier& prometheus, const api::ReactiveSpec& spec,
                        std::vector<WorkloadPods>& workloads);

// TEL-4: the compute signal's stddev_over_time over its upsize window for the pods of `only` (namespace, pod),
// ⌈pods/500⌉ queries, stored in Samples::compute_spread. Sent only when decide/reactive/per_pod.h suspects a
// pair, so an ordinary cycle stays at REA-3's four queries.
SignalRead read_compute_spread(prom::Querier& prometheus, const api::ReactiveSpec& spec,
                               std::vector<WorkloadPods>& workloads,
                               const std::set<std::pair<std::string, std::string>>& only);

}  // namespace kubex::observe
