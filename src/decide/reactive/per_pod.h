// TEL-4: samples that are not per pod. DCGM's per-pod mode copies a GPU's device value onto every pod sharing
// it, so two sharers of one GPU read the same series and a reactive policy would upsize both at once. Given the
// eligible pods of one reactive cycle (their GPU identity and their REA-3 samples), this says which pods' samples
// are such copies; the controller leaves them out of the cycle and the policy reports Ready=False/MetricsNotPerPod.
//
// The rule (docs/reactive.md "MetricsNotPerPod"), in two steps so that an ordinary cycle still sends only the four
// REA-3 queries:
//  1. suspects: two pods that kubex knows are on the same physical GPU (PodInput::gpu: the node and KAI's
//     runai-gpu-group) whose compute and memory upsize samples (quantile_over_time and max_over_time over the
//     upsize window) are, container by container in pod order, present, exactly equal and not all zero;
//  2. copies: suspects whose compute series moved together over the upsize window (Samples::compute_spread, the
//     stddev, present, equal on both and > 0; one more batched query for the suspects only). Two per-process
//     series that are equal AND move together do not happen; two that are equal and flat do (two sharers with
//     the same constant demand, as in kubex-sim), and a flat copy cannot be told from them, so a flat pair is
//     never refused. A copy onto a pod younger than the window differs from the older pod's until the window
//     holds only their common time, so such a pair is found one window after the younger pod started.
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "decide/reactive/reactive.h"

namespace kubex::decide::reactive {

// One eligible pod of the cycle, in any workload the policy wins.
struct PodRef {
  std::string ns;
  const PodInput* pod = nullptr;
};

using PodKeys = std::set<std::pair<std::string, std::string>>;  // (namespace, pod)

struct NotPerPod {
  PodKeys pods;               // whose samples are copies
  std::string first, second;  // an example pair, "ns/pod" each (GPUs in name order, pods in input order)
  bool any() const { return !pods.empty(); }
};

// Step 1 for two pods (their GPU identity is not looked at here).
bool same_upsize_samples(const PodInput& a, const PodInput& b);
// Steps 1 and 2 for two pods.
bool copied_samples(const PodInput& a, const PodInput& b);

// Step 1 over a cycle: the pods (any namespace) with a known GPU that have the same upsize samples as another
// pod on that GPU; the controller reads their compute spread. Pods without a GPU identity are never compared.
PodKeys suspects(const std::vector<PodRef>& pods);
// Steps 1 and 2 over a cycle.
NotPerPod not_per_pod(const std::vector<PodRef>& pods);

}  // namespace kubex::decide::reactive
