// Everything kubex's own objects say at one moment (a snapshot of the caches), linked for decisions: each
// policy with its referenced strategy (API-3) and its SEL-4 validity. Webhooks and controllers share one
// immutable Catalog per change, so a decision never sees half an update.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "api/kubex_views.h"
#include "api/objects.h"
#include "decide/policy/candidate.h"

namespace kubex::decide::policy {

struct PolicyInput {
  std::shared_ptr<const api::Policy> policy;
  bool spec_valid = false;  // passes the validator (VAL-1)
  bool scope_evaluates = true;
  std::string message;    // the validator's message when invalid
  bool contract = false;  // the error is a contract error (VAL-3)
};

struct StrategyInput {
  std::shared_ptr<const api::Strategy> strategy;
  bool valid = false;
  std::string message;
  bool contract = false;
};

// The catalog inputs of cached objects (api/kubex_views.h): the typed value (sharing the object's lifetime)
// and its validation verdict.
StrategyInput strategy_input(const std::shared_ptr<const api::StrategyObject>& o);
PolicyInput policy_input(const std::shared_ptr<const api::PolicyObject>& o);

// Why a policy is (not) valid (SEL-4), as its conditions report it (OBS-1).
enum class Resolution { kResolved, kStrategyNotFound, kStrategyInvalid, kStrategyContract };

struct LinkedPolicy {
  PolicyInput input;
  const StrategyInput* strategy = nullptr;  // nullptr: not found
  Resolution resolution = Resolution::kStrategyNotFound;
  bool valid = false;  // SEL-4: spec valid, strategy exists and is Valid
};

class Catalog {
 public:
  Catalog(std::vector<PolicyInput> policies, std::vector<StrategyInput> strategies,
          api::GlobalConfigSpec global, api::PolicyEvaluation evaluation);
  Catalog(const Catalog&) = delete;
  Catalog& operator=(const Catalog&) = delete;

  const std::vector<LinkedPolicy>& policies() const { return policies_; }
  const std::vector<StrategyInput>& strategies() const { return strategies_; }
  // One candidate per policy (decide/policy/match.h input), pointing into this catalog.
  const std::vector<Candidate>& candidates() const { return candidates_; }
  const api::GlobalConfigSpec& global() const { return global_; }
  const api::PolicyEvaluation& evaluation() const { return evaluation_; }

  // API-3: a namespaced policy's AutomationStrategy in its namespace, a cluster policy's
  // ClusterAutomationStrategy. nullptr when missing.
  const StrategyInput* strategy_of(const api::Policy& p) const;
  const StrategyInput* find_strategy(api::Kind kind, const std::string& ns, const std::string& name) const;
  // Policies referencing a strategy (the strategy DELETE check, VAL-4), as "Kind/name", sorted.
  std::vector<std::string> referencing(api::Kind strategy_kind, const std::string& ns,
                                       const std::string& name) const;

 private:
  std::vector<StrategyInput> strategies_;
  std::vector<LinkedPolicy> policies_;
  std::vector<Candidate> candidates_;
  api::GlobalConfigSpec global_;
  api::PolicyEvaluation evaluation_;
};

}  // namespace kubex::decide::policy
