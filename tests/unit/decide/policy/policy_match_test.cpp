#include <gtest/gtest.h>

#include "../fixtures.h"
#include "decide/policy/match.h"
#include "decide/policy/ordering.h"

using namespace kubex;
using namespace kubex::decide;
using namespace kubex::decide::policy;
using namespace kubex::decide::test;

namespace {

const std::vector<std::string> kProtected = {"kube-*"};

std::vector<std::string> refs(const Match& m) {
  std::vector<std::string> out;
  for (const auto& p : m.policies) out.push_back(p.ref);
  return out;
}

}  // namespace

// SEL-5: PolicyEvaluation priority (higher first), weight (higher first), creationTimestamp (older first),
// then name and namespace.
TEST(Ordering, PriorityWeightAgeNameNamespace) {
  const api::PolicyEvaluation eval;  // defaults: reactive 120, cluster reactive 110, static 90, proactive 70
  api::Policy reactive = policy_of(api::Kind::kGpuReactivePolicy, "r", "s");
  api::Policy creactive = policy_of(api::Kind::kClusterGpuReactivePolicy, "cr", "s");
  api::Policy stat = policy_of(api::Kind::kStaticPolicy, "s", "s");
  api::Policy proactive = policy_of(api::Kind::kProactivePolicy, "p", "s");
  EXPECT_TRUE(precedes(reactive, creactive, eval));  // SEL-5 priority
  EXPECT_TRUE(precedes(creactive, stat, eval));
  EXPECT_TRUE(precedes(stat, proactive, eval));
  EXPECT_FALSE(precedes(proactive, stat, eval));

  api::Policy heavy = stat, light = stat;
  heavy.meta.name = "z";
  heavy.static_spec.common.weight = 5;
  light.meta.name = "a";
  EXPECT_TRUE(precedes(heavy, light, eval));  // SEL-5 weight before name

  api::Policy older = stat, newer = stat;
  older.meta.name = "z";
  older.meta.created = at(100);
  newer.meta.name = "a";
  newer.meta.created = at(200);
  EXPECT_TRUE(precedes(older, newer, eval));  // SEL-5 OLDER first

  api::Policy a = stat, b = stat;
  a.meta.name = "a";
  b.meta.name = "b";
  EXPECT_TRUE(precedes(a, b, eval));  // SEL-5 name
  api::Policy ns1 = stat, ns2 = stat;
  ns1.meta.ns = "a";
  ns2.meta.ns = "b";
  EXPECT_TRUE(precedes(ns1, ns2, eval));  // SEL-5 namespace
  EXPECT_FALSE(precedes(ns1, ns1, eval));

  api::PolicyEvaluation custom;
  custom.precedence = {{"ProactivePolicy", 500}, {"RollbackPolicy", 900}};
  EXPECT_TRUE(precedes(proactive, reactive, custom));  // §1.7: unlisted kinds get priority 0
}

// SEL-5: match_policies returns the matching policies in order; non-matching ones are left out.
TEST(Match, OrdersMatchingPolicies) {
  Scenario s;
  const auto* st = s.add_strategy(kai_strategy());
  const auto* cst = s.add_strategy(as_cluster(kai_strategy("ckai")));
  s.add_policy(policy_of(api::Kind::kProactivePolicy, "p", "kai"), st);
  s.add_policy(policy_of(api::Kind::kClusterGpuReactivePolicy, "cr", "ckai"), cst);
  s.add_policy(policy_of(api::Kind::kStaticPolicy, "s", "kai"), st);
  api::Policy elsewhere = policy_of(api::Kind::kStaticPolicy, "other", "kai", "other-ns");
  s.add_policy(elsewhere, st);
  const Match m = match_policies(s.workload, s.candidates, s.evaluation, kProtected);
  EXPECT_EQ(refs(m),
            (std::vector<std::string>{"ClusterGpuReactivePolicy/cr", "StaticPolicy/s", "ProactivePolicy/p"}));
  EXPECT_TRUE(m.managed);
  EXPECT_FALSE(m.on_hold);
  EXPECT_EQ(m.first_valid, 0u);
  EXPECT_EQ(m.reactive_winner, 0u);
  EXPECT_EQ(m.proactive_winner, 2u);
  EXPECT_EQ(m.providers, (std::vector<std::size_t>{0, 1, 2}));
}

