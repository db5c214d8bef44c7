#include <gtest/gtest.h>

#include "../fixtures.h"
#include "decide/policy/scope.h"

using namespace kubex;
using namespace kubex::decide;
using namespace kubex::decide::policy;
using namespace kubex::decide::test;

namespace {

const std::vector<std::string> kProtected = {"kube-*", "openshift-*", "gmp-*"};

api::Policy cluster_policy(std::string op, std::vector<std::string> values) {
  api::Policy p = policy_of(api::Kind::kClusterProactivePolicy, "p", "s");
  p.proactive.common.scope.namespace_operator = std::move(op);
  p.proactive.common.scope.namespace_values = std::move(values);
  return p;
}

}  // namespace

// GlobalConfiguration protectedNamespacePatterns use `*` wildcards.
TEST(Scope, ProtectedNamespaces) {
  EXPECT_TRUE(namespace_protected("kube-system", kProtected));
  EXPECT_TRUE(namespace_protected("kube-", kProtected));  // `*` matches an empty run
  EXPECT_TRUE(namespace_protected("openshift-monitoring", kProtected));
  EXPECT_TRUE(namespace_protected("gmp-public", kProtected));
  EXPECT_FALSE(namespace_protected("ml", kProtected));
  EXPECT_FALSE(namespace_protected("kubeflow", kProtected));
  EXPECT_FALSE(namespace_protected("ml", {}));
}

// SEL-3: the workload kind must be in workloadTypes (default list when unset).
TEST(Scope, WorkloadKindMustBeListed) {
  api::Policy p = policy_of(api::Kind::kProactivePolicy, "p", "s");
  Workload w = deployment();
  EXPECT_TRUE(scope_matches(p, w, kProtected));  // SEL-3 default types include Deployment
  w.kind = "StrimziPodSet";
  EXPECT_FALSE(scope_matches(p, w, kProtected));  // SEL-3: not in the default list
  p.proactive.common.scope.workload_types = {"StrimziPodSet", "Model"};
  EXPECT_TRUE(scope_matches(p, w, kProtected));
  w.kind = "Deployment";
  EXPECT_FALSE(scope_matches(p, w, kProtected));
}

// SEL-3: a namespaced policy matches only workloads in its own namespace.
TEST(Scope, NamespacedPolicyOnlyInItsNamespace) {
  api::Policy p = static_policy("s", "kai", {});
  EXPECT_TRUE(scope_matches(p, deployment("train", "ml"), kProtected));
  EXPECT_FALSE(scope_matches(p, deployment("train", "other"), kProtected));  // SEL-3
}

// SEL-3: cluster namespaceSelector In needs some value to match, NotIn needs none; `*` matches any run.
TEST(Scope, ClusterNamespaceSelector) {
  struct Case {
    const char* op;
    std::vector<std::string> values;
    const char* ns;
    bool want;
  } cases[] = {
      {"In", {"*"}, "ml", true},
      {"In", {"team-*"}, "team-a", true},
      {"In", {"team-*"}, "team-", true},  // empty run
      {"In", {"team-*"}, "team", false},
      {"In", {"a", "ml"}, "ml", true},
      {"In", {"prod"}, "production", false},
      {"In", {"*-prod"}, "payments-prod", true},
      {"NotIn", {"dev-*", "test"}, "ml", true},
      {"NotIn", {"dev-*", "test"}, "dev-1", false},
      {"NotIn", {"*"}, "ml", false},
      {"Exists", {"*"}, "ml", false},  // unknown operator: matches nothing
  };
  for (const auto& c : cases) {
    Workload w = deployment("train", c.ns);
    EXPECT_EQ(scope_matches(cluster_policy(c.op, c.values), w, kProtected), c.want)
        << c.op << " " << c.ns;  // SEL-3
  }
  api::Policy no_selector = cluster_policy("In", {"*"});
  no_selector.proactive.common.scope.has_namespace_selector = false;
  EXPECT_FALSE(scope_matches(no_selector, deployment(), kProtected));  // required on the cluster kind
}

// SEL-3: labelSelector matches the labels of the WORKLOAD object, not the pod.
TEST(Scope, LabelSelectorOnWorkloadLabels) {
  api::Policy p = cluster_policy("In", {"*"});
  p.proactive.common.scope.label_selector.present = true;
  p.proactive.common.scope.label_selector.match_labels = {{"nvidia.com/gpu.present", "true"}};
  Workload w = deployment();
  EXPECT_TRUE(scope_matches(p, w, kProtected));
  w.labels.erase("nvidia.com/gpu.present");
  EXPECT_FALSE(scope_matches(p, w, kProtected));  // SEL-3
  w.labels["nvidia.com/gpu.present"] = "false";
  EXPECT_FALSE(scope_matches(p, w, kProtected));
}

// SEL-3: matchExpressions In, NotIn, Exists, DoesNotExist; scope values are literal (no wildcards).
TEST(Scope, LabelSelectorExpressions) {
  const std::map<std::string, std::string> labels = {{"tier", "gpu"}, {"team", "ml"}};
  auto sel = [](std::string key, std::string op, std::vector<std::string> values) {
    api::LabelSelector s;
    s.present = true;
    s.match_expressions.push_back({std::move(key), std::move(op), std::move(values)});
    return s;
  };
  EXPECT_TRUE(selector_matches(sel("tier", "In", {"cpu", "gpu"}), labels));
  EXPECT_FALSE(selector_matches(sel("tier", "In", {"cpu"}), labels));
  EXPECT_FALSE(selector_matches(sel("absent", "In", {"x"}), labels));
  EXPECT_TRUE(selector_matches(sel("tier", "NotIn", {"cpu"}), labels));
  EXPECT_TRUE(selector_matches(sel("absent", "NotIn", {"x"}), labels));
  EXPECT_FALSE(selector_matches(sel("tier", "NotIn", {"gpu"}), labels));
  EXPECT_TRUE(selector_matches(sel("team", "Exists", {}), labels));
  EXPECT_FALSE(selector_matches(sel("absent", "Exists", {}), labels));
  EXPECT_TRUE(selector_matches(sel("absent", "DoesNotExist", {}), labels));
  EXPECT_FALSE(selector_matches(sel("team", "DoesNotExist", {}), labels));
  EXPECT_FALSE(selector_matches(sel("tier", "Gt", {"1"}), labels));
  EXPECT_FALSE(selector_matches(sel("tier", "In", {"g*"}), labels));       // literal in scopes
  EXPECT_TRUE(selector_matches(sel("tier", "In", {"g*"}), labels, true));  // CON-1 wildcard option
  EXPECT_TRUE(selector_matches(api::LabelSelector{}, labels));             // absent: everything
}

// SEL-3: the namespace must not be protected, whatever the policy says.
TEST(Scope, ProtectedNamespaceNeverMatches) {
  EXPECT_FALSE(scope_matches(cluster_policy("In", {"*"}), deployment("coredns", "kube-system"), kProtected));
  EXPECT_TRUE(scope_matches(cluster_policy("In", {"*"}), deployment("coredns", "kube-system"), {}));
}
