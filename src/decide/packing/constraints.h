// The scheduling constraints CON-6a checks for a pod on a destination, beyond GPU capacity: node selector,
// required node affinity, taints and tolerations (NoSchedule, NoExecute), CPU and memory. Each check mirrors the
// kube-scheduler filter of the same name (NodeAffinity, TaintToleration, NodeResourcesFit).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "decide/packing/model.h"

namespace kubex::decide::packing {

// The checks in the order they are made; a destination that fails a later check is "closer" to fitting.
// kGpuModel (CON-5a: another GPU product than the pod's node) is decided between nodes, not by
// first_failed_check(); kComputeMode and kReserve (CON-5b, CON-2a) refine a kGpu failure: the pod would have had
// room but for the modes of the GPUs' fractions, or but for the driver reserve.
enum class Check { kGpuModel, kNodeSelector, kNodeAffinity, kTaint, kCpu, kMemory, kGpu, kComputeMode, kReserve, kNone };

bool node_selector_matches(const PoolPod& pod, const PoolNode& node);
bool node_affinity_matches(const PoolPod& pod, const PoolNode& node);
bool tolerates(const Toleration& toleration, const Taint& taint);
// The first NoSchedule or NoExecute taint of the node the pod does not tolerate (nullptr when none).
const Taint* untolerated_taint(const PoolPod& pod, const PoolNode& node);

// The first of the node selector, node affinity, taint, CPU and memory checks the pod fails on the node, given
// the node's CPU and memory already requested; Check::kNone when all pass. `taint` receives the key of the
// untolerated taint.
Check first_failed_check(const PoolPod& pod, const PoolNode& node, std::int64_t cpu_used, std::int64_t memory_used,
                         std::string* taint = nullptr);

// The reason suffix of a check: "gpu model", "node selector", "node affinity", "taint <key>", "cpu", "memory",
// "gpu", "compute mode", "reserve".
std::string check_name(Check check, const std::string& taint_key = "");
// The CON-12 `blocker` label of a check: check_name() without the taint key ("taint").
std::string blocker_name(Check check);

}  // namespace kubex::decide::packing
