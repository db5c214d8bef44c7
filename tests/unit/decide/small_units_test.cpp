// The small pieces: ADM-4 pause values, ADM-7/9 gates, ADM-14 constraints JSON, ADM-16 info merge,
// OBS-4 summary text, SPEC §2 desired annotations.
#include <gtest/gtest.h>

#include "decide/admission/constraints.h"
#include "decide/admission/pause.h"
#include "decide/admission/rightsizing_info.h"
#include "decide/admission/summary.h"
#include "decide/desired_annotations.h"
#include "decide/gates.h"
#include "fixtures.h"

using namespace kubex;
using namespace kubex::decide;
using namespace kubex::decide::test;

// ADM-4: `infinite`, a future time, or anything unparseable pauses; a past time does not.
TEST(Pause, Values) {
  EXPECT_TRUE(pause_value_active("infinite", kNow));
  EXPECT_TRUE(pause_value_active("2027-01-15T08:00:01Z", kNow));
  EXPECT_TRUE(pause_value_active("2027-01-15T09:00:00+01:00:00", kNow));  // unparseable -> paused
  EXPECT_TRUE(pause_value_active("tomorrow", kNow));
  EXPECT_TRUE(pause_value_active("", kNow));
  EXPECT_FALSE(pause_value_active("2027-01-15T08:00:00Z", kNow));  // not in the future
  EXPECT_FALSE(pause_value_active("2027-01-15T10:00:00+03:00", kNow));
  EXPECT_TRUE(pause_value_active("2027-01-15T10:00:01+02:00", kNow));
  EXPECT_FALSE(pause_value_active("2020-01-01T00:00:00Z", kNow));
  const AnnotationMap paused = {{"rightsizing.kubex.ai/pause-until", "infinite"}},
                      past = {{"rightsizing.kubex.ai/pause-until", "2020-01-01T00:00:00Z"}};
  EXPECT_EQ(paused_by({&past, nullptr, nullptr, &paused}, kNow), "namespace");
  EXPECT_EQ(paused_by({&paused, &paused, nullptr, nullptr}, kNow), "pod");
  EXPECT_EQ(paused_by({&past, &past, &past, &past}, kNow), std::nullopt);
}

// ADM-9: the direction table; ADM-7: container entries override the usage-level bound per bound.
TEST(Gates, DirectionsAndBounds) {
  EXPECT_EQ(direction_of(std::optional<Hundredths>{}, 50), Direction::kSetFromUnspecified);
  EXPECT_EQ(direction_of(std::optional<Hundredths>{25}, 50), Direction::kUpsize);
  EXPECT_EQ(direction_of(std::optional<Hundredths>{200}, 70), Direction::kDownsize);
  EXPECT_EQ(direction_of(std::optional<Hundredths>{70}, 70), Direction::kNone);
  EXPECT_EQ(direction_of(std::optional<common::Quantity>{q("0.2")}, q("200m")), Direction::kNone);
  EXPECT_EQ(direction_of(std::optional<common::Quantity>{}, q("1")), Direction::kSetFromUnspecified);
  api::Gates g{false, true, false, {}, {}};
  EXPECT_FALSE(gate_allows(g, Direction::kUpsize));
  EXPECT_TRUE(gate_allows(g, Direction::kDownsize));
  EXPECT_FALSE(gate_allows(g, Direction::kSetFromUnspecified));
  EXPECT_TRUE(gate_allows(g, Direction::kNone));
  g.bounds = {q("0.1"), q("0.8")};
  g.containers["app"].ceiling = q("0.5");
  const api::Bounds b = effective_bounds(g, "app");
  EXPECT_EQ(*b.floor, q("0.1"));    // floor from the usage level
  EXPECT_EQ(*b.ceiling, q("0.5"));  // ceiling from the container entry
  Hundredths v = 70;
  EXPECT_EQ(clamp_gpu(v, g, "app"), Clamp::kCeiling);
  EXPECT_EQ(v, 50);
  v = 70;
  EXPECT_EQ(clamp_gpu(v, g, "other"), Clamp::kNone);
  g.bounds.floor = q("0.9");  // floor > ceiling: the ceiling wins
  v = 10;
  EXPECT_EQ(clamp_gpu(v, g, "app"), Clamp::kCeiling);
  EXPECT_EQ(v, 50);
}

// ADM-14: one entry per reason, sorted by reason, targets sorted by container; duplicates collapse.
TEST(Constraints, Json) {
  Constraints c;
  EXPECT_EQ(c.to_json(), "[]");
  c.add("floor-clamped", {"side", "gpu", "request", ""});
  c.add("automation-strategy-disabled", {"b", "cpu", "limit", "setFromUnspecified"});
  c.add("automation-strategy-disabled", {"a", "gpu", "request", "upsize"});
  c.add("automation-strategy-disabled", {"a", "gpu", "request", "upsize"});
  c.add_pod("strategy-conflict");
  c.add_pod("strategy-conflict");
  EXPECT_EQ(
      c.to_json(),
      R"([{"reason":"automation-strategy-disabled","targets":[)"
      R"({"container":"a","direction":"upsize","resource":"gpu","usage":"request"},)"
      R"({"container":"b","direction":"setFromUnspecified","resource":"cpu","usage":"limit"}]},)"
      R"({"reason":"floor-clamped","targets":[{"container":"side","resource":"gpu","usage":"request"}]},)"
      R"({"reason":"strategy-conflict","targets":[]}])");
  EXPECT_EQ(c.reasons(),
            (std::vector<std::string>{"automation-strategy-disabled", "floor-clamped", "strategy-conflict"}));
  EXPECT_EQ(c.entries().size(), 3u);
  EXPECT_EQ(c.entries()[0].targets.size(), 2u);
}

