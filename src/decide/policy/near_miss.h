// Why a workload is not managed (ADM-3 exit (7), `not-managed`): the policy that came closest to matching it and
// which SEL-3 scope checks it fails, for `kubex explain` (CLI-1, issue 34 item 8). Pure; the checks are the ones
// scope_matches() makes, one entry per failed check, so a policy with no miss matches (and one with a miss does not).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "decide/policy/candidate.h"

namespace kubex::decide::policy {

// The SEL-3 checks in SEL-3 order, and a scope that cannot be evaluated at all (SEL-4: such a policy matches nothing).
enum class ScopeCheck { kWorkloadType, kNamespace, kNamespaceSelector, kLabelSelector, kProtectedNamespace, kScope };
// "workloadTypes", "namespace", "namespaceSelector", "labelSelector", "protectedNamespace", "scope".
const char* scope_check_name(ScopeCheck c);

struct ScopeMiss {
  ScopeCheck check = ScopeCheck::kScope;
  std::string label;  // kLabelSelector: the label key the requirement is about
  std::string why;    // one clause: "its labelSelector needs nvidia.com/gpu.present=true; the Deployment has no such label"
  friend bool operator==(const ScopeMiss&, const ScopeMiss&) = default;
};

// Every SEL-3 check `policy` fails for `workload`: its workload kind, its namespace (a namespaced policy) or
// namespaceSelector (a cluster policy), each label requirement of labelSelector on its own (matchLabels entries, then
// matchExpressions, in order), and the protected namespace. Empty exactly when scope_matches() is true.
std::vector<ScopeMiss> scope_misses(const api::Policy& policy, const Workload& workload,
                                    const std::vector<std::string>& protected_patterns);

struct NearMiss {
  const Candidate* candidate = nullptr;  // points into the caller's candidates
  std::string ref;                       // "ClusterProactivePolicy/kai-gpu-sharing-baseline"
  std::vector<ScopeMiss> misses;         // at least one
  std::size_t more = 0;                  // other policies that fail as few checks
};

// The candidate that fails the fewest scope checks (a scope that does not evaluate counts as one more), ties by
// policy name, then by ref and namespace; nullopt when there is no policy. Meant for a workload no policy matches;
// a candidate that matches (no miss) is skipped.
std::optional<NearMiss> nearest_miss(const Workload& workload, std::span<const Candidate> candidates,
                                     const std::vector<std::string>& protected_patterns);

}  // namespace kubex::decide::policy
