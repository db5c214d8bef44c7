// OBS-1 §1.2–1.4: AutomationStrategyResolved / Ready of the managing policies from their verdict and strategy
// resolution; matchedWorkloads over the SEL-1 top owners (SEL-3 scope, protected namespaces excluded).
#include "decide/status/policy_status.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "api/parse.h"

using namespace kubex;
using namespace kubex::decide;
using nlohmann::json;
using policy::Resolution;

namespace {

const std::string kNsNotFound = "AutomationStrategy \"gpu\" not found in namespace \"ml\"";
const std::string kClusterNotFound = "ClusterAutomationStrategy \"kai\" not found";

PolicyStatusInput input(api::Kind kind, Resolution r, Verdict spec = {}, std::string strategy_message = "") {
  PolicyStatusInput in;
  in.kind = kind;
  in.ns = api::is_cluster_policy(kind) ? "" : "ml";
  in.strategy_ref = api::is_cluster_policy(kind) ? "kai" : "gpu";
  in.spec = std::move(spec);
  in.resolution = r;
  in.strategy_message = std::move(strategy_message);
  return in;
}

}  // namespace

// OBS-1: the exact StrategyNotFound messages of both scopes.
TEST(PolicyConditions, StrategyNotFoundMessages) {
  EXPECT_EQ(strategy_not_found_message(api::Kind::kGpuReactivePolicy, "ml", "gpu"), kNsNotFound);
  EXPECT_EQ(strategy_not_found_message(api::Kind::kClusterStaticPolicy, "", "kai"), kClusterNotFound);
  EXPECT_EQ(strategy_not_found_message(api::Kind::kProactivePolicy, "team-a", "s"),
            "AutomationStrategy \"s\" not found in namespace \"team-a\"");
}

// OBS-1 table: every resolution and verdict combination, in the documented precedence.
TEST(PolicyConditions, Table) {
  const Verdict ok;
  const Verdict spec_bad{false, false, "spec.weight: must be >= 0"};
  const Verdict contract_bad{false, true, "spec.experimental: required"};
  const std::string strategy_msg = "spec.kai.queue: must be a valid RFC 1123 label";
  const std::string contract_msg =
      "spec.experimental.gpuKaiContract: unsupported value \"v1alpha1-2026-04\": the only "
      "accepted GPU/KAI contract is \"v1alpha1-2026-07\"";
  struct Case {
    const char* what;
    PolicyStatusInput in;
    ConditionState resolved, ready;
    bool valid;
  };
  const Case cases[] = {
      {"resolved, valid",
       input(api::Kind::kClusterProactivePolicy, Resolution::kResolved),
       {"AutomationStrategyResolved", "True", "Resolved", "ClusterAutomationStrategy \"kai\" resolved"},
       {"Ready", "True", "Reconciled", "the policy and its strategy are valid"},
       true},
      // The reactive recommender writes the same Ready message after a good cycle (REA-10 recovery).
      {"reactive, resolved, valid",
       input(api::Kind::kClusterGpuReactivePolicy, Resolution::kResolved),
       {"AutomationStrategyResolved", "True", "Resolved", "ClusterAutomationStrategy \"kai\" resolved"},
       {"Ready", "True", "Reconciled", "the policy and its strategy are valid"},
       true},
      {"namespaced strategy missing",
       input(api::Kind::kGpuReactivePolicy, Resolution::kStrategyNotFound),
       {"AutomationStrategyResolved", "False", "StrategyNotFound", kNsNotFound},
       {"Ready", "False", "StrategyNotFound", kNsNotFound},
       false},
      {"cluster strategy missing",
       input(api::Kind::kClusterProactivePolicy, Resolution::kStrategyNotFound),
       {"AutomationStrategyResolved", "False", "StrategyNotFound", kClusterNotFound},
       {"Ready", "False", "StrategyNotFound", kClusterNotFound},
       false},
      {"own spec invalid, strategy fine: resolved, not ready",
       input(api::Kind::kStaticPolicy, Resolution::kResolved, spec_bad),
       {"AutomationStrategyResolved", "True", "Resolved", "AutomationStrategy \"gpu\" resolved"},
       {"Ready", "False", "InvalidSpec", spec_bad.message},
       false},
      {"own contract invalid",
       input(api::Kind::kGpuReactivePolicy, Resolution::kResolved, contract_bad),
       {"AutomationStrategyResolved", "False", "InvalidContract", contract_bad.message},
       {"Ready", "False", "InvalidContract", contract_bad.message},
       false},
      {"own contract invalid and strategy missing: both visible",
       input(api::Kind::kGpuReactivePolicy, Resolution::kStrategyNotFound, contract_bad),
       {"AutomationStrategyResolved", "False", "StrategyNotFound", kNsNotFound},
       {"Ready", "False", "InvalidContract", contract_bad.message},
       false},
      {"strategy contract invalid",
       input(api::Kind::kClusterStaticPolicy, Resolution::kStrategyContract, ok, contract_msg),
       {"AutomationStrategyResolved", "False", "InvalidContract",
        "ClusterAutomationStrategy \"kai\" is invalid: " + contract_msg},
       {"Ready", "False", "InvalidContract", "ClusterAutomationStrategy \"kai\" is invalid: " + contract_msg},
       false},
      {"strategy spec invalid",
       input(api::Kind::kProactivePolicy, Resolution::kStrategyInvalid, ok, strategy_msg),
       {"AutomationStrategyResolved", "False", "StrategyInvalid",
        "AutomationStrategy \"gpu\" is invalid: " + strategy_msg},
       {"Ready", "False", "InvalidSpec", "AutomationStrategy \"gpu\" is invalid: " + strategy_msg},
       false},
      {"own spec invalid and strategy invalid: own error first on Ready",
       input(api::Kind::kProactivePolicy, Resolution::kStrategyInvalid, spec_bad, strategy_msg),
       {"AutomationStrategyResolved", "False", "StrategyInvalid",
        "AutomationStrategy \"gpu\" is invalid: " + strategy_msg},
       {"Ready", "False", "InvalidSpec", spec_bad.message},
       false},
  };
  for (const auto& c : cases) {
    PolicyConditions got = policy_conditions(c.in);
    EXPECT_EQ(got.resolved, c.resolved) << c.what;
    EXPECT_EQ(got.ready, c.ready) << c.what;
    EXPECT_EQ(got.valid, c.valid) << c.what;
  }
  // An empty reference says what the validator says, not `... "" not found`.
  PolicyStatusInput empty = input(api::Kind::kStaticPolicy, Resolution::kStrategyNotFound,
                                  {false, false, "spec.automationStrategyRef.name: required"});
  empty.strategy_ref.clear();
  EXPECT_EQ(policy_conditions(empty).resolved.message, "spec.automationStrategyRef.name: required");
  // Ready's False reasons are those OBS-1 lists for it.
  for (const auto& c : cases) {
    const std::string r = policy_conditions(c.in).ready.reason;
    EXPECT_TRUE(r == "Reconciled" || r == "StrategyNotFound" || r == "InvalidContract" || r == "InvalidSpec")
        << r;
  }
  EXPECT_EQ(recommender_ready_reasons(), (std::vector<std::string>{"PrometheusQueryFailed", "MetricsNotPerPod"}));
}