// OBS-4: the summary text.
TEST(Summary, Text) {
  EXPECT_EQ(summary_text({}), "No rightsizing changes");
  const std::vector<Change> changes = {
      {"app", Resource::kGpu, Usage::kRequest, "0.25", "0.7", "0.7", "StaticPolicy/s"},
      {"app", Resource::kCpu, Usage::kRequest, "100m", "200m", "200m", "StaticPolicy/s"},
      {"app", Resource::kCpu, Usage::kLimit, "unspecified", "600m", "600m", "StaticPolicy/s"},
  };
  EXPECT_EQ(summary_text(changes),
            "Applied rightsizing requests [app:[cpu=200m gpu=0.7]] limits [app:[cpu=600m]]");
  const std::vector<Change> limits_only = {{"a", Resource::kMemory, Usage::kLimit, "1Gi", "2Gi", "2Gi", "s"},
                                           {"b", Resource::kCpu, Usage::kLimit, "1", "2", "2", "s"}};
  EXPECT_EQ(summary_text(limits_only),
            "Applied rightsizing requests [none] limits [a:[memory=2Gi] b:[cpu=2]]");
  EXPECT_STREQ(result_name(AdmissionResult::kUnchanged), "UNCHANGED");
}

// OBS-4: KAI and vLLM edits follow the resources: `; kai [...]` lists only what was edited, scheduler first;
// with no resource change the text still starts with "No rightsizing changes".
TEST(Summary, TextWithKaiAndVllmEdits) {
  const Edit scheduler{EditTarget::kScheduler, "", "default-scheduler", "kai-scheduler"};
  const Edit queue{EditTarget::kQueue, "", std::nullopt, "kubex-unlimited-gpu-queue"};
  const Edit vllm{EditTarget::kVllmGpuMemoryUtilization, "server", "0.95", "0.45"};
  EXPECT_EQ(summary_text({}, {vllm}), "No rightsizing changes; vllm [server:0.45]");
  const std::vector<Change> gpu = {
      {"server", Resource::kGpu, Usage::kRequest, "1", "0.5", "0.5", "StaticPolicy/s"}};
  EXPECT_EQ(summary_text(gpu, {scheduler, queue, vllm}),
            "Applied rightsizing requests [server:[gpu=0.5]] limits [none]; "
            "kai [scheduler=kai-scheduler queue=kubex-unlimited-gpu-queue]; vllm [server:0.45]");
  EXPECT_EQ(summary_text(gpu, {scheduler}),
            "Applied rightsizing requests [server:[gpu=0.5]] limits [none]; kai [scheduler=kai-scheduler]");
  EXPECT_EQ(summary_text({}, {queue}), "No rightsizing changes; kai [queue=kubex-unlimited-gpu-queue]");
  EXPECT_STREQ(edit_resource_name(EditTarget::kVllmGpuMemoryUtilization), "vllm-gpu-memory-utilization");
  EXPECT_STREQ(edit_usage_name(EditTarget::kVllmGpuMemoryUtilization), "arg");
  EXPECT_STREQ(edit_usage_name(EditTarget::kQueue), "pod");
}

// ADM-16: entries merge; an entry changed again keeps its first `from`.
TEST(RightsizingInfo, MergesAndKeepsFrom) {
  const std::vector<Change> early = {
      {"app", Resource::kGpu, Usage::kRequest, "2", "0.7", "0.7", "StaticPolicy/s"}};
  const std::string first = rightsizing_info_json("kai", "AutomationStrategy/kai", early, {}, "");
  EXPECT_EQ(
      first,
      R"({"mode":"kai","strategy":"AutomationStrategy/kai","containers":{"app":{"gpu":{"from":"2","to":"0.7","source":"StaticPolicy/s"}}}})");
  const std::vector<Change> late = {
      {"app", Resource::kGpu, Usage::kRequest, "0.7", "0.6", "0.6", "GpuReactivePolicy/r"},
      {"app", Resource::kMemory, Usage::kLimit, "unspecified", "1Gi", "1Gi", "StaticPolicy/s"}};
  EXPECT_EQ(rightsizing_info_json("kai", "AutomationStrategy/kai", late, {}, first),
            R"({"mode":"kai","strategy":"AutomationStrategy/kai","containers":{"app":{)"
            R"("gpu":{"from":"2","to":"0.6","source":"GpuReactivePolicy/r"},)"
            R"("limits.memory":{"from":"unspecified","to":"1Gi","source":"StaticPolicy/s"}}}})");
  // Damaged entries never throw: a non-string `from` reads as unspecified.
  EXPECT_EQ(
      rightsizing_info_json("kai", "AutomationStrategy/kai", early, {},
                            R"({"containers":{"app":{"gpu":{"from":7}},"x":5}})"),
      R"({"mode":"kai","strategy":"AutomationStrategy/kai","containers":{"app":{"gpu":{"from":"unspecified","to":"0.7","source":"StaticPolicy/s"}}}})");
  // A broken existing value is replaced.
  EXPECT_EQ(rightsizing_info_json("kai", "AutomationStrategy/kai", early, {}, "{oops"), first);
}

