// KAI v0.18 at admission (SPEC §5a): KAI-1 sharing modes, KAI-2 burst limits, ADM-5's limit rule, VLM-3 by
// mode, KAI-3 (the limit is never part of the allocation).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../fixtures.h"
#include "common/time_format.h"
#include "decide/admission/fraction_limit.h"
#include "decide/admission/pod_mutation.h"

using namespace kubex;
using namespace kubex::decide;
using namespace kubex::decide::test;

namespace {

constexpr const char* kRequests = "gpureactive.rightsizing.kubex.ai/desired-resource-requests";
constexpr const char* kLimits = "gpureactive.rightsizing.kubex.ai/desired-resource-limits";

// A KAI strategy with the burst limit on, a reactive policy, and the cluster in `mode`.
struct Kai {
  Scenario s;
  api::Strategy* st;
  Kai(const char* mode, const std::string& requests, const std::string& limits = "") {
    api::Strategy strategy = kai_strategy();
    strategy.spec.has_kai = true;
    strategy.spec.fraction_limit_enabled = true;
    st = const_cast<api::Strategy*>(s.add_strategy(strategy));
    s.add_policy(policy_of(api::Kind::kGpuReactivePolicy, "r", "kai"), st);
    s.global.kai_gpu_sharing_mode = mode;
    if (!requests.empty()) s.workload.annotations[kRequests] = requests;
    if (!limits.empty()) s.workload.annotations[kLimits] = limits;
  }
};

json annotations(const AdmissionDecision& d) {
  return d.pod->at("metadata").value("annotations", json::object());
}

json app_whole_pod(json extra_annotations = json::object()) {
  return app_pod(whole_gpus(1), std::move(extra_annotations));
}

}  // namespace

// KAI-2's example: f 0.3, peak 0.42, h 50, C 1 -> gpu-fraction "0.3", gpu-fraction.limit "0.63"; recorded as
// gpu-limit in the summary and pod-rightsizing-info; ADM-2 holds.
TEST(AdmissionKai, BurstLimitFromThePeak) {
  Kai k("NvFractions", R"({"app":{"gpu":"0.3"}})", R"({"app":{"gpu":"0.42"}})");
  const json in = app_whole_pod();
  const AdmissionDecision d = k.s.run(in);
  EXPECT_EQ(annotations(d).at("gpu-fraction"), "0.3");
  EXPECT_EQ(annotations(d).at("gpu-fraction.limit"), "0.63");
  EXPECT_EQ(d.summary.text, "Applied rightsizing requests [app:[gpu=0.3]] limits [app:[gpu-limit=0.63]]; kai "
                            "[scheduler=kai-scheduler queue=kubex-unlimited-gpu-queue]");
  const json info = json::parse(annotations(d).at("automation-webhook.kubex.ai/pod-rightsizing-info").get<std::string>());
  EXPECT_EQ(info.at("containers").at("app").at("gpu-limit"),
            (json{{"from", "unspecified"}, {"to", "0.63"}, {"source", "GpuReactivePolicy/r"}}));
  const json fields = summary_fields(d.summary);
  EXPECT_EQ(fields.at("kaiMode"), "NvFractions");
  bool limit_change = false;
  for (const auto& c : fields.at("changes")) limit_change |= c.at("resource") == "gpu-limit" && c.at("to") == "0.63";
  EXPECT_TRUE(limit_change) << fields.dump();
  // The owner's limits annotation is mirrored like the requests one (ADM-14).
  EXPECT_EQ(annotations(d).at(kLimits), R"({"app":{"gpu":"0.42"}})");
  EXPECT_FALSE(k.s.run(*d.pod).patched());                      // ADM-2
  EXPECT_EQ(*k.s.run(*k.s.run(in, Pass::kEarly).pod).pod, *d.pod);  // early + late = one pass
}

