// ADM-10 cpu/memory, ADM-14 mirroring, ADM-16 pod-rightsizing-info, OBS-4 summary fields, ACT-1 templates.
#include <gtest/gtest.h>

#include "../fixtures.h"
#include "decide/admission/pod_mutation.h"

using namespace kubex;
using namespace kubex::decide;
using namespace kubex::decide::test;

namespace {

constexpr const char* kInfo = "automation-webhook.kubex.ai/pod-rightsizing-info";

const json& annotations(const AdmissionDecision& d) {
  return d.pod->at("metadata").at("annotations");
}
const json& resources(const AdmissionDecision& d, std::size_t i = 0) {
  return d.pod->at("spec").at("containers").at(i).at("resources");
}

api::StaticResources cpu_mem(const char* cpu, const char* cpu_limit, const char* mem = nullptr,
                             const char* mem_limit = nullptr, const char* gpu = nullptr) {
  api::StaticResources r;
  if (cpu) r.cpu_request = q(cpu);
  if (cpu_limit) r.cpu_limit = q(cpu_limit);
  if (mem) r.memory_request = q(mem);
  if (mem_limit) r.memory_limit = q(mem_limit);
  if (gpu) r.gpu_request = q(gpu);
  return r;
}

}  // namespace

// ADM-10 / OBS-4: static cpu and memory are applied as given; the summary example of OBS-4.
TEST(AdmissionResources, AppliesStaticCpuMemoryAndSummary) {
  Scenario s;
  api::Strategy strategy = kai_strategy();
  strategy.spec.cpu_limits.set_from_unspecified = true;
  const auto* st = s.add_strategy(strategy);
  s.add_policy(static_policy("s", "kai", {{"app", cpu_mem("0.2", "600m", nullptr, nullptr, "0.7")}}), st);
  // Already on KAI in its own queue, so the summary is OBS-4's example verbatim (no `; kai [...]`).
  json in = app_pod(json{{"requests", {{"cpu", "100m"}, {"memory", "256Mi"}}}}, {{"gpu-fraction", "0.25"}},
                    {{"kai.scheduler/queue", "team"}});
  in["spec"]["schedulerName"] = "kai-scheduler";
  const AdmissionDecision d = s.run(in);
  EXPECT_EQ(resources(d),
            (json{{"requests", {{"cpu", "200m"}, {"memory", "256Mi"}}}, {"limits", {{"cpu", "600m"}}}}));
  EXPECT_EQ(d.summary.text,
            "Applied rightsizing requests [app:[cpu=200m gpu=0.7]] limits [app:[cpu=600m]]");  // OBS-4
  EXPECT_EQ(annotations(d).at("static.rightsizing.kubex.ai/desired-resource-requests"),
            R"({"app":{"cpu":"200m","gpu":"0.7"}})");  // ADM-14 mirror
  EXPECT_EQ(annotations(d).at("static.rightsizing.kubex.ai/desired-resource-limits"),
            R"({"app":{"cpu":"600m"}})");
  EXPECT_EQ(annotations(d).at(kInfo),
            R"({"mode":"kai","strategy":"AutomationStrategy/kai","containers":{"app":{)"
            R"("cpu":{"from":"100m","to":"200m","source":"StaticPolicy/s"},)"
            R"("gpu":{"from":"0.25","to":"0.7","source":"StaticPolicy/s"},)"
            R"("limits.cpu":{"from":"unspecified","to":"600m","source":"StaticPolicy/s"}}}})");  // ADM-16

  const json fields = summary_fields(d.summary);  // OBS-4 fields
  EXPECT_EQ(fields["phase"], "admission");
  EXPECT_EQ(fields["pass"], "late");
  EXPECT_EQ(fields["namespace"], "ml");
  EXPECT_EQ(fields["pod"], "train-5d8f7c9b4-");
  EXPECT_EQ(fields["owner"], "Deployment/train");
  EXPECT_EQ(fields["policies"], (json{{"requests.gpu", "StaticPolicy/s"},
                                      {"requests.cpu", "StaticPolicy/s"},
                                      {"limits.cpu", "StaticPolicy/s"}}));
  EXPECT_EQ(fields["strategy"], "AutomationStrategy/kai");
  EXPECT_EQ(fields["mode"], "kai");
  EXPECT_EQ(fields["rightsizingResult"], "MUTATED");
  EXPECT_EQ(
      fields["changes"],
      json::parse(R"([{"container":"app","resource":"cpu","usage":"request","from":"100m","to":"200m"},)"
                  R"({"container":"app","resource":"cpu","usage":"limit","from":"unspecified","to":"600m"},)"
                  R"({"container":"app","resource":"gpu","usage":"request","from":"0.25","to":"0.7"}])"));
  EXPECT_EQ(fields["appliedFilters"], json::array());
  EXPECT_EQ(fields["failedChecks"], json::array());
  EXPECT_EQ(fields["dryRun"], false);
  EXPECT_EQ(fields["summary"], d.summary.text);
}