// SEL-7: only the SEL-5 winner of each recommender family evaluates; the other prefix's annotations go.
TEST(Match, OneRecommenderPerFamily) {
  Scenario s;
  const auto* st = s.add_strategy(kai_strategy());
  const auto* cst = s.add_strategy(as_cluster(kai_strategy("ckai")));
  s.add_policy(policy_of(api::Kind::kGpuReactivePolicy, "r", "kai"), st);
  s.add_policy(policy_of(api::Kind::kClusterGpuReactivePolicy, "cr", "ckai"), cst);
  s.add_policy(policy_of(api::Kind::kClusterProactivePolicy, "cp", "ckai"), cst);
  s.add_policy(policy_of(api::Kind::kProactivePolicy, "p", "kai"), st);
  s.workload.annotations = {
      {"gpureactive.rightsizing.kubex.ai/desired-resource-requests", R"({"app":{"gpu":"0.5"}})"},
      {"gpureactive.rightsizing.kubex.ai/reactive-state", "{}"},
      {"cwgpureactive.rightsizing.kubex.ai/desired-resource-requests", R"({"app":{"gpu":"0.3"}})"},
      {"cwgpureactive.rightsizing.kubex.ai/reactive-state", "{}"},
      {"proactive.rightsizing.kubex.ai/desired-resource-requests", R"({"app":{"gpu":"0.4"}})"},
      {"cwproactive.rightsizing.kubex.ai/desired-resource-requests", R"({"app":{"gpu":"0.2"}})"},
      {"rightsizing.kubex.ai/rollback-state", "{}"},
  };
  const Match m = match_policies(s.workload, s.candidates, s.evaluation, kProtected);
  ASSERT_TRUE(m.reactive_winner && m.proactive_winner);
  EXPECT_EQ(m.policies[*m.reactive_winner].ref, "GpuReactivePolicy/r");  // priority 120 > 110
  // Both proactive kinds have priority 70 and the same weight and age: name decides ("cp" < "p").
  EXPECT_EQ(m.policies[*m.proactive_winner].ref, "ClusterProactivePolicy/cp");
  EXPECT_EQ(m.stale_annotations, (std::vector<std::string>{
                                     "cwgpureactive.rightsizing.kubex.ai/desired-resource-requests",
                                     "cwgpureactive.rightsizing.kubex.ai/reactive-state",
                                     "proactive.rightsizing.kubex.ai/desired-resource-requests",
                                 }));  // SEL-7
  // Losers never provide values.
  EXPECT_EQ(m.providers.size(), 2u);
}

// SEL-7 / PRO-5: when a family no longer matches, its annotations are stale; an invalid member holds them.
TEST(Match, FamilyWithoutMatchingPolicy) {
  Scenario s;
  const auto* st = s.add_strategy(kai_strategy());
  s.add_policy(static_policy("s", "kai", {{"*", gpu_request("0.5")}}), st);
  s.workload.annotations = {
      {"proactive.rightsizing.kubex.ai/desired-resource-requests", R"({"app":{"gpu":"0.4"}})"},
      {"gpureactive.rightsizing.kubex.ai/desired-resource-requests", R"({"app":{"gpu":"0.4"}})"},
  };
  Match m = match_policies(s.workload, s.candidates, s.evaluation, kProtected);
  EXPECT_EQ(m.stale_annotations.size(), 2u);  // PRO-5: left the policy
  s.add_policy(policy_of(api::Kind::kGpuReactivePolicy, "broken", "kai"), st, /*valid=*/false);
  m = match_policies(s.workload, s.candidates, s.evaluation, kProtected);
  EXPECT_EQ(
      m.stale_annotations,
      (std::vector<std::string>{"proactive.rightsizing.kubex.ai/desired-resource-requests"}));  // RBK-4 hold
}

// SEL-4 / RBK-4: invalid policies provide nothing; when every matching policy is invalid, the workload is on
// hold.
TEST(Match, InvalidPoliciesHold) {
  Scenario s;
  const auto* st = s.add_strategy(kai_strategy());
  s.add_policy(static_policy("s", "kai", {{"*", gpu_request("0.5")}}), st, /*valid=*/false);
  s.add_policy(static_policy("missing-strategy", "gone", {{"*", gpu_request("0.5")}}), nullptr,
               /*valid=*/true);
  Match m = match_policies(s.workload, s.candidates, s.evaluation, kProtected);
  EXPECT_EQ(m.policies.size(), 2u);
  EXPECT_FALSE(m.managed);
  EXPECT_TRUE(m.on_hold);  // RBK-4
  EXPECT_TRUE(m.providers.empty());
  EXPECT_TRUE(m.stale_annotations.empty());

  // A policy whose scope does not evaluate matches nothing, so it holds nothing.
  s.candidates[0].scope_evaluates = false;
  s.candidates.erase(s.candidates.begin() + 1);
  m = match_policies(s.workload, s.candidates, s.evaluation, kProtected);
  EXPECT_TRUE(m.policies.empty());
  EXPECT_FALSE(m.on_hold);
  EXPECT_FALSE(m.managed);
}

// SEL-10: more than one distinct strategy object among the matching valid policies is a conflict.
TEST(Match, StrategyConflict) {
  Scenario s;
  const auto* a = s.add_strategy(kai_strategy("a"));
  const auto* b = s.add_strategy(kai_strategy("b"));
  const auto* ca = s.add_strategy(as_cluster(kai_strategy("a")));
  s.add_policy(static_policy("s1", "a", {}), a);
  s.add_policy(policy_of(api::Kind::kProactivePolicy, "p", "a"), a);
  Match m = match_policies(s.workload, s.candidates, s.evaluation, kProtected);
  EXPECT_FALSE(m.strategy_conflict);  // same object twice
  s.add_policy(static_policy("broken", "b", {}), b, /*valid=*/false);
  m = match_policies(s.workload, s.candidates, s.evaluation, kProtected);
  EXPECT_FALSE(m.strategy_conflict);  // invalid policies do not count
  s.add_policy(policy_of(api::Kind::kClusterStaticPolicy, "cs", "a"), ca);
  m = match_policies(s.workload, s.candidates, s.evaluation, kProtected);
  EXPECT_TRUE(m.strategy_conflict);  // SEL-10: AutomationStrategy/a and ClusterAutomationStrategy/a differ
  EXPECT_EQ(m.strategies, (std::vector<std::string>{"AutomationStrategy/a", "ClusterAutomationStrategy/a"}));
}