// ADM-16: KAI and vLLM edits are recorded (`from` null when there was none); `kai` holds only the keys that
// changed; an edit recorded by the early pass keeps its `from` when the late pass edits it again.
TEST(RightsizingInfo, KaiAndVllmEdits) {
  const std::vector<Edit> early = {{EditTarget::kScheduler, "", "default-scheduler", "kai-scheduler"},
                                   {EditTarget::kQueue, "", std::nullopt, "kubex-unlimited-gpu-queue"},
                                   {EditTarget::kVllmGpuMemoryUtilization, "server", std::nullopt, "0.45"}};
  const std::string first = rightsizing_info_json("kai", "AutomationStrategy/kai", {}, early, "");
  EXPECT_EQ(first,
            R"({"mode":"kai","strategy":"AutomationStrategy/kai",)"
            R"("containers":{"server":{"vllmGpuMemoryUtilization":{"from":null,"to":"0.45"}}},)"
            R"("kai":{"scheduler":{"from":"default-scheduler","to":"kai-scheduler"},)"
            R"("queue":{"from":null,"to":"kubex-unlimited-gpu-queue"}}})");
  const std::vector<Change> gpu = {
      {"server", Resource::kGpu, Usage::kRequest, "0.5", "0.3", "0.3", "StaticPolicy/s"}};
  const std::vector<Edit> late = {{EditTarget::kQueue, "", "kubex-unlimited-gpu-queue", "team"},
                                  {EditTarget::kVllmGpuMemoryUtilization, "server", "0.45", "0.27"}};
  EXPECT_EQ(rightsizing_info_json("kai", "AutomationStrategy/kai", gpu, late, first),
            R"({"mode":"kai","strategy":"AutomationStrategy/kai","containers":{"server":{)"
            R"("gpu":{"from":"0.5","to":"0.3","source":"StaticPolicy/s"},)"
            R"("vllmGpuMemoryUtilization":{"from":null,"to":"0.27"}}},)"
            R"("kai":{"scheduler":{"from":"default-scheduler","to":"kai-scheduler"},)"
            R"("queue":{"from":null,"to":"team"}}})");
  // Only the scheduler changed: no queue key.
  EXPECT_EQ(rightsizing_info_json("kai", "AutomationStrategy/kai", {},
                                  {{EditTarget::kScheduler, "", std::nullopt, "kai-scheduler"}}, ""),
            R"({"mode":"kai","strategy":"AutomationStrategy/kai","containers":{},)"
            R"("kai":{"scheduler":{"from":null,"to":"kai-scheduler"}}})");
}

// SPEC §2: desired annotation keys and values.
TEST(DesiredAnnotations, KeysAndValues) {
  EXPECT_EQ(desired_requests_key(api::Kind::kClusterGpuReactivePolicy),
            "cwgpureactive.rightsizing.kubex.ai/desired-resource-requests");
  EXPECT_EQ(desired_limits_key(api::Kind::kStaticPolicy),
            "static.rightsizing.kubex.ai/desired-resource-limits");
  EXPECT_EQ(reactive_state_key(api::Kind::kGpuReactivePolicy),
            "gpureactive.rightsizing.kubex.ai/reactive-state");
  EXPECT_TRUE(is_desired_key("proactive.rightsizing.kubex.ai/desired-resource-requests"));
  EXPECT_FALSE(is_desired_key("rightsizing.kubex.ai/rollback-state"));
  EXPECT_FALSE(is_desired_key(".rightsizing.kubex.ai/desired-resource-requests"));
  auto parsed = parse_desired_gpu(
      R"({"app":{"gpu":"0.48","cpu":"1"},"b":{"gpu":0.25},"c":{"cpu":"1"},"d":"x","e":{"gpu":"-1"}})");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(*parsed, (std::map<std::string, Hundredths>{{"app", 48}, {"b", 25}}));
  EXPECT_FALSE(parse_desired_gpu("[1]"));  // VAL-7: not an object -> ignored
  EXPECT_FALSE(parse_desired_gpu("{"));
  EXPECT_EQ(format_desired({{"b", {{"memory", "1Gi"}, {"cpu", "1"}}}, {"a", {{"gpu", "0.5"}}}}),
            R"({"a":{"gpu":"0.5"},"b":{"cpu":"1","memory":"1Gi"}})");
}