// ADM-10: a resulting request above the limit drops both changes of that resource.
TEST(AdmissionResources, RequestsExceedLimits) {
  Scenario s;
  const auto* st = s.add_strategy(kai_strategy());
  s.add_policy(static_policy("s", "kai", {{"app", cpu_mem("2", "1", "1Gi", "2Gi")}}), st);
  const json in = app_pod(json{{"requests", {{"cpu", "500m"}, {"memory", "512Mi"}}},
                               {"limits", {{"cpu", "1500m"}, {"memory", "1Gi"}}}});
  const AdmissionDecision d = s.run(in);
  // cpu: request 2 > limit 1 -> both dropped; memory: 1Gi <= 2Gi -> applied.
  EXPECT_EQ(resources(d), (json{{"requests", {{"cpu", "500m"}, {"memory", "1Gi"}}},
                                {"limits", {{"cpu", "1500m"}, {"memory", "2Gi"}}}}));
  EXPECT_EQ(
      annotations(d).at("rightsizing.kubex.ai/automation-constraints"),
      R"([{"reason":"requests-exceed-limits","targets":[{"container":"app","resource":"cpu","usage":"limit"},)"
      R"({"container":"app","resource":"cpu","usage":"request"}]}])");  // ADM-10
  // Only the request changes, against an existing lower limit.
  Scenario s2;
  const auto* st2 = s2.add_strategy(kai_strategy());
  s2.add_policy(static_policy("s", "kai", {{"app", cpu_mem(nullptr, nullptr, "3Gi")}}), st2);
  const AdmissionDecision d2 = s2.run(in);
  EXPECT_EQ(resources(d2), in["spec"]["containers"][0]["resources"]);
  EXPECT_TRUE(d2.constraints.has("requests-exceed-limits"));
}

// ADM-9 / SEL-9: each cpu/memory gate follows the strategy of the policy that provided the value; the
// default cpu limits gate has setFromUnspecified off.
TEST(AdmissionResources, CpuMemoryGatesFollowProvider) {
  Scenario s;
  const auto* kai = s.add_strategy(kai_strategy());
  api::Strategy strict = kai_strategy("strict");
  strict.spec.memory_requests.downsize = false;
  const auto* st = s.add_strategy(strict);
  s.add_policy(policy_of(api::Kind::kGpuReactivePolicy, "r", "kai"), kai);  // governs GPU
  s.workload.annotations["gpureactive.rightsizing.kubex.ai/desired-resource-requests"] =
      R"({"app":{"gpu":"0.5"}})";
  s.add_policy(static_policy("mem", "strict", {{"app", cpu_mem("300m", "1", "1Gi")}}), st);
  const json in =
      app_pod(json{{"requests", {{"cpu", "100m"}, {"memory", "2Gi"}}}}, {{"gpu-fraction", "0.25"}});
  const AdmissionDecision d = s.run(in);
  EXPECT_EQ(resources(d), (json{{"requests", {{"cpu", "300m"}, {"memory", "2Gi"}}}}));
  EXPECT_EQ(annotations(d).at("rightsizing.kubex.ai/automation-constraints"),
            R"([{"reason":"automation-strategy-disabled","targets":[)"
            R"({"container":"app","direction":"setFromUnspecified","resource":"cpu","usage":"limit"},)"
            R"({"container":"app","direction":"downsize","resource":"memory","usage":"request"}]},)"
            R"({"reason":"strategy-conflict","targets":[]}])");
  EXPECT_EQ(d.summary.strategy, "AutomationStrategy/kai");
  EXPECT_EQ(annotations(d).at("gpu-fraction"), "0.5");
}

