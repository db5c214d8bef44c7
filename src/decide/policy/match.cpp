#include "decide/policy/match.h"

#include <algorithm>
#include <set>

#include "decide/policy/ordering.h"
#include "decide/policy/scope.h"

namespace kubex::decide::policy {

namespace {

struct Family {
  api::Kind ns_kind, cluster_kind;
  bool (*is_member)(api::Kind);
};

void collect_stale(const Match& m, const Workload& w, const Family& f,
                   const std::optional<std::size_t>& winner, std::set<std::string>& out) {
  std::vector<api::Kind> stale_kinds;
  if (winner) {
    const api::Kind won = m.policies[*winner].policy->kind;
    stale_kinds.push_back(won == f.ns_kind ? f.cluster_kind : f.ns_kind);
  } else {
    const bool any_member = std::any_of(m.policies.begin(), m.policies.end(),
                                        [&](const MatchedPolicy& p) { return f.is_member(p.policy->kind); });
    if (any_member) return;  // only invalid members match: on hold, keep their annotations
    stale_kinds = {f.ns_kind, f.cluster_kind};
  }
  for (api::Kind k : stale_kinds) {
    const std::string prefix = annotation_namespace(k);
    for (const auto& [key, value] : w.annotations) {
      if (key.starts_with(prefix)) out.insert(key);
    }
  }
}

}  // namespace

std::string annotation_namespace(api::Kind policy_kind) {
  return std::string(api::annotation_prefix(policy_kind)) + ".rightsizing.kubex.ai/";
}

Match match_policies(const Workload& workload, std::span<const Candidate> candidates,
                     const api::PolicyEvaluation& evaluation,
                     const std::vector<std::string>& protected_patterns) {
  Match m;
  for (const Candidate& c : candidates) {
    if (c.policy == nullptr || !api::is_policy(c.policy->kind) || !c.scope_evaluates) continue;
    if (!scope_matches(*c.policy, workload, protected_patterns)) continue;
    MatchedPolicy mp;
    mp.policy = c.policy;
    mp.strategy = c.strategy;
    mp.valid = c.valid && c.strategy != nullptr;
    mp.ref = ref_of(*c.policy);
    if (c.strategy != nullptr) mp.strategy_ref = ref_of(*c.strategy);
    m.policies.push_back(std::move(mp));
  }
  std::stable_sort(m.policies.begin(), m.policies.end(), [&](const MatchedPolicy& a, const MatchedPolicy& b) {
    return precedes(*a.policy, *b.policy, evaluation);
  });

  std::set<std::string> strategies;
  for (std::size_t i = 0; i < m.policies.size(); ++i) {
    const MatchedPolicy& p = m.policies[i];
    if (!p.valid) continue;
    if (!m.first_valid) m.first_valid = i;
    strategies.insert(p.strategy_ref);
    const api::Kind k = p.policy->kind;
    if (api::is_static(k)) {
      m.providers.push_back(i);
    } else if (api::is_reactive(k) && !m.reactive_winner) {
      m.reactive_winner = i;
      m.providers.push_back(i);
    } else if (api::is_proactive(k) && !m.proactive_winner) {
      m.proactive_winner = i;
      m.providers.push_back(i);
    }
  }
  m.managed = m.first_valid.has_value();
  m.on_hold = !m.policies.empty() && !m.managed;
  m.strategies.assign(strategies.begin(), strategies.end());
  m.strategy_conflict = m.strategies.size() > 1;

  if (m.managed) {
    std::set<std::string> stale;
    collect_stale(m, workload,
                  {api::Kind::kGpuReactivePolicy, api::Kind::kClusterGpuReactivePolicy, api::is_reactive},
                  m.reactive_winner, stale);
    collect_stale(m, workload,
                  {api::Kind::kProactivePolicy, api::Kind::kClusterProactivePolicy, api::is_proactive},
                  m.proactive_winner, stale);
    m.stale_annotations.assign(stale.begin(), stale.end());
  }
  return m;
}

}  // namespace kubex::decide::policy
