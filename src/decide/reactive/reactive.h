// GPU reactive recommendations (SPEC §6, REA-2…REA-11) as one pure decision per workload and cycle: which
// pods count (REA-2), what they use (REA-4), the baseline (REA-5), the upsize, scale-back and out-of-memory
// candidates of each signal (REA-6, REA-7, REA-11), which one wins (REA-8) and what is written (REA-9).
// The controller fills Input from observe/ (pods, Prometheus samples, the owner's annotations) and writes
// what Outcome says; nothing here reads a clock or the network (DESIGN §3). The steps are in steps.h.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/objects.h"
#include "common/clock.h"
#include "common/result.h"
#include "decide/gpu_value.h"

namespace kubex::decide::reactive {

// ---------------------------------------------------------------- REA-2

// What observe knows of a pod.
struct PodFacts {
  std::string phase;                            // status.phase
  bool terminating = false;                     // metadata.deletionTimestamp set
  std::optional<common::TimePoint> start_time;  // status.startTime
};

// REA-2: Running, not terminating, has a start time, and now − startTime ≥ min_pod_metrics_age (0s disables
// the age check).
bool eligible(const PodFacts& pod, common::Duration min_pod_metrics_age, common::TimePoint now);

// ---------------------------------------------------------------- inputs

// Raw sample values (percent, as Prometheus returned them) of one container for the four REA-3 queries;
// nullopt = no sample (VAL-8: NaN and Inf count as missing, and are ignored here too).
struct Samples {
  std::optional<double> compute_upsize, compute_scale_back, memory_upsize, memory_scale_back;
  // TEL-4 only, read for the pods per_pod.h suspects: the compute series' standard deviation over the upsize
  // window (0 = flat).
  std::optional<double> compute_spread;
};

struct ContainerInput {
  std::string name;
  Hundredths allocation = 0;  // a_c (SPEC §0 current GPU value); 0 = not included (REA-2)
  Samples samples;
  std::optional<common::TimePoint> last_terminated_at;  // lastState.terminated.finishedAt (REA-11)
  bool oom_exit = false;  // that termination was an out-of-memory exit (OOMKilled or a CUDA OOM message; REA-11)
};

// An ELIGIBLE pod; containers = its target containers in pod order.
struct PodInput {
  std::string name;
  std::vector<ContainerInput> containers;
  // The physical GPU this pod shares with others, as far as kubex knows: "<node>/<runai-gpu-group>" for a KAI
  // fraction pod; "" when unknown (no group label, a whole-GPU pod). Only TEL-4 (per_pod.h) reads it.
  std::string gpu;
};

// `<gpureactive|cwgpureactive>.rightsizing.kubex.ai/reactive-state` (SPEC §2).
struct State {
  std::map<std::string, Hundredths> baseline;  // REA-5, per container
  std::string driver;                          // "compute" | "memory" | "" (none yet)
  std::string updated_at;                      // RFC3339, "" when never
  friend bool operator==(const State&, const State&) = default;
};

// The stored value. Not JSON, not an object, a baseline that is not an object of GPU values (a number or a
// decimal string > 0), a driver other than "compute"/"memory", or an updatedAt that is not an RFC3339 time is
// an error: the caller treats the state as absent (VAL-7: an invalid reactive-state is reset). Unknown keys
// are ignored; driver and updatedAt may be absent.
common::Result<State> parse_state(std::string_view json);
// {"baseline":{"app":"0.25"},"driver":"compute","updatedAt":"2026-12-01T10:00:00Z"}: compact, sorted keys,
// GPU-2 strings; an empty driver or updatedAt is left out.
std::string format_state(const State& s);

struct Input {
  const api::ReactiveSpec* spec = nullptr;     // thresholds, windows, headroom, maxPercent, interpretation
  std::vector<PodInput> pods;                  // the workload's eligible pods
  std::map<std::string, Hundredths> existing;  // gpu entries of the winning reactive prefix's
                                               // desired-resource-requests (container -> value); empty = none
  std::optional<State> state;                  // stored reactive-state (nullopt: absent or invalid)
  common::TimePoint now;
  // REA-12: KAI-2 applies to the workload (NvFractions and the strategy's fractionLimit.enabled), so the
  // cycle also records the memory peak; `existing_limits` = the gpu entries of the winning prefix's
  // desired-resource-limits.
  bool record_peak = false;
  std::map<std::string, Hundredths> existing_limits;
};

// ---------------------------------------------------------------- outcome

// OBS-4 rightsizingResult: RECOMMENDED | UNCHANGED | NO_DATA.
enum class Result { kRecommended, kUnchanged, kNoData };
const char* result_name(Result r);

// One signal's offer to REA-8.
struct Candidate {
  std::string signal;     // "compute" | "memory"
  std::string direction;  // "upsize" | "scaleBack"
  Hundredths total = 0;   // T, rounded up (GPU-1); what REA-8 compares
  std::string pod;        // sel
  // Added for the output and for explain: T before rounding (GPUs; REA-9 splits this one), A_sel, and whether
  // REA-11 produced it.
  double exact = 0;
  Hundredths allocated = 0;
  bool oom = false;
  friend bool operator==(const Candidate&, const Candidate&) = default;
};

struct Outcome {
  Result result = Result::kNoData;
  // The desired gpu per container to write (REA-9): sel's included containers only; equals `existing` unless
  // kRecommended.
  std::map<std::string, Hundredths> requests;
  State state;                // the reactive-state to store
  bool state_changed = false;  // a recommendation, or (with an existing entry) a baseline that moved
  std::string driver;          // the driver of a kRecommended change
  std::vector<std::string> applied_filters;  // "oom" when REA-11 produced the accepted candidate (OBS-4)
  std::vector<Candidate> candidates;         // what each signal offered to REA-8 this cycle (0..2)
  std::string selected_pod;                  // sel of the winning candidate ("" when none)
  std::string winner_signal;                 // the signal of REA-8's winner ("" when none), for explain
  // REA-12 (record_peak only): the desired limits.gpu per container to write (equals existing_limits unless
  // limits_changed).
  std::map<std::string, Hundredths> limits;
  bool limits_changed = false;
};

// One cycle for one workload (REA-4…REA-9, REA-11).
//  - kNoData: no spec, no eligible pod, or no included container of any pod has any sample; requests and
//    state's driver/updatedAt stay as they are.
//  - kUnchanged: no candidate, the winner is not accepted (REA-8), or its output equals `existing`.
//  - kRecommended: `requests` is the new value, state.driver and state.updated_at (RFC3339 of `now`) are set.
// The baseline (REA-5) is per container name, over all eligible pods: a_c (the largest among the pods) when
// `existing` has no entry for c, else the stored baseline, else a_c.
Outcome decide(const Input& in);

// REA-12: the limits.gpu to record: per container, the peak memory footprint in GPUs over the upsize window
// (the memory upsize sample, REA-4) across the eligible pods, never below the container's request (the new
// `requests`, else the existing one); a value is replaced only when it changes by ≥ 0.01, and never lowered
// while the request is unchanged. A container without a sample keeps what it had (missing metrics never
// shrink a value).
std::map<std::string, Hundredths> peak_limits(const Input& in, const std::map<std::string, Hundredths>& requests);

// ---------------------------------------------------------------- owner annotation

// The owner's desired-resource-requests value: {"<c>":{"gpu":"<GPU-2>"}} with sorted keys (SPEC §2).
std::string format_requests(const std::map<std::string, Hundredths>& requests);
// Its gpu entries (decide::parse_desired_gpu: unreadable entries are skipped). Text that is not a JSON object
// is an error (VAL-7: the caller ignores the source until it is overwritten).
common::Result<std::map<std::string, Hundredths>> parse_requests(std::string_view json);

}  // namespace kubex::decide::reactive