// ADM-7: cpu/memory clamps use the governing strategy's bounds, container entry first.
TEST(AdmissionResources, CpuMemoryClamps) {
  Scenario s;
  api::Strategy strategy = kai_strategy();
  strategy.spec.cpu_requests.bounds.ceiling = q("1");
  strategy.spec.memory_requests.bounds.floor = q("512Mi");
  strategy.spec.memory_requests.containers["app"].floor = q("1Gi");
  const auto* st = s.add_strategy(strategy);
  s.add_policy(static_policy("s", "kai", {{"*", cpu_mem("4", nullptr, "128Mi")}}), st);
  const json in = pod(json::array({container("app", "img"), container("side", "img")}));
  const AdmissionDecision d = s.run(in);
  EXPECT_EQ(resources(d, 0), (json{{"requests", {{"cpu", "1"}, {"memory", "1Gi"}}}}));
  EXPECT_EQ(resources(d, 1), (json{{"requests", {{"cpu", "1"}, {"memory", "512Mi"}}}}));
  EXPECT_EQ(
      annotations(d).at("rightsizing.kubex.ai/automation-constraints"),
      R"([{"reason":"ceiling-clamped","targets":[{"container":"app","resource":"cpu","usage":"request"},)"
      R"({"container":"side","resource":"cpu","usage":"request"}]},)"
      R"({"reason":"floor-clamped","targets":[{"container":"app","resource":"memory","usage":"request"},)"
      R"({"container":"side","resource":"memory","usage":"request"}]}])");
  // The mirror is the policy's own (unclamped) value, as on the owner.
  EXPECT_EQ(annotations(d).at("static.rightsizing.kubex.ai/desired-resource-requests"),
            R"({"app":{"cpu":"4","memory":"128Mi"},"side":{"cpu":"4","memory":"128Mi"}})");
  EXPECT_FALSE(s.run(*d.pod).patched());
}

// ADM-14: only contributing desired annotations are mirrored; stale mirrors go when a patch is produced.
TEST(AdmissionResources, MirrorsContributingAnnotationsOnly) {
  Scenario s;
  const auto* st = s.add_strategy(kai_strategy());
  s.add_policy(policy_of(api::Kind::kGpuReactivePolicy, "r", "kai"), st);
  s.add_policy(policy_of(api::Kind::kProactivePolicy, "p", "kai"), st);
  s.add_policy(static_policy("s", "kai", {{"*", cpu_mem("100m", nullptr)}}), st);
  s.workload.annotations = {
      {"gpureactive.rightsizing.kubex.ai/desired-resource-requests", R"({"app":{"gpu":"0.42"}})"},
      {"gpureactive.rightsizing.kubex.ai/reactive-state",
       R"({"baseline":{"app":"0.25"},"driver":"compute"})"},
      {"proactive.rightsizing.kubex.ai/desired-resource-requests",
       R"({"app":{"gpu":"0.3"}})"},  // loses to reactive
  };
  const json in =
      app_pod(json::object(),
              {{"gpu-fraction", "0.25"}, {"cwstatic.rightsizing.kubex.ai/desired-resource-requests", "{}"}});
  const AdmissionDecision d = s.run(in);
  json want_annotations = {
      {"gpu-fraction", "0.42"},
      {"gpureactive.rightsizing.kubex.ai/desired-resource-requests", R"({"app":{"gpu":"0.42"}})"},
      {"static.rightsizing.kubex.ai/desired-resource-requests", R"({"app":{"cpu":"100m"}})"},
      {kInfo, annotations(d).at(kInfo)}};
  EXPECT_EQ(annotations(d), want_annotations);  // ADM-14
}

