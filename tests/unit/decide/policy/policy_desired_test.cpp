#include <gtest/gtest.h>

#include "../fixtures.h"
#include "decide/policy/desired.h"

using namespace kubex;
using namespace kubex::decide;
using namespace kubex::decide::policy;
using namespace kubex::decide::test;

namespace {

struct Fixture {
  Scenario s;
  const api::Strategy* st = s.add_strategy(kai_strategy());
  Match match() const { return match_policies(s.workload, s.candidates, s.evaluation, {"kube-*"}); }
};

api::StaticResources resources(const char* gpu, const char* cpu, const char* memory,
                               const char* cpu_limit = nullptr, const char* memory_limit = nullptr) {
  api::StaticResources r;
  if (gpu) r.gpu_request = q(gpu);
  if (cpu) r.cpu_request = q(cpu);
  if (memory) r.memory_request = q(memory);
  if (cpu_limit) r.cpu_limit = q(cpu_limit);
  if (memory_limit) r.memory_limit = q(memory_limit);
  return r;
}

std::string source(const Match& m, const Desired& d, std::size_t c, Slot slot) {
  const auto& v = d.containers[c].at(slot);
  return v ? m.policies[v->policy].ref : "-";
}

}  // namespace

// SEL-8: "*" cpu/memory go to every target container; its gpu only to containers with a GPU allocation.
TEST(Desired, StarGoesToGpuContainersOnly) {
  Fixture f;
  f.s.add_policy(static_policy("s", "kai", {{"*", resources("0.5", "250m", "1Gi")}}), f.st);
  const Match m = f.match();
  const std::vector<TargetContainer> containers = {{"sidecar", false}, {"app", true}, {"logger", false}};
  const Desired d = collect_desired(m, f.s.workload, containers);
  ASSERT_EQ(d.containers.size(), 3u);
  EXPECT_FALSE(d.containers[0].at(Slot::kRequestsGpu));  // SEL-8
  EXPECT_EQ(d.containers[1].at(Slot::kRequestsGpu)->gpu, 50);
  EXPECT_FALSE(d.containers[2].at(Slot::kRequestsGpu));
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(d.containers[i].at(Slot::kRequestsCpu)->quantity, q("250m"));  // SEL-8: every container
    EXPECT_EQ(d.containers[i].at(Slot::kRequestsMemory)->quantity, q("1Gi"));
    EXPECT_FALSE(d.containers[i].at(Slot::kLimitsCpu));
  }
  EXPECT_EQ(d.gpu_container, 1u);
}

// SEL-8: with no GPU allocation anywhere, the "*" gpu goes to the first target container only.
TEST(Desired, StarGpuToFirstContainerWhenNoneHasOne) {
  Fixture f;
  f.s.add_policy(static_policy("s", "kai", {{"*", gpu_request("0.7")}}), f.st);
  const Match m = f.match();
  const Desired d =
      collect_desired(m, f.s.workload, std::vector<TargetContainer>{{"app", false}, {"side", false}});
  EXPECT_EQ(d.containers[0].at(Slot::kRequestsGpu)->gpu, 70);  // SEL-8
  EXPECT_FALSE(d.containers[1].at(Slot::kRequestsGpu));
}

// SEL-8: named entries always apply and override "*" resource by resource.
TEST(Desired, NamedEntryOverridesStarPerResource) {
  Fixture f;
  f.s.add_policy(
      static_policy("s", "kai",
                    {{"*", resources("0.5", "250m", "1Gi")}, {"side", resources("0.2", nullptr, "64Mi")}}),
      f.st);
  const Match m = f.match();
  const Desired d =
      collect_desired(m, f.s.workload, std::vector<TargetContainer>{{"app", true}, {"side", false}});
  EXPECT_EQ(d.containers[1].at(Slot::kRequestsGpu)->gpu, 20);  // named gpu applies without an allocation
  EXPECT_EQ(d.containers[1].at(Slot::kRequestsCpu)->quantity, q("250m"));     // from "*"
  EXPECT_EQ(d.containers[1].at(Slot::kRequestsMemory)->quantity, q("64Mi"));  // named wins
  EXPECT_EQ(d.containers[0].at(Slot::kRequestsGpu)->gpu, 50);
}

