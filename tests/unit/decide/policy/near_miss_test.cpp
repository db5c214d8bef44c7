// The near miss `kubex explain` names for a workload no policy matches (ADM-3 (7) not-managed, CLI-1; issue 34 item
// 8): SEL-3's checks one by one, and the policy that fails the fewest.
#include <gtest/gtest.h>

#include "../fixtures.h"
#include "decide/policy/near_miss.h"
#include "decide/policy/scope.h"

using namespace kubex;
using namespace kubex::decide;
using namespace kubex::decide::policy;
using namespace kubex::decide::test;

namespace {

const std::vector<std::string> kProtected = {"kube-*", "openshift-*", "gmp-*"};

// The starter's baseline (examples/kai-gpu-sharing.yaml): every namespace, Deployments labelled
// nvidia.com/gpu.present=true.
api::Policy starter_baseline() {
  api::Policy p = policy_of(api::Kind::kClusterProactivePolicy, "kai-gpu-sharing-baseline", "kai-gpu-sharing");
  api::Scope& s = p.proactive.common.scope;
  s.label_selector.present = true;
  s.label_selector.match_labels = {{"nvidia.com/gpu.present", "true"}};
  s.workload_types = {"Deployment"};
  return p;
}

std::vector<ScopeCheck> checks(const std::vector<ScopeMiss>& misses) {
  std::vector<ScopeCheck> out;
  for (const auto& m : misses) out.push_back(m.check);
  return out;
}

Candidate candidate(const api::Policy& p, bool scope_evaluates = true) {
  Candidate c;
  c.policy = &p;
  c.valid = true;
  c.scope_evaluates = scope_evaluates;
  return c;
}

}  // namespace

// SEL-3, one miss per failed check, with the clause explain prints.
TEST(NearMiss, EachScopeCheckSaysWhy) {
  Workload w = deployment("chat", "ml");
  w.labels = {{"app", "chat"}};
  const api::Policy baseline = starter_baseline();
  auto misses = scope_misses(baseline, w, kProtected);
  ASSERT_EQ(misses.size(), 1u);
  EXPECT_EQ(misses[0], (ScopeMiss{ScopeCheck::kLabelSelector, "nvidia.com/gpu.present",
                                  "its labelSelector needs nvidia.com/gpu.present=true; the Deployment has no label "
                                  "nvidia.com/gpu.present"}));
  w.labels["nvidia.com/gpu.present"] = "false";
  EXPECT_EQ(scope_misses(baseline, w, kProtected)[0].why,
            "its labelSelector needs nvidia.com/gpu.present=true; the Deployment has nvidia.com/gpu.present=false");

  struct Case {
    const char* name;
    api::Policy policy;
    Workload workload;
    std::vector<ScopeCheck> want;
    const char* first_why;
  };
  api::Policy sts_only = starter_baseline();
  sts_only.proactive.common.scope.workload_types = {"StatefulSet"};
  api::Policy team_ns = starter_baseline();
  team_ns.proactive.common.scope.namespace_values = {"team-*"};
  api::Policy no_selector = starter_baseline();
  no_selector.proactive.common.scope.has_namespace_selector = false;
  api::Policy exprs = starter_baseline();
  exprs.proactive.common.scope.label_selector.match_labels.clear();
  exprs.proactive.common.scope.label_selector.match_expressions = {
      {"tier", "In", {"gpu", "ai"}}, {"debug", "DoesNotExist", {}}, {"team", "Exists", {}}, {"x", "Near", {"1"}}};
  Workload labelled = deployment("chat", "ml");  // app=chat, nvidia.com/gpu.present=true
  Workload debug = labelled;
  debug.labels["debug"] = "1";
  Workload system = deployment("chat", "kube-system");
  const Case cases[] = {
      {"labelled: matches", starter_baseline(), labelled, {}, ""},
      {"workload type", sts_only, labelled, {ScopeCheck::kWorkloadType},
       "its workloadTypes [StatefulSet] do not include Deployment"},
      {"namespaceSelector", team_ns, labelled, {ScopeCheck::kNamespaceSelector},
       "its namespaceSelector In [team-*] does not match namespace ml"},
      {"no namespaceSelector", no_selector, labelled, {ScopeCheck::kNamespaceSelector},
       "it has no namespaceSelector, and a cluster policy without one matches nothing"},
      {"namespaced elsewhere", static_policy("s", "kai", {}), deployment("chat", "other"), {ScopeCheck::kNamespace},
       "it is in namespace ml and matches only workloads there; the Deployment is in other"},
      {"expressions, each on its own", exprs, debug,
       {ScopeCheck::kLabelSelector, ScopeCheck::kLabelSelector, ScopeCheck::kLabelSelector,
        ScopeCheck::kLabelSelector},
       "its labelSelector needs tier in [gpu, ai]; the Deployment has no label tier"},
      {"protected namespace", starter_baseline(), system, {ScopeCheck::kProtectedNamespace},
       "namespace kube-system is protected (global-config spec.protectedNamespacePatterns)"},
      {"several at once", sts_only, deployment("chat", "kube-system"),
       {ScopeCheck::kWorkloadType, ScopeCheck::kProtectedNamespace}, "its workloadTypes [StatefulSet] do not include "
                                                                     "Deployment"},
  };
  for (const Case& c : cases) {
    const auto got = scope_misses(c.policy, c.workload, kProtected);
    EXPECT_EQ(checks(got), c.want) << c.name;
    // SEL-3: no miss exactly when the scope matches.
    EXPECT_EQ(got.empty(), scope_matches(c.policy, c.workload, kProtected)) << c.name;
    if (!got.empty()) {
      EXPECT_EQ(got[0].why, c.first_why) << c.name;
    }
  }
  const auto e = scope_misses(exprs, debug, kProtected);
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[1].why, "its labelSelector needs no label debug; the Deployment has debug=1");
  EXPECT_EQ(e[2].why, "its labelSelector needs a label team; the Deployment has no label team");
  EXPECT_EQ(e[3].why, "its labelSelector's operator \"Near\" on x matches nothing");
  EXPECT_EQ(e[3].label, "x");
}