// REA-1, PRO-8: who writes lastEvaluationTime. The status write is a static policy's evaluation; a valid reactive
// policy's is its cycle's (the status controller stamping it between cycles moved `kubex explain`'s next cycle), an
// invalid one has no cycle, so its status write is its evaluation; a proactive policy's is its history evaluation's.
TEST(PolicyConditions, WhichStatusWritesAreTheEvaluation) {
  struct Case {
    api::Kind kind;
    Resolution resolution;
    bool stamps;
  } cases[] = {
      {api::Kind::kStaticPolicy, Resolution::kResolved, true},
      {api::Kind::kClusterStaticPolicy, Resolution::kStrategyNotFound, true},
      {api::Kind::kGpuReactivePolicy, Resolution::kResolved, false},
      {api::Kind::kClusterGpuReactivePolicy, Resolution::kResolved, false},
      {api::Kind::kGpuReactivePolicy, Resolution::kStrategyNotFound, true},
      {api::Kind::kClusterGpuReactivePolicy, Resolution::kStrategyInvalid, true},
      {api::Kind::kProactivePolicy, Resolution::kResolved, false},
      {api::Kind::kClusterProactivePolicy, Resolution::kStrategyNotFound, false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(policy_conditions(input(c.kind, c.resolution)).stamps_evaluation, c.stamps)
        << api::info(c.kind).name << " " << static_cast<int>(c.resolution);
  }
  // A reactive policy whose own spec is invalid has no cycle either.
  EXPECT_TRUE(policy_conditions(input(api::Kind::kGpuReactivePolicy, Resolution::kResolved,
                                      {false, false, "spec.x: bad"}))
                  .stamps_evaluation);
}

namespace {

std::shared_ptr<const api::WorkloadView> workload(const std::string& kind, const std::string& ns,
                                                  const std::string& name, json labels = json::object(),
                                                  const std::string& owner_kind = "") {
  json o = {{"apiVersion", kind == "CronJob" || kind == "Job" ? "batch/v1" : "apps/v1"},
            {"kind", kind},
            {"metadata", {{"name", name}, {"namespace", ns}, {"uid", name + "-uid"}, {"labels", labels}}},
            {"spec", json::object()}};
  if (!owner_kind.empty()) {
    o["metadata"]["ownerReferences"] = {{{"apiVersion", "batch/v1"},
                                         {"kind", owner_kind},
                                         {"name", "owner"},
                                         {"uid", "o"},
                                         {"controller", true}}};
  }
  return api::project_workload(o);
}

api::PolicyParse parse(const json& spec, const std::string& kind = "StaticPolicy",
                       const std::string& ns = "ml") {
  json o = {{"apiVersion", "rightsizing.kubex.ai/v1alpha1"},
            {"kind", kind},
            {"metadata", {{"name", "p"}, {"generation", 1}}},
            {"spec", spec}};
  if (!ns.empty()) o["metadata"]["namespace"] = ns;
  return api::parse_policy(o);
}

const std::vector<std::string> kProtected = {"kube-*", "openshift-*", "gmp-*"};

}  // namespace

// SEL-1: which owner objects are workloads.
TEST(WorkloadRoots, TopOwnersOnly) {
  EXPECT_TRUE(is_workload_root(*workload("Deployment", "ml", "d")));
  EXPECT_TRUE(is_workload_root(*workload("StatefulSet", "ml", "s")));
  EXPECT_TRUE(is_workload_root(*workload("DaemonSet", "ml", "ds")));
  EXPECT_TRUE(is_workload_root(*workload("CronJob", "ml", "cj")));
  EXPECT_TRUE(is_workload_root(*workload("Job", "ml", "j")));                   // a Job of its own
  EXPECT_FALSE(is_workload_root(*workload("Job", "ml", "j1", {}, "CronJob")));  // the CronJob is the workload
  EXPECT_FALSE(is_workload_root(*workload("Job", "ml", "j2", {}, "AnalysisRun")));  // the AnalysisRun is
  EXPECT_FALSE(is_workload_root(*workload("ReplicaSet", "ml", "rs")));
  EXPECT_TRUE(is_workload_root(*workload("Model", "ml", "m")));
  EXPECT_TRUE(is_workload_root(*workload("Rollout", "ml", "r")));
}

// SEL-3 over the caches: matchedWorkloads counts the top owners the scope matches now.
TEST(MatchedWorkloads, CountsWhatTheScopeMatches) {
  const json gpu = {{"nvidia.com/gpu.present", "true"}};
  std::vector<std::shared_ptr<const api::WorkloadView>> views = {
      workload("Deployment", "ml", "a", gpu),
      workload("Deployment", "ml", "b", gpu),
      workload("Deployment", "ml", "no-label"),
      workload("Deployment", "other", "c", gpu),  // another namespace
      workload("StatefulSet", "ml", "sts", gpu),  // not in workloadTypes below
      workload("Job", "ml", "from-cron", gpu, "CronJob"),
      workload("ReplicaSet", "ml", "rs", gpu),
      workload("Deployment", "kube-system", "k", gpu),  // protected
      nullptr,
  };
  const json scope = {{"labelSelector", {{"matchLabels", gpu}}}, {"workloadTypes", {"Deployment", "Job"}}};
  auto ns_policy = parse({{"automationStrategyRef", {{"name", "s"}}}, {"scope", scope}});
  ASSERT_TRUE(ns_policy.valid()) << ns_policy.report.message();
  EXPECT_EQ(count_matched_workloads(ns_policy.value, true, views, kProtected), 2);
  EXPECT_EQ(count_matched_workloads(ns_policy.value, false, views, kProtected), 0);  // scope unusable

  json cluster_scope = scope;
  cluster_scope["namespaceSelector"] = {{"operator", "In"}, {"values", {"*"}}};
  auto cl = parse({{"automationStrategyRef", {{"name", "s"}}}, {"scope", cluster_scope}},
                  "ClusterStaticPolicy", "");
  ASSERT_TRUE(cl.valid()) << cl.report.message();
  EXPECT_EQ(count_matched_workloads(cl.value, true, views, kProtected), 3);  // ml/a, ml/b, other/c
  EXPECT_EQ(count_matched_workloads(cl.value, true, views, {}), 4);          // kube-system unprotected
  EXPECT_EQ(count_matched_workloads(cl.value, true, views, {"kube-*", "other"}), 2);
  views.pop_back();
  views.pop_back();
  views.erase(views.begin());  // ml/a deleted
  EXPECT_EQ(count_matched_workloads(cl.value, true, views, kProtected), 2);
  // A policy without scope matches every default-listed kind in its namespace.
  auto all = parse({{"automationStrategyRef", {{"name", "s"}}}});
  EXPECT_EQ(count_matched_workloads(all.value, true, views, kProtected), 3);  // ml/b, ml/no-label, ml/sts
}
