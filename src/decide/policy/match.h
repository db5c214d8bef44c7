// Which policies govern a workload: SEL-3 scope, SEL-4 validity, SEL-5 order, SEL-7 one recommender per
// family (and the owner annotations under the losing prefix, as data), SEL-10 strategy conflict, and the
// RBK-4 hold (policies match but none is valid: nothing is applied).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "api/objects.h"
#include "decide/policy/candidate.h"

namespace kubex::decide::policy {

struct MatchedPolicy {
  const api::Policy* policy = nullptr;
  const api::Strategy* strategy = nullptr;  // nullptr when missing
  bool valid = false;                       // SEL-4 (and a strategy is present)
  std::string ref;                          // "StaticPolicy/s"
  std::string strategy_ref;                 // "ClusterAutomationStrategy/kai", "" when missing
};

struct Match {
  // Every candidate whose scope evaluates and matches, valid or not, in SEL-5 order.
  std::vector<MatchedPolicy> policies;
  bool managed = false;  // SEL-4/§0: at least one valid policy matches
  bool on_hold = false;  // RBK-4: policies match and none is valid
  // SEL-7: the first valid reactive / proactive policy (indices into `policies`).
  std::optional<std::size_t> reactive_winner, proactive_winner;
  // SEL-6: the policies that may provide values, in SEL-5 order: every valid static policy and the two
  // family winners.
  std::vector<std::size_t> providers;
  std::optional<std::size_t> first_valid;  // SEL-9 fallback when no policy provides GPU
  // Distinct strategies referenced by the matching valid policies ("Kind/name"), sorted.
  std::vector<std::string> strategies;
  bool strategy_conflict = false;  // SEL-10: more than one distinct strategy
  // Owner annotation keys to remove (sorted): annotations under the losing prefix of a family with a
  // winner (SEL-7), and under both prefixes of a family no policy matches any more (PRO-5) while the
  // workload stays managed. A family whose only matching policies are invalid keeps its annotations
  // (RBK-4). Empty for a workload that is not managed (leaving management is RBK-2's job).
  std::vector<std::string> stale_annotations;

  const MatchedPolicy* governing_fallback() const { return first_valid ? &policies[*first_valid] : nullptr; }
};

Match match_policies(const Workload& workload, std::span<const Candidate> candidates,
                     const api::PolicyEvaluation& evaluation,
                     const std::vector<std::string>& protected_patterns);

// "<prefix>.rightsizing.kubex.ai/": every owner annotation of a policy kind starts with it.
std::string annotation_namespace(api::Kind policy_kind);

}  // namespace kubex::decide::policy