// KAI-2 formula rows (hundredths): f + 0.01 is the least; C caps; no limit when C <= f. KAI-2a: with no peak, the
// original allocation (capped at 1 and C) when f lies below it, else none.
TEST(AdmissionKai, BurstLimitFormula) {
  EXPECT_EQ(burst_limit(30, 42, 50, 100), 63);
  EXPECT_EQ(burst_limit(30, 30, 0, 100), 31);             // max(f + 0.01, …)
  EXPECT_EQ(burst_limit(30, std::nullopt, 50, 100, 100), 100);  // KAI-2a: the original
  EXPECT_EQ(burst_limit(30, std::nullopt, 50, 100, 200), 100);  // … capped at 1
  EXPECT_EQ(burst_limit(30, std::nullopt, 50, 60, 100), 60);    // … and at C
  EXPECT_EQ(burst_limit(30, std::nullopt, 50, 100, 50), 50);    // a fraction original
  EXPECT_EQ(burst_limit(50, std::nullopt, 50, 100, 50), std::nullopt);  // not below the original: none
  EXPECT_EQ(burst_limit(30, std::nullopt, 50, 100), std::nullopt);      // no original known: none
  EXPECT_EQ(burst_limit(60, 90, 50, 100), 100);           // capped at C = 1
  EXPECT_EQ(burst_limit(30, 42, 50, 50), 50);             // capped at C = 0.5
  EXPECT_EQ(burst_limit(50, 90, 50, 50), std::nullopt);   // C <= f: none
  EXPECT_EQ(burst_limit(33, 33, 10, 100), 37);            // roundUp(0.363) = 0.37
}

// A StaticPolicy's limits.gpu is the peak too (SEL-6).
TEST(AdmissionKai, StaticLimitIsThePeak) {
  Scenario s;
  api::Strategy strategy = kai_strategy();
  strategy.spec.fraction_limit_enabled = true;
  strategy.spec.fraction_limit_headroom_percent = 0;
  const api::Strategy* st = s.add_strategy(strategy);
  api::StaticResources r = gpu_request("0.3");
  r.gpu_limit = q("0.7");
  s.add_policy(static_policy("s", "kai", {{"app", r}}), st);
  s.global.kai_gpu_sharing_mode = "NvFractions";
  const AdmissionDecision d = s.run(app_whole_pod());
  EXPECT_EQ(annotations(d).at("gpu-fraction"), "0.3");
  EXPECT_EQ(annotations(d).at("gpu-fraction.limit"), "0.7");
  EXPECT_EQ(annotations(d).at("static.rightsizing.kubex.ai/desired-resource-limits"), R"({"app":{"gpu":"0.7"}})");
}

// KAI-2: only NvFractions with fractionLimit.enabled writes a limit; other modes leave a user's limit alone.
TEST(AdmissionKai, NoLimitOutsideNvFractionsOrWhenDisabled) {
  for (const char* mode : {"NonMemoryEnforced", "HamiCore"}) {
    Kai k(mode, R"({"app":{"gpu":"0.3"}})", R"({"app":{"gpu":"0.42"}})");
    const AdmissionDecision d = k.s.run(app_whole_pod());
    EXPECT_EQ(annotations(d).at("gpu-fraction"), "0.3") << mode;
    EXPECT_FALSE(annotations(d).contains("gpu-fraction.limit")) << mode;
    EXPECT_EQ(summary_fields(d.summary).at("kaiMode"), mode);
    // A user's limit that still holds is kept.
    const AdmissionDecision kept = k.s.run(app_pod({}, {{"gpu-fraction", "0.5"}, {"gpu-fraction.limit", "0.8"}}));
    EXPECT_EQ(annotations(kept).at("gpu-fraction"), "0.3");
    EXPECT_EQ(annotations(kept).at("gpu-fraction.limit"), "0.8") << mode;
  }
  Kai off("NvFractions", R"({"app":{"gpu":"0.3"}})", R"({"app":{"gpu":"0.42"}})");
  off.st->spec.fraction_limit_enabled = false;
  EXPECT_FALSE(annotations(off.s.run(app_whole_pod())).contains("gpu-fraction.limit"));
}

