#include "decide/policy/catalog.h"

#include <algorithm>

namespace kubex::decide::policy {

StrategyInput strategy_input(const std::shared_ptr<const api::StrategyObject>& o) {
  StrategyInput in;
  in.strategy = std::shared_ptr<const api::Strategy>(o, &o->parsed.value);
  in.valid = o->parsed.valid();
  in.message = o->parsed.report.message();
  in.contract = o->parsed.report.contract;
  return in;
}

PolicyInput policy_input(const std::shared_ptr<const api::PolicyObject>& o) {
  PolicyInput in;
  in.policy = std::shared_ptr<const api::Policy>(o, &o->parsed.value);
  in.spec_valid = o->parsed.valid();
  in.scope_evaluates = o->parsed.scope_evaluates;
  in.message = o->parsed.report.message();
  in.contract = o->parsed.report.contract;
  return in;
}

Catalog::Catalog(std::vector<PolicyInput> policies, std::vector<StrategyInput> strategies,
                 api::GlobalConfigSpec global, api::PolicyEvaluation evaluation)
    : strategies_(std::move(strategies)), global_(std::move(global)), evaluation_(std::move(evaluation)) {
  policies_.reserve(policies.size());
  for (auto& in : policies) {
    LinkedPolicy lp;
    lp.input = std::move(in);
    if (lp.input.policy) {
      lp.strategy = strategy_of(*lp.input.policy);
      if (!lp.strategy) {
        lp.resolution = Resolution::kStrategyNotFound;
      } else if (!lp.strategy->valid) {
        lp.resolution = lp.strategy->contract ? Resolution::kStrategyContract : Resolution::kStrategyInvalid;
      } else {
        lp.resolution = Resolution::kResolved;
      }
      lp.valid = lp.input.spec_valid && lp.resolution == Resolution::kResolved;
    }
    policies_.push_back(std::move(lp));
  }
  candidates_.reserve(policies_.size());
  for (const auto& lp : policies_) {
    if (!lp.input.policy) continue;
    Candidate c;
    c.policy = lp.input.policy.get();
    c.valid = lp.valid;
    c.scope_evaluates = lp.input.scope_evaluates;
    c.strategy = lp.strategy ? lp.strategy->strategy.get() : nullptr;
    candidates_.push_back(c);
  }
}

const StrategyInput* Catalog::find_strategy(api::Kind kind, const std::string& ns,
                                            const std::string& name) const {
  for (const auto& s : strategies_) {
    if (!s.strategy || s.strategy->kind != kind || s.strategy->meta.name != name) continue;
    if (kind == api::Kind::kAutomationStrategy && s.strategy->meta.ns != ns) continue;
    return &s;
  }
  return nullptr;
}

const StrategyInput* Catalog::strategy_of(const api::Policy& p) const {
  api::Kind k = api::strategy_kind_for(p.kind);
  return find_strategy(k, k == api::Kind::kAutomationStrategy ? p.meta.ns : "", p.common().strategy_ref);
}

std::vector<std::string> Catalog::referencing(api::Kind strategy_kind, const std::string& ns,
                                              const std::string& name) const {
  std::vector<std::string> out;
  for (const auto& lp : policies_) {
    if (!lp.input.policy) continue;
    const api::Policy& p = *lp.input.policy;
    if (api::strategy_kind_for(p.kind) != strategy_kind || p.common().strategy_ref != name) continue;
    if (strategy_kind == api::Kind::kAutomationStrategy && p.meta.ns != ns) continue;
    out.push_back(ref_of(p));
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace kubex::decide::policy