// ADM-16: the late pass keeps the `from` values the early pass wrote.
TEST(AdmissionResources, LatePassKeepsEarlyFrom) {
  Scenario s;
  const auto* st = s.add_strategy(kai_strategy());
  const auto* p = s.add_policy(policy_of(api::Kind::kGpuReactivePolicy, "r", "kai"), st);
  (void)p;
  s.workload.annotations["gpureactive.rightsizing.kubex.ai/desired-resource-requests"] =
      R"({"app":{"gpu":"0.5"}})";
  const json in = app_pod(whole_gpus(2));
  const AdmissionDecision early = s.run(in, Pass::kEarly);
  EXPECT_EQ(early.summary.pass, "early");
  // The recommendation changes between the passes: the late pass applies it but keeps from = "2".
  s.workload.annotations["gpureactive.rightsizing.kubex.ai/desired-resource-requests"] =
      R"({"app":{"gpu":"0.6"}})";
  const AdmissionDecision late = s.run(*early.pod, Pass::kLate);
  EXPECT_EQ(annotations(late).at("gpu-fraction"), "0.6");
  EXPECT_EQ(
      annotations(late).at(kInfo),
      R"({"mode":"kai","strategy":"AutomationStrategy/kai","containers":{"app":{"gpu":{"from":"2","to":"0.6","source":"GpuReactivePolicy/r"}}},)"
      R"("kai":{"scheduler":{"from":"default-scheduler","to":"kai-scheduler"},"queue":{"from":null,"to":"kubex-unlimited-gpu-queue"}}})");
  EXPECT_TRUE(late.summary.edits.empty());  // the early pass made the KAI edits; its record is kept
  ASSERT_EQ(late.summary.changes.size(), 1u);
  EXPECT_EQ(late.summary.changes[0].from, "0.5");  // the summary describes this pass
}

// ACT-1: the same decision evaluates a pod TEMPLATE; `allocation` is what a new pod would receive.
TEST(AdmissionResources, EvaluatesPodTemplate) {
  Scenario s;
  const auto* st = s.add_strategy(kai_strategy());
  s.add_policy(static_policy("s", "kai", {{"*", gpu_request("0.7")}}), st);
  const json tmpl = {{"metadata", {{"labels", {{"app", "train"}}}}},
                     {"spec", {{"containers", json::array({container("app", "img", whole_gpus(2))})}}}};
  AdmissionInput in = s.input(tmpl);
  in.phase = "actuation";
  const AdmissionDecision d = decide_admission(in);
  EXPECT_EQ(d.summary.phase, "actuation");
  EXPECT_EQ(d.allocation, (std::vector<GpuAllocation>{{"app", 70, true}}));
  EXPECT_EQ(d.pod->at("spec").at("schedulerName"), "kai-scheduler");
  // A live pod with the old allocation differs (compared in hundredths, fraction vs whole).
  EXPECT_EQ(gpu_allocation(read_pod_resources(tmpl)), (std::vector<GpuAllocation>{{"app", 200, false}}));
  EXPECT_NE(gpu_allocation(read_pod_resources(tmpl)), d.allocation);
}

// OBS-4: dry-run is only reported; the decision is the same.
TEST(AdmissionResources, DryRunIsReported) {
  Scenario s;
  const auto* st = s.add_strategy(kai_strategy());
  s.add_policy(static_policy("s", "kai", {{"*", gpu_request("0.7")}}), st);
  const json in = app_pod(whole_gpus(1));
  AdmissionInput input = s.input(in);
  input.dry_run = true;
  const AdmissionDecision d = decide_admission(input);
  EXPECT_TRUE(d.summary.dry_run);
  EXPECT_TRUE(d.patched());
  EXPECT_EQ(summary_fields(d.summary)["dryRun"], true);
}