// KAI-2: a user's limit the new fraction breaks (<= it) is removed with fraction-limit-removed; one that still
// holds is kept when no limit is computed; a computed limit replaces it.
TEST(AdmissionKai, UserLimitKeptOrRemoved) {
  Kai k("NvFractions", R"({"app":{"gpu":"0.6"}})");
  k.st->spec.fraction_limit_enabled = false;
  const AdmissionDecision broken = k.s.run(app_pod({}, {{"gpu-fraction", "0.3"}, {"gpu-fraction.limit", "0.5"}}));
  EXPECT_EQ(annotations(broken).at("gpu-fraction"), "0.6");
  EXPECT_FALSE(annotations(broken).contains("gpu-fraction.limit"));
  EXPECT_TRUE(broken.constraints.has("fraction-limit-removed"));
  EXPECT_FALSE(k.s.run(*broken.pod).patched());  // ADM-2
  const AdmissionDecision kept = k.s.run(app_pod({}, {{"gpu-fraction", "0.3"}, {"gpu-fraction.limit", "0.9"}}));
  EXPECT_EQ(annotations(kept).at("gpu-fraction.limit"), "0.9");
  EXPECT_FALSE(kept.constraints.has("fraction-limit-removed"));

  k.st->spec.fraction_limit_enabled = true;  // no peak and 0.6 is above the original 0.3: nothing computed, kept
  const AdmissionDecision uncomputed = k.s.run(app_pod({}, {{"gpu-fraction", "0.3"}, {"gpu-fraction.limit", "0.95"}}));
  EXPECT_EQ(annotations(uncomputed).at("gpu-fraction.limit"), "0.95");
  Kai peak("NvFractions", R"({"app":{"gpu":"0.6"}})", R"({"app":{"gpu":"0.6"}})");
  // computed: max(0.61, roundUp(0.6 x 1.5)) = 0.9, capped at 1
  const AdmissionDecision computed = peak.s.run(app_pod({}, {{"gpu-fraction", "0.3"}, {"gpu-fraction.limit", "0.95"}}));
  EXPECT_EQ(annotations(computed).at("gpu-fraction.limit"), "0.9");
  // C <= f: no limit above the fraction, so the user's goes too.
  peak.st->spec.fraction_limit_ceiling = q("0.5");
  const AdmissionDecision none = peak.s.run(app_pod({}, {{"gpu-fraction", "0.3"}, {"gpu-fraction.limit", "0.95"}}));
  EXPECT_FALSE(annotations(none).contains("gpu-fraction.limit"));
}

// A pod that gets whole GPUs loses its limit with its gpu-fraction (a limit needs a fraction).
TEST(AdmissionKai, WholeGpusDropTheLimit) {
  Kai k("NvFractions", R"({"app":{"gpu":"1.4"}})");
  const AdmissionDecision d = k.s.run(app_pod({}, {{"gpu-fraction", "0.5"}, {"gpu-fraction.limit", "0.9"}}));
  EXPECT_FALSE(annotations(d).contains("gpu-fraction"));
  EXPECT_FALSE(annotations(d).contains("gpu-fraction.limit"));
  EXPECT_EQ(d.pod->at("spec").at("containers").at(0).at("resources"), whole_gpus(1));  // ceiling 1
}

// ADM-5: KAI's own rule for gpu-fraction.limit: a value in (fraction, 1], and only with gpu-fraction.
TEST(AdmissionKai, InvalidLimitIsUnsupported) {
  Kai k("NvFractions", R"({"app":{"gpu":"0.3"}})");
  for (const json& a : {json{{"gpu-fraction.limit", "0.5"}},
                        json{{"gpu-fraction", "0.5"}, {"gpu-fraction.limit", "0.5"}},
                        json{{"gpu-fraction", "0.5"}, {"gpu-fraction.limit", "1.2"}},
                        json{{"gpu-fraction", "0.5"}, {"gpu-fraction.limit", "lots"}}}) {
    const json in = a.contains("gpu-fraction") ? app_pod({}, a) : app_whole_pod(a);
    const AdmissionDecision d = k.s.run(in);
    EXPECT_TRUE(d.constraints.has("unsupported-gpu-request")) << a.dump();
    EXPECT_EQ(annotations(d).value("gpu-fraction", ""), a.value("gpu-fraction", "")) << a.dump();
  }
  // 1 is a valid limit.
  const AdmissionDecision one = k.s.run(app_pod({}, {{"gpu-fraction", "0.5"}, {"gpu-fraction.limit", "1"}}));
  EXPECT_FALSE(one.constraints.has("unsupported-gpu-request"));
}

