// SPEC §4 examples E1-E6, verbatim: KAI strategy with upsize and downsize on, setFromUnspecified off and
// ceiling "1" (E6: vanilla with setFromUnspecified on). Each test spells out the exact output pod.
#include <gtest/gtest.h>

#include "../fixtures.h"
#include "decide/admission/pod_mutation.h"

using namespace kubex;
using namespace kubex::decide;
using namespace kubex::decide::test;

namespace {

constexpr const char* kInfo = "automation-webhook.kubex.ai/pod-rightsizing-info";
constexpr const char* kConstraints = "rightsizing.kubex.ai/automation-constraints";
constexpr const char* kStaticRequests = "static.rightsizing.kubex.ai/desired-resource-requests";

struct KaiStatic07 {
  Scenario s;
  KaiStatic07() {
    const auto* st = s.add_strategy(kai_strategy());
    s.add_policy(static_policy("s", "kai", {{"app", gpu_request("0.7")}}), st);
  }
};

}  // namespace

// E1: gpu-fraction 0.25 with queue my-queue, static 0.7 -> gpu-fraction "0.7", queue kept, kai-scheduler.
TEST(AdmissionExamples, E1_FractionUpdatedQueueKept) {
  KaiStatic07 f;
  const json in = app_pod(json::object(), {{"gpu-fraction", "0.25"}}, {{"kai.scheduler/queue", "my-queue"}});
  const AdmissionDecision d = f.s.run(in);

  json want = in;
  want["metadata"]["annotations"]["gpu-fraction"] = "0.7";
  want["spec"]["schedulerName"] = "kai-scheduler";
  want["metadata"]["annotations"][kStaticRequests] = R"({"app":{"gpu":"0.7"}})";
  want["metadata"]["annotations"][kInfo] =
      R"({"mode":"kai","strategy":"AutomationStrategy/kai","containers":{"app":{"gpu":{"from":"0.25","to":"0.7","source":"StaticPolicy/s"}}},)"
      R"("kai":{"scheduler":{"from":"default-scheduler","to":"kai-scheduler"}}})";  // ADM-16: the queue was kept
  EXPECT_EQ(*d.pod, want);          // E1
  EXPECT_EQ(patched(in, d), want);  // the RFC 6902 patch produces it
  EXPECT_EQ(d.result, AdmissionResult::kMutated);
  EXPECT_EQ(d.summary.text,  // OBS-4
            "Applied rightsizing requests [app:[gpu=0.7]] limits [none]; kai [scheduler=kai-scheduler]");
  EXPECT_EQ(d.summary.mode, "kai");
  EXPECT_EQ(d.summary.strategy, "AutomationStrategy/kai");
  ASSERT_EQ(d.summary.changes.size(), 1u);
  EXPECT_EQ(d.summary.changes[0],
            (Change{"app", Resource::kGpu, Usage::kRequest, "0.25", "0.7", "0.7", "StaticPolicy/s"}));
}

// E2: nvidia.com/gpu 2 in requests and limits, no queue, static 0.7 -> GPU removed from requests and limits,
// gpu-fraction "0.7", queue kubex-unlimited-gpu-queue.
TEST(AdmissionExamples, E2_WholeGpusConvertedToFraction) {
  KaiStatic07 f;
  const json in = app_pod(whole_gpus(2));
  const AdmissionDecision d = f.s.run(in);

  json want = in;
  want["spec"]["containers"][0]["resources"] = json::object();
  want["metadata"]["annotations"] = {
      {"gpu-fraction", "0.7"},
      {kStaticRequests, R"({"app":{"gpu":"0.7"}})"},
      {kInfo,
       R"({"mode":"kai","strategy":"AutomationStrategy/kai","containers":{"app":{"gpu":{"from":"2","to":"0.7","source":"StaticPolicy/s"}}},)"
       R"("kai":{"scheduler":{"from":"default-scheduler","to":"kai-scheduler"},"queue":{"from":null,"to":"kubex-unlimited-gpu-queue"}}})"}};
  want["metadata"]["labels"]["kai.scheduler/queue"] = "kubex-unlimited-gpu-queue";
  want["spec"]["schedulerName"] = "kai-scheduler";
  EXPECT_EQ(*d.pod, want);  // E2
  EXPECT_EQ(patched(in, d), want);
  EXPECT_EQ(d.summary.text,
            "Applied rightsizing requests [app:[gpu=0.7]] limits [none]; "
            "kai [scheduler=kai-scheduler queue=kubex-unlimited-gpu-queue]");  // OBS-4
  ASSERT_EQ(d.summary.changes.size(), 1u);
  EXPECT_EQ(d.summary.changes[0].from, "2");  // ADM-11: going from 2 GPUs to 0.7 is an ordinary downsize
}

