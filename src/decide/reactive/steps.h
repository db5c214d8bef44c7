// The steps decide() (reactive.h) is composed of, one pure function per SPEC rule, each with its own table
// test: usage (REA-4), baseline (REA-5), upsize (REA-6), scale-back (REA-7), out-of-memory (REA-11), the
// combination (REA-8) and the output split (REA-9).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "decide/reactive/reactive.h"

namespace kubex::decide::reactive {

inline constexpr std::string_view kCompute = "compute";
inline constexpr std::string_view kMemory = "memory";
inline constexpr std::string_view kUpsize = "upsize";
inline constexpr std::string_view kScaleBack = "scaleBack";

// ---------------------------------------------------------------- REA-4 usage

// The four REA-3 queries of a cycle.
enum class Query { kComputeUpsize, kComputeScaleBack, kMemoryUpsize, kMemoryScaleBack };

// The sample of `q`; nullopt when there is none or it is NaN/Inf (VAL-8). A negative value counts as 0.
std::optional<double> sample_of(const Samples& s, Query q);

// True for interpretation `currentAllocation`; anything else reads as `fullGPU` (the default).
bool is_current_allocation(const api::PrometheusSignal& p);

// REA-4: a sample `v` is v/100 GPUs under fullGPU and v/100 × a_c GPUs under currentAllocation.
double container_usage(double v, Hundredths a_c, bool current_allocation);

// One pod as one query sees it.
struct PodUsage {
  std::string pod;
  std::vector<std::string> containers;  // its included containers (a_c > 0), in pod order
  double used = 0;                      // U_p in GPUs: Σ usage_c over the included containers with a sample
  Hundredths allocated = 0;             // A_p: Σ a_c over the included containers
  std::size_t samples = 0;              // included containers that have a sample
  bool complete() const { return samples == containers.size(); }
};

// REA-4 per pod, in input order. A pod without an included container is left out (it has nothing to size).
std::vector<PodUsage> usage(const std::vector<PodInput>& pods, Query q, bool current_allocation);

// U_p×100 ≥ A_p×thresholdPercent, in doubles with a 1e-9 guard (0.25×100 ≥ 0.25×100 holds).
bool at_or_above(double used, Hundredths allocated, std::int32_t threshold_percent);

// sel (REA-6, REA-7): the pod with the highest U_p among those with at least one sample, ties broken by the
// smaller pod name. nullptr when no pod has a sample.
const PodUsage* select(const std::vector<PodUsage>& pods);

// ---------------------------------------------------------------- REA-5 baseline

// baseline_c for every included container of the pods: a_c (the largest a_c among the pods) when `existing`
// has no entry for c; otherwise the stored baseline, falling back to a_c when `stored` lacks c.
std::map<std::string, Hundredths> baselines(const std::vector<PodInput>& pods,
                                            const std::map<std::string, Hundredths>& existing,
                                            const std::optional<State>& stored);

// B: Σ baseline_c over the pod's included containers.
Hundredths baseline_total(const PodUsage& pod, const std::map<std::string, Hundredths>& baseline);

// ---------------------------------------------------------------- REA-6, REA-7, REA-11

// REA-6: triggers when a pod with a sample has U_p×100 ≥ A_p×threshold; T = min(H×(1+headroom/100),
// A_sel×maxPercent/100) and counts only when round_up(T) > A_sel.
std::optional<Candidate> upsize(const std::vector<PodUsage>& pods, const api::UpsizeRule& rule,
                                std::string_view signal);

// REA-7: only when every pod has a sample for every included container and every pod is below the
// threshold; T = max(H×(1+headroom/100), B) and counts only when it is < A_sel.
std::optional<Candidate> scale_back(const std::vector<PodUsage>& pods, const api::ScaleBackRule& rule,
                                    const std::map<std::string, Hundredths>& baseline,
                                    std::string_view signal);

// REA-11: an included container restarted inside the memory upsize window [now − W, now] and its memory usage
// (REA-4, from the memory upsize sample) is ≥ 90 % of its a_c.
bool memory_saturated(const PodInput& pod, const api::SignalConfig& memory, common::TimePoint now);
// REA-11 (with ACT-10): an included container's out-of-memory exit inside the memory upsize window, with no memory
// sample for it: the process died before any scrape, so the exit itself is the evidence.
bool out_of_memory_before_samples(const PodInput& pod, const api::SignalConfig& memory, common::TimePoint now);

// REA-11: among the memory-saturated pods, sel = the highest U_p of the memory upsize query (ties by name);
// T = A_sel × maxPercent/100, counts only when > A_sel. `memory_upsize` is usage(pods, kMemoryUpsize, …).
std::optional<Candidate> oom(const std::vector<PodInput>& pods, const std::vector<PodUsage>& memory_upsize,
                             const api::SignalConfig& memory, common::TimePoint now);

// ---------------------------------------------------------------- REA-8 combine

// What one signal offers: its upsize candidate, replaced by the OOM one (REA-11) when that is larger; a
// signal with an upsize candidate does not also offer a scale-back one.
std::optional<Candidate> offer(const std::optional<Candidate>& up, const std::optional<Candidate>& oom_bump,
                               const std::optional<Candidate>& back);

// The higher T wins; equal T keeps the stored driver (compute when the stored driver is neither). nullptr
// when neither signal offers.
const Candidate* winner(const std::optional<Candidate>& compute, const std::optional<Candidate>& memory,
                        std::string_view stored_driver);

// The existing recommendation for sel: Σ existing over sel's included containers, or nullopt when one of
// them has no entry (then there is no existing recommendation to hold on to and any candidate is accepted).
std::optional<Hundredths> existing_total(const PodUsage& sel,
                                         const std::map<std::string, Hundredths>& existing);

// REA-8: a T lower than the existing recommendation is accepted only when it comes from the stored driver, or
// the stored driver also offered (`other`) a candidate ≤ T this cycle.
bool accepted(const Candidate& win, const Candidate* other, std::string_view stored_driver,
              std::optional<Hundredths> existing);

// ---------------------------------------------------------------- REA-9 output

// rec_c = T × a_c / A_sel for each included container of sel, per GPU-2.
std::map<std::string, Hundredths> split(const Candidate& win, const PodInput& sel);

}  // namespace kubex::decide::reactive
