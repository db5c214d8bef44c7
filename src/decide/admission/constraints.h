// Constraint reasons (OBS-3) and the pod annotation `rightsizing.kubex.ai/automation-constraints` (SPEC §2,
// ADM-14): a JSON array of {"reason","targets"} entries, one per reason, sorted by reason and then by
// container. `targets: []` means the whole pod; `direction` appears in targets of
// `automation-strategy-disabled` only.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace kubex::decide {

namespace reason {
// Admission.
inline constexpr const char* kPauseActive = "pause-active";
inline constexpr const char* kStrategyDisabled = "automation-strategy-disabled";
inline constexpr const char* kFloorClamped = "floor-clamped";
inline constexpr const char* kCeilingClamped = "ceiling-clamped";
inline constexpr const char* kRequestsExceedLimits = "requests-exceed-limits";
inline constexpr const char* kNoGpuRecommendation = "no-gpu-recommendation";
inline constexpr const char* kMultipleGpuContainers = "multiple-gpu-containers";
inline constexpr const char* kUnsupportedGpuRequest = "unsupported-gpu-request";
inline constexpr const char* kStrategyConflict = "strategy-conflict";
inline constexpr const char* kQueueOverriddenByOwner = "queue-overridden-by-owner";
inline constexpr const char* kVllmArgsNotRewritable = "vllm-args-not-rewritable";
// KAI (§5a).
inline constexpr const char* kKaiGpuSharingDisabled = "kai-gpu-sharing-disabled";
inline constexpr const char* kFractionLimitRemoved = "fraction-limit-removed";
// Actuation.
inline constexpr const char* kPodEvictionDisabled = "pod-eviction-disabled";
inline constexpr const char* kPdbBlocked = "pdb-blocked";
inline constexpr const char* kKaiFractionRequiresRestart = "kai-fraction-requires-restart";
inline constexpr const char* kReplacementNotMutated = "replacement-not-mutated";
inline constexpr const char* kWebhookUnhealthy = "webhook-unhealthy";
inline constexpr const char* kReplacementDoesNotFit = "replacement-does-not-fit";
inline constexpr const char* kHarmGuard = "harm-guard";  // ACT-10: raised to the floor a harmful downsize left
}  // namespace reason

// One target: empty fields are left out of the JSON.
struct ConstraintTarget {
  std::string container, resource, usage, direction;

  friend bool operator<(const ConstraintTarget& a, const ConstraintTarget& b) {
    return std::tie(a.container, a.resource, a.usage, a.direction) <
           std::tie(b.container, b.resource, b.usage, b.direction);
  }
  friend bool operator==(const ConstraintTarget&, const ConstraintTarget&) = default;
};

struct Constraint {
  std::string reason;
  std::vector<ConstraintTarget> targets;  // sorted; empty = the whole pod

  friend bool operator==(const Constraint&, const Constraint&) = default;
};

// A set of reasons with their targets. Adding the same reason and target twice keeps one.
class Constraints {
 public:
  // A reason about the whole pod (`targets: []`).
  void add_pod(std::string_view reason);
  void add(std::string_view reason, ConstraintTarget target);
  void merge(const Constraints& other);

  bool empty() const { return by_reason_.empty(); }
  bool has(std::string_view reason) const { return by_reason_.find(std::string(reason)) != by_reason_.end(); }
  // The distinct reasons, sorted.
  std::vector<std::string> reasons() const;
  // Entries sorted by reason; targets sorted by container, then resource, usage and direction. A reason
  // recorded with container targets lists them even if it was also recorded for the whole pod.
  std::vector<Constraint> entries() const;
  // The annotation value: compact JSON, e.g.
  // [{"reason":"ceiling-clamped","targets":[{"container":"app","resource":"gpu","usage":"request"}]}]
  std::string to_json() const;

 private:
  std::map<std::string, std::set<ConstraintTarget>> by_reason_;
};

}  // namespace kubex::decide