// The fewest failed checks wins, ties by name; "and N more" counts the others that fail as few.
TEST(NearMiss, FewestFailedChecksThenName) {
  Workload w = deployment("chat", "ml");
  w.labels = {{"app", "chat"}};  // no nvidia.com/gpu.present
  api::Policy baseline = starter_baseline();  // 1 miss: the label
  api::Policy reactive = starter_baseline();  // 1 miss: the label, same scope as the starter's reactive policy
  reactive.kind = api::Kind::kClusterGpuReactivePolicy;
  reactive.meta.name = "kai-gpu-sharing-reactive";
  reactive.reactive.common = reactive.proactive.common;
  api::Policy far = starter_baseline();  // 2 misses: the type and the label
  far.meta.name = "a-first-by-name";
  far.proactive.common.scope.workload_types = {"Job"};
  const std::vector<Candidate> cs = {candidate(far), candidate(reactive), candidate(baseline)};
  auto m = nearest_miss(w, cs, kProtected);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->ref, "ClusterProactivePolicy/kai-gpu-sharing-baseline");
  EXPECT_EQ(m->candidate, &cs[2]);
  ASSERT_EQ(m->misses.size(), 1u);
  EXPECT_EQ(m->misses[0].label, "nvidia.com/gpu.present");
  EXPECT_EQ(m->more, 1u);  // the reactive policy misses by as little; the far one does not count

  // A scope that cannot be evaluated counts as one more miss.
  const std::vector<Candidate> broken = {candidate(baseline, false), candidate(far)};
  m = nearest_miss(w, broken, kProtected);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->ref, "ClusterProactivePolicy/a-first-by-name");  // 2 misses each: the name decides
  EXPECT_EQ(m->more, 1u);
  m = nearest_miss(w, std::vector<Candidate>{candidate(baseline, false)}, kProtected);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(checks(m->misses), (std::vector<ScopeCheck>{ScopeCheck::kLabelSelector, ScopeCheck::kScope}));

  // No policy at all, or only one that matches: nothing to name.
  EXPECT_FALSE(nearest_miss(w, std::vector<Candidate>{}, kProtected).has_value());
  EXPECT_FALSE(nearest_miss(deployment("chat", "ml"), std::vector<Candidate>{candidate(baseline)}, kProtected));
  EXPECT_STREQ(scope_check_name(ScopeCheck::kLabelSelector), "labelSelector");
}