// SEL-6: each slot comes from the first policy in SEL-5 order that provides one; reactive and proactive
// provide only requests.gpu, from their owner annotation.
TEST(Desired, PerResourcePrecedence) {
  Fixture f;
  f.s.add_policy(policy_of(api::Kind::kProactivePolicy, "p", "kai"), f.st);                            // 70
  f.s.add_policy(static_policy("s", "kai", {{"app", resources("0.6", "500m", nullptr, "1")}}), f.st);  // 90
  f.s.add_policy(policy_of(api::Kind::kGpuReactivePolicy, "r", "kai"), f.st);                          // 120
  f.s.workload.annotations["gpureactive.rightsizing.kubex.ai/desired-resource-requests"] =
      R"({"app":{"gpu":"0.48","cpu":"9"},"other":{"gpu":"0.1"}})";
  f.s.workload.annotations["proactive.rightsizing.kubex.ai/desired-resource-requests"] =
      R"({"app":{"gpu":"0.36"},"side":{"gpu":"0.2"}})";
  const Match m = f.match();
  const Desired d =
      collect_desired(m, f.s.workload, std::vector<TargetContainer>{{"app", true}, {"side", false}});
  EXPECT_EQ(d.containers[0].at(Slot::kRequestsGpu)->gpu, 48);  // SEL-6: reactive (120) first
  EXPECT_EQ(source(m, d, 0, Slot::kRequestsGpu), "GpuReactivePolicy/r");
  EXPECT_EQ(source(m, d, 0, Slot::kRequestsCpu), "StaticPolicy/s");  // reactive provides gpu only
  EXPECT_EQ(d.containers[0].at(Slot::kRequestsCpu)->quantity, q("500m"));
  EXPECT_EQ(source(m, d, 0, Slot::kLimitsCpu), "StaticPolicy/s");
  EXPECT_EQ(source(m, d, 0, Slot::kRequestsMemory), "-");
  EXPECT_EQ(source(m, d, 1, Slot::kRequestsGpu), "ProactivePolicy/p");  // only the proactive one has "side"
  EXPECT_EQ(d.containers[1].at(Slot::kRequestsGpu)->gpu, 20);
  // SEL-9: the GPU container is "app" (it has an allocation); the reactive policy governs.
  EXPECT_EQ(d.gpu_container, 0u);
  EXPECT_EQ(m.policies[*d.governing].ref, "GpuReactivePolicy/r");
}

// VAL-7: invalid desired-annotation JSON makes that source be ignored.
TEST(Desired, InvalidOwnerAnnotationIsIgnored) {
  Fixture f;
  f.s.add_policy(policy_of(api::Kind::kGpuReactivePolicy, "r", "kai"), f.st);
  f.s.add_policy(static_policy("s", "kai", {{"*", gpu_request("0.6")}}), f.st);
  f.s.workload.annotations["gpureactive.rightsizing.kubex.ai/desired-resource-requests"] = "{not json";
  const Match m = f.match();
  const Desired d = collect_desired(m, f.s.workload, std::vector<TargetContainer>{{"app", true}});
  EXPECT_EQ(source(m, d, 0, Slot::kRequestsGpu), "StaticPolicy/s");  // VAL-7
  EXPECT_EQ(d.ignored_sources,
            (std::vector<std::string>{"gpureactive.rightsizing.kubex.ai/desired-resource-requests"}));
}

// SEL-9: with no policy providing GPU, the first matching valid policy in SEL-5 order governs.
TEST(Desired, GoverningFallsBackToFirstPolicy) {
  Fixture f;
  const auto* other = f.s.add_strategy(vanilla_strategy("other"));
  f.s.add_policy(policy_of(api::Kind::kProactivePolicy, "p", "kai"), f.st);
  f.s.add_policy(static_policy("s", "other", {{"*", resources(nullptr, "100m", nullptr)}}), other);
  const Match m = f.match();
  const Desired d = collect_desired(m, f.s.workload, std::vector<TargetContainer>{{"app", true}});
  EXPECT_FALSE(d.gpu_container);
  EXPECT_EQ(m.policies[*d.governing].ref, "StaticPolicy/s");  // SEL-9: static (90) before proactive (70)
  EXPECT_EQ(m.policies[*d.governing].strategy_ref, "AutomationStrategy/other");
}

// SEL-9: the GPU winner of the container WITH an allocation governs, not the first container's.
TEST(Desired, GoverningFollowsGpuContainer) {
  Fixture f;
  const auto* other = f.s.add_strategy(vanilla_strategy("other"));
  f.s.add_policy(static_policy("s1", "other", {{"init", gpu_request("0.1")}}), other);
  f.s.add_policy(policy_of(api::Kind::kGpuReactivePolicy, "r", "kai"), f.st);
  f.s.workload.annotations["gpureactive.rightsizing.kubex.ai/desired-resource-requests"] =
      R"({"app":{"gpu":"0.3"}})";
  const Match m = f.match();
  const Desired d =
      collect_desired(m, f.s.workload, std::vector<TargetContainer>{{"init", false}, {"app", true}});
  EXPECT_EQ(d.gpu_container, 1u);
  EXPECT_EQ(m.policies[*d.governing].ref, "GpuReactivePolicy/r");  // SEL-9
}

// RBK-4: an unmanaged or held workload gets no desired values and no governing policy.
TEST(Desired, NothingFromHeldPolicies) {
  Fixture f;
  f.s.add_policy(static_policy("s", "kai", {{"*", gpu_request("0.6")}}), f.st, /*valid=*/false);
  const Match m = f.match();
  ASSERT_TRUE(m.on_hold);
  const Desired d = collect_desired(m, f.s.workload, std::vector<TargetContainer>{{"app", true}});
  EXPECT_FALSE(d.containers[0].at(Slot::kRequestsGpu));  // RBK-4
  EXPECT_FALSE(d.governing);
}