// E3: no GPU, static 0.7, setFromUnspecified off -> unchanged, automation-strategy-disabled
// (setFromUnspecified).
TEST(AdmissionExamples, E3_SetFromUnspecifiedGated) {
  KaiStatic07 f;
  const json in = app_pod();
  const AdmissionDecision d = f.s.run(in);

  json want = in;
  want["metadata"]["annotations"] = {
      {kConstraints,
       R"([{"reason":"automation-strategy-disabled","targets":[{"container":"app","direction":"setFromUnspecified","resource":"gpu","usage":"request"}]}])"},
      {kStaticRequests, R"({"app":{"gpu":"0.7"}})"}};
  EXPECT_EQ(*d.pod, want);  // E3: resources, scheduler and queue untouched
  EXPECT_EQ(d.result, AdmissionResult::kUnchanged);
  EXPECT_EQ(d.summary.text, "No rightsizing changes");
  EXPECT_EQ(d.summary.applied_filters, (std::vector<std::string>{"automation-strategy-disabled"}));
}

// E4: nvidia.com/gpu 1 and no policy provides GPU -> unchanged, scheduler and queue too;
// no-gpu-recommendation.
TEST(AdmissionExamples, E4_WholeGpuWithoutRecommendation) {
  Scenario s;
  const auto* st = s.add_strategy(as_cluster(kai_strategy("kai-gpu-sharing")));
  api::Policy baseline =
      policy_of(api::Kind::kClusterProactivePolicy, "kai-gpu-sharing-baseline", "kai-gpu-sharing");
  baseline.proactive.common.scope.label_selector.present = true;
  baseline.proactive.common.scope.label_selector.match_labels = {{"nvidia.com/gpu.present", "true"}};
  baseline.proactive.common.scope.workload_types = {"Deployment"};
  s.add_policy(baseline, st);
  const json in = app_pod(whole_gpus(1));
  const AdmissionDecision d = s.run(in);

  json want = in;
  want["metadata"]["annotations"] = {
      {kConstraints,
       R"([{"reason":"no-gpu-recommendation","targets":[{"container":"app","resource":"gpu","usage":"request"}]}])"}};
  EXPECT_EQ(*d.pod, want);  // E4: only the reason; nothing contributes, so nothing is mirrored
  EXPECT_EQ(d.result, AdmissionResult::kUnchanged);
  EXPECT_EQ(d.summary.text, "No rightsizing changes");
  EXPECT_EQ(d.summary.strategy, "ClusterAutomationStrategy/kai-gpu-sharing");
}