// KAI-1: Disabled gives whole GPUs for values below 1 with kai-gpu-sharing-disabled; the KAI extras still
// apply; no vLLM edit (VLM-3).
TEST(AdmissionKai, DisabledModeGivesWholeGpus) {
  Kai k("Disabled", R"({"app":{"gpu":"0.3"}})");
  k.st->spec.has_vllm = true;
  k.st->spec.vllm_buffer_percent = 10;
  json c = container("app", "vllm/vllm-openai:v0.6.3", whole_gpus(1));
  c["args"] = json::array({"--gpu-memory-utilization=0.5"});
  const AdmissionDecision d = k.s.run(pod(json::array({c})));
  EXPECT_FALSE(annotations(d).contains("gpu-fraction"));
  EXPECT_EQ(d.pod->at("spec").at("containers").at(0).at("resources"), whole_gpus(1));
  EXPECT_TRUE(d.constraints.has("kai-gpu-sharing-disabled"));
  EXPECT_EQ(d.pod->at("spec").at("schedulerName"), "kai-scheduler");
  EXPECT_EQ(d.pod->at("spec").at("containers").at(0).at("args"), c.at("args"));
  EXPECT_EQ(summary_fields(d.summary).at("kaiMode"), "Disabled");
  // A 2-GPU pod recommended 0.3 gets 1 whole GPU (a downsize).
  const AdmissionDecision two = k.s.run(app_pod(whole_gpus(2)));
  EXPECT_EQ(two.pod->at("spec").at("containers").at(0).at("resources"), whole_gpus(1));
}

// KAI-1: an absent gpuSharingMode is derived from memoryIsolation.
TEST(AdmissionKai, ModeDerivedFromMemoryIsolation) {
  api::GlobalConfigSpec g;
  EXPECT_EQ(api::gpu_sharing_mode(g), "NonMemoryEnforced");
  g.kai_memory_isolation = "HAMiCore";
  EXPECT_EQ(api::gpu_sharing_mode(g), "HamiCore");
  g.kai_gpu_sharing_mode = "NvFractions";
  EXPECT_EQ(api::gpu_sharing_mode(g), "NvFractions");  // gpuSharingMode wins
}

// VLM-3: under NvFractions vLLM is tuned from the request, never from the burst limit.
TEST(AdmissionKai, VllmUsesTheRequestUnderNvFractions) {
  Kai k("NvFractions", R"({"app":{"gpu":"0.3"}})", R"({"app":{"gpu":"0.42"}})");
  k.st->spec.has_vllm = true;
  k.st->spec.vllm_buffer_percent = 10;
  json c = container("app", "vllm/vllm-openai:v0.6.3", whole_gpus(1));
  c["args"] = json::array({"--gpu-memory-utilization=0.9"});
  const AdmissionDecision d = k.s.run(pod(json::array({c})));
  EXPECT_EQ(annotations(d).at("gpu-fraction.limit"), "0.63");
  EXPECT_EQ(d.pod->at("spec").at("containers").at(0).at("args"), json::array({"--gpu-memory-utilization=0.27"}));
}

// KAI-3: the allocation (what ACT-1 compares) is the request; a pod that differs only in its limit is in sync.
TEST(AdmissionKai, LimitIsNotPartOfTheAllocation) {
  const json a = app_pod({}, {{"gpu-fraction", "0.3"}, {"gpu-fraction.limit", "0.63"}});
  const json b = app_pod({}, {{"gpu-fraction", "0.3"}});
  EXPECT_EQ(gpu_allocation(read_pod_resources(a)), gpu_allocation(read_pod_resources(b)));
  Kai k("NvFractions", R"({"app":{"gpu":"0.3"}})", R"({"app":{"gpu":"0.42"}})");
  EXPECT_EQ(k.s.run(b).allocation, gpu_allocation(read_pod_resources(b)));
}

