#include "decide/policy/static_owner.h"

#include <gtest/gtest.h>

#include "../fixtures.h"

using namespace kubex;
using namespace kubex::decide;
using namespace kubex::decide::policy;
using namespace kubex::decide::test;

namespace {

const std::vector<TargetContainer> kContainers = {{"app", true}, {"side", false}};

api::StaticResources res(const char* gpu, const char* cpu, const char* mem, const char* cpu_l,
                         const char* mem_l) {
  api::StaticResources r;
  if (gpu) r.gpu_request = q(gpu);
  if (cpu) r.cpu_request = q(cpu);
  if (mem) r.memory_request = q(mem);
  if (cpu_l) r.cpu_limit = q(cpu_l);
  if (mem_l) r.memory_limit = q(mem_l);
  return r;
}

}  // namespace

// SPEC §2 / SEL-7: the static owner annotations mirror the merged per-resource static result, keys sorted,
// quantities canonical, GPU per GPU-2, limits without gpu.
TEST(StaticOwner, MergedStaticResult) {
  Scenario s;
  const auto* st = s.add_strategy(kai_strategy());
  const auto* cst = s.add_strategy(as_cluster(kai_strategy("ckai")));
  // Both static kinds have priority 90: the weight puts the namespaced one first (SEL-5).
  api::Policy first = static_policy("s", "kai", {{"app", res("0.475", "0.2", nullptr, "600m", nullptr)}});
  first.static_spec.common.weight = 1;
  s.add_policy(first, st);
  s.add_policy(static_policy("cs", "ckai", {{"*", res("0.9", "100m", "268435456", nullptr, "1Gi")}},
                             api::Kind::kClusterStaticPolicy),
               cst);
  s.add_policy(policy_of(api::Kind::kGpuReactivePolicy, "r", "kai"), st);  // not static: ignored here
  s.workload.annotations = {
      {"static.rightsizing.kubex.ai/desired-resource-limits", "stale"},
      {"static.rightsizing.kubex.ai/desired-resource-requests", "stale"},
      {"cwstatic.rightsizing.kubex.ai/desired-resource-requests", "stale"},
      {"gpureactive.rightsizing.kubex.ai/desired-resource-requests", R"({"app":{"gpu":"0.3"}})"},
  };
  const Match m = match_policies(s.workload, s.candidates, s.evaluation, {});
  const OwnerAnnotationPlan plan = static_owner_annotations(m, s.workload, kContainers);
  EXPECT_FALSE(plan.hold);
  const std::map<std::string, std::string> want = {
      {"static.rightsizing.kubex.ai/desired-resource-requests", R"({"app":{"cpu":"200m","gpu":"0.48"}})"},
      {"static.rightsizing.kubex.ai/desired-resource-limits", R"({"app":{"cpu":"600m"}})"},
      {"cwstatic.rightsizing.kubex.ai/desired-resource-requests",
       R"({"app":{"memory":"268435456"},"side":{"cpu":"100m","memory":"268435456"}})"},
      {"cwstatic.rightsizing.kubex.ai/desired-resource-limits",
       R"({"app":{"memory":"1Gi"},"side":{"memory":"1Gi"}})"},
  };
  EXPECT_EQ(plan.desired, want);
  EXPECT_TRUE(plan.remove.empty());
  EXPECT_FALSE(plan.satisfied_by(s.workload.annotations));
  std::map<std::string, std::string> live = want;
  EXPECT_TRUE(plan.satisfied_by(live));
}

// The static owner annotations are removed when no static policy provides anything any more.
TEST(StaticOwner, RemovesStaleKeys) {
  Scenario s;
  const auto* st = s.add_strategy(kai_strategy());
  s.add_policy(static_policy("s", "kai", {{"*", res(nullptr, "100m", nullptr, nullptr, nullptr)}}), st);
  s.workload.annotations = {
      {"static.rightsizing.kubex.ai/desired-resource-limits", R"({"app":{"cpu":"1"}})"},
      {"cwstatic.rightsizing.kubex.ai/desired-resource-requests", R"({"app":{"gpu":"0.5"}})"},
      {"rightsizing.kubex.ai/rollback-state", "{}"},
  };
  const Match m = match_policies(s.workload, s.candidates, s.evaluation, {});
  const OwnerAnnotationPlan plan = static_owner_annotations(m, s.workload, kContainers);
  EXPECT_EQ(plan.desired,
            (std::map<std::string, std::string>{{"static.rightsizing.kubex.ai/desired-resource-requests",
                                                 R"({"app":{"cpu":"100m"},"side":{"cpu":"100m"}})"}}));
  EXPECT_EQ(plan.remove, (std::vector<std::string>{"cwstatic.rightsizing.kubex.ai/desired-resource-requests",
                                                   "static.rightsizing.kubex.ai/desired-resource-limits"}));
}

// SEL-8 inside the static result: "*" gpu goes to the first target container when none has a GPU.
TEST(StaticOwner, StarGpuFollowsSel8) {
  Scenario s;
  const auto* st = s.add_strategy(kai_strategy());
  s.add_policy(static_policy("s", "kai", {{"*", gpu_request("500m")}}), st);
  const Match m = match_policies(s.workload, s.candidates, s.evaluation, {});
  auto plan =
      static_owner_annotations(m, s.workload, std::vector<TargetContainer>{{"app", false}, {"b", false}});
  EXPECT_EQ(plan.desired.at("static.rightsizing.kubex.ai/desired-resource-requests"),
            R"({"app":{"gpu":"0.5"}})");
  plan = static_owner_annotations(m, s.workload, std::vector<TargetContainer>{{"app", false}, {"b", true}});
  EXPECT_EQ(plan.desired.at("static.rightsizing.kubex.ai/desired-resource-requests"),
            R"({"b":{"gpu":"0.5"}})");
}

// RBK-4: on hold, the owner is left alone; RBK-2: unmatched, every static key goes.
TEST(StaticOwner, HoldAndUnmanaged) {
  Scenario s;
  const auto* st = s.add_strategy(kai_strategy());
  s.add_policy(static_policy("s", "kai", {{"*", gpu_request("0.5")}}), st, /*valid=*/false);
  s.workload.annotations = {
      {"static.rightsizing.kubex.ai/desired-resource-requests", R"({"app":{"gpu":"0.5"}})"}};
  Match m = match_policies(s.workload, s.candidates, s.evaluation, {});
  OwnerAnnotationPlan plan = static_owner_annotations(m, s.workload, kContainers);
  EXPECT_TRUE(plan.hold);  // RBK-4
  EXPECT_TRUE(plan.desired.empty());
  EXPECT_TRUE(plan.remove.empty());
  EXPECT_TRUE(plan.satisfied_by(s.workload.annotations));

  s.candidates.clear();
  m = match_policies(s.workload, s.candidates, s.evaluation, {});
  plan = static_owner_annotations(m, s.workload, kContainers);
  EXPECT_FALSE(plan.hold);
  EXPECT_EQ(plan.remove, (std::vector<std::string>{"static.rightsizing.kubex.ai/desired-resource-requests"}));
}