// E5: gpu-fraction 0.5 and reactive 1.3 -> ceiling-clamped to 1 -> nvidia.com/gpu 1 in requests and limits,
// no gpu-fraction, KAI extras.
TEST(AdmissionExamples, E5_ReactiveClampedToOneWholeGpu) {
  Scenario s;
  const auto* st = s.add_strategy(kai_strategy());
  s.add_policy(policy_of(api::Kind::kGpuReactivePolicy, "r", "kai"), st);
  const std::string rec = R"({"app":{"gpu":"1.3"}})";
  s.workload.annotations["gpureactive.rightsizing.kubex.ai/desired-resource-requests"] = rec;
  const json in = app_pod(json::object(), {{"gpu-fraction", "0.5"}});
  const AdmissionDecision d = s.run(in);

  json want = in;
  want["spec"]["containers"][0]["resources"] = whole_gpus(1);
  want["spec"]["schedulerName"] = "kai-scheduler";
  want["metadata"]["labels"]["kai.scheduler/queue"] = "kubex-unlimited-gpu-queue";
  want["metadata"]["annotations"] = {
      {kConstraints,
       R"([{"reason":"ceiling-clamped","targets":[{"container":"app","resource":"gpu","usage":"request"}]}])"},
      {"gpureactive.rightsizing.kubex.ai/desired-resource-requests", rec},
      {kInfo,
       R"({"mode":"kai","strategy":"AutomationStrategy/kai","containers":{"app":{"gpu":{"from":"0.5","to":"1","source":"GpuReactivePolicy/r"}}},)"
       R"("kai":{"scheduler":{"from":"default-scheduler","to":"kai-scheduler"},"queue":{"from":null,"to":"kubex-unlimited-gpu-queue"}}})"}};
  EXPECT_EQ(*d.pod, want);  // E5
  EXPECT_EQ(patched(in, d), want);
  EXPECT_EQ(d.summary.text,
            "Applied rightsizing requests [app:[gpu=1]] limits [none]; "
            "kai [scheduler=kai-scheduler queue=kubex-unlimited-gpu-queue]");
  EXPECT_EQ(d.summary.policies,
            (std::map<std::string, std::string>{{"requests.gpu", "GpuReactivePolicy/r"}}));
}

// E6: vanilla strategy with setFromUnspecified on, no GPU, static 0.7 -> nvidia.com/gpu "1" in requests and
// limits; summary `Applied rightsizing requests [app:[gpu=0.7]] limits [none]`.
TEST(AdmissionExamples, E6_VanillaCeil) {
  Scenario s;
  const auto* st = s.add_strategy(vanilla_strategy());
  s.add_policy(static_policy("s", "plain", {{"app", gpu_request("0.7")}}), st);
  const json in = app_pod();
  const AdmissionDecision d = s.run(in);

  json want = in;
  want["spec"]["containers"][0]["resources"] = whole_gpus(1);
  want["metadata"]["annotations"] = {
      {kStaticRequests, R"({"app":{"gpu":"0.7"}})"},
      {kInfo,
       R"({"mode":"vanilla","strategy":"AutomationStrategy/plain","containers":{"app":{"gpu":{"from":"unspecified","to":"1","source":"StaticPolicy/s"}}}})"}};
  EXPECT_EQ(*d.pod, want);  // E6: no scheduler, queue or fraction in vanilla mode
  EXPECT_EQ(patched(in, d), want);
  EXPECT_EQ(d.summary.text, "Applied rightsizing requests [app:[gpu=0.7]] limits [none]");  // E6
  EXPECT_EQ(d.summary.mode, "vanilla");
  EXPECT_EQ(d.result, AdmissionResult::kMutated);
}

// ADM-2: every example is idempotent, and early + late equals one pass.
TEST(AdmissionExamples, ExamplesAreIdempotent) {
  KaiStatic07 f;
  for (const json& in :
       {app_pod(json::object(), {{"gpu-fraction", "0.25"}}, {{"kai.scheduler/queue", "my-queue"}}),
        app_pod(whole_gpus(2)), app_pod()}) {
    const AdmissionDecision once = f.s.run(in);
    const AdmissionDecision again = f.s.run(*once.pod);
    EXPECT_FALSE(again.patched()) << again.patch->dump();  // ADM-2
    EXPECT_EQ(*again.pod, *once.pod);
    const AdmissionDecision early = f.s.run(in, Pass::kEarly);
    const AdmissionDecision late = f.s.run(*early.pod, Pass::kLate);
    EXPECT_EQ(*late.pod, *once.pod);  // ADM-2: early then late == one pass
    EXPECT_FALSE(late.patched());
  }
}