// KAI-2a: under NvFractions a whole-GPU pod kubex gives a fraction with no peak known keeps its original GPU as the
// limit, so the fraction is a request, not a hard memory cap; the limit is on by default (a strategy that does not
// mention fractionLimit); early + late passes agree (the late pass reads the original from pod-rightsizing-info).
TEST(AdmissionKai, NvFractionsFractionWithoutAPeakGetsTheOriginalAsLimit) {
  Scenario s;
  api::Strategy strategy = kai_strategy();  // no spec.kai.fractionLimit at all
  const api::Strategy* st = s.add_strategy(strategy);
  s.add_policy(static_policy("s", "kai", {{"app", gpu_request("0.3")}}), st);
  s.global.kai_gpu_sharing_mode = "NvFractions";
  const json in = app_whole_pod();
  const AdmissionDecision d = s.run(in);
  EXPECT_EQ(annotations(d).at("gpu-fraction"), "0.3");
  EXPECT_EQ(annotations(d).at("gpu-fraction.limit"), "1");
  EXPECT_FALSE(s.run(*d.pod).patched());                          // ADM-2
  EXPECT_EQ(*s.run(*s.run(in, Pass::kEarly).pod).pod, *d.pod);  // early + late = one pass
  // Other modes: no limit (KAI-5: nothing changes for v0.17 clusters).
  s.global.kai_gpu_sharing_mode = "HamiCore";
  EXPECT_FALSE(annotations(s.run(in)).contains("gpu-fraction.limit"));
}

// KAI-2a without a peak: a pod's own limit that lets it burst further than its original allocation stays (0.8 from
// the user's template with gpu-fraction 0.5, resized to 0.3), instead of being lowered to the original.
TEST(AdmissionKai, NvFractionsKeepsAUsersMoreGenerousLimitWithoutAPeak) {
  Scenario s;
  const api::Strategy* st = s.add_strategy(kai_strategy());
  s.add_policy(static_policy("s", "kai", {{"app", gpu_request("0.3")}}), st);
  s.global.kai_gpu_sharing_mode = "NvFractions";
  const AdmissionDecision kept = s.run(app_pod({}, {{"gpu-fraction", "0.5"}, {"gpu-fraction.limit", "0.8"}}));
  EXPECT_EQ(annotations(kept).at("gpu-fraction"), "0.3");
  EXPECT_EQ(annotations(kept).at("gpu-fraction.limit"), "0.8");
  EXPECT_FALSE(s.run(*kept.pod).patched());  // ADM-2
}

// KAI-2a: fractionLimit.enabled: false written out keeps the old request-only behaviour (a hard cap, warned about).
TEST(AdmissionKai, ExplicitlyDisabledLimitWritesNone) {
  Scenario s;
  api::Strategy strategy = kai_strategy();
  strategy.spec.fraction_limit_enabled = false;
  const api::Strategy* st = s.add_strategy(strategy);
  s.add_policy(static_policy("s", "kai", {{"app", gpu_request("0.3")}}), st);
  s.global.kai_gpu_sharing_mode = "NvFractions";
  const AdmissionDecision d = s.run(app_whole_pod());
  EXPECT_EQ(annotations(d).at("gpu-fraction"), "0.3");
  EXPECT_FALSE(annotations(d).contains("gpu-fraction.limit"));
}

// ACT-10: a harm-guard floor in the owner's actuation-state raises the desired GPU to it (source harm-guard) until it
// expires.
TEST(AdmissionKai, HarmGuardFloorRaisesTheDesiredGpu) {
  Scenario s;
  api::Strategy strategy = kai_strategy();
  const api::Strategy* st = s.add_strategy(strategy);
  s.add_policy(static_policy("s", "kai", {{"app", gpu_request("0.3")}}), st);
  const std::string until = common::format_rfc3339(kNow + std::chrono::hours(23));
  s.workload.annotations["rightsizing.kubex.ai/actuation-state"] =
      R"({"harmGuard":{"app":{"floor":"1","until":")" + until + R"("}}})";
  const AdmissionDecision d = s.run(app_whole_pod());
  EXPECT_FALSE(annotations(d).contains("gpu-fraction"));
  EXPECT_TRUE(d.constraints.has("harm-guard"));
  s.workload.annotations["rightsizing.kubex.ai/actuation-state"] =
      R"({"harmGuard":{"app":{"floor":"0.5","until":")" + until + R"("}}})";
  EXPECT_EQ(annotations(s.run(app_whole_pod())).at("gpu-fraction"), "0.5");
  const std::string past = common::format_rfc3339(kNow - std::chrono::seconds(1));  // expired
  s.workload.annotations["rightsizing.kubex.ai/actuation-state"] =
      R"({"harmGuard":{"app":{"floor":"1","until":")" + past + R"("}}})";
  EXPECT_EQ(annotations(s.run(app_whole_pod())).at("gpu-fraction"), "0.3");
}
