// `kubex explain`'s report (SPEC CLI-1): every reason the engine can record or check has its own sentence, and
// the document and the table carry what the Explanation holds. What fills an Explanation from a live cluster is
// covered end to end (tests/e2e/test_explain.py).
#include "engine/explain_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "api/validate.h"
#include "decide/actuation/actuation.h"
#include "decide/admission/constraints.h"
#include "decide/admission/exits.h"

namespace kubex::engine {
namespace {

using nlohmann::json;

const std::string kFallback = reason_sentence("no-such-reason-anywhere");

TEST(ExplainReport, EveryConstraintCheckAndExitHasItsOwnSentence) {
  namespace r = decide::reason;
  namespace c = decide::actuation::check;
  for (const char* name :
       {r::kPauseActive, r::kStrategyDisabled, r::kFloorClamped, r::kCeilingClamped, r::kRequestsExceedLimits,
        r::kNoGpuRecommendation, r::kMultipleGpuContainers, r::kUnsupportedGpuRequest, r::kStrategyConflict,
        r::kQueueOverriddenByOwner, r::kVllmArgsNotRewritable, r::kPodEvictionDisabled, r::kPdbBlocked,
        r::kKaiFractionRequiresRestart, r::kReplacementNotMutated, r::kWebhookUnhealthy,
        c::kAutomationDisabled, c::kProtectedNamespace, c::kPauseActive, c::kPodEvictionDisabled,
        c::kWebhookUnhealthy, c::kMinReadyDurationNotMet, c::kPodTerminating, c::kOwnerPodsNotReady,
        c::kJobPodNotEvicted, c::kMaxUnavailableExceeded, c::kPdbBlocked, c::kReplacementNotMutated,
        c::kEvictionFailed}) {
    EXPECT_NE(reason_sentence(name), kFallback) << name;
  }
  // ADM-3 exits (3)-(7) and the RBK-4 hold, as decide_admission names them.
  for (auto e : {decide::EarlyExit::kProbePod, decide::EarlyExit::kAutomationDisabled,
                 decide::EarlyExit::kProtectedNamespace}) {
    EXPECT_NE(reason_sentence(decide::exit_check(e)), kFallback) << decide::exit_check(e);
  }
  for (const char* name : {"unknown-owner", "no-workload", "not-managed", "policies-on-hold", "malformed-pod"}) {
    EXPECT_NE(reason_sentence(name), kFallback) << name;
  }
  EXPECT_EQ(explain_reason("ceiling-clamped").name, "ceiling-clamped");
}

Explanation managed() {
  Explanation e;
  e.kind = "Pod";
  e.ns = "ml";
  e.name = "chat-1";
  e.owner_chain = {"Pod/chat-1", "ReplicaSet/chat-5d", "Deployment/chat"};
  e.workload = "Deployment/chat";
  e.policies = {{"StaticPolicy/s", true, "", "AutomationStrategy/kai", {"app requests.gpu"}, ""},
                {"StaticPolicy/broken", false, "its strategy does not exist", "", {}, ""}};
  e.strategy = "AutomationStrategy/kai";
  e.mode = "kai";
  e.admission_result = "MUTATED";
  e.resources = {{"app", "requests.gpu", "1", "1.4", "StaticPolicy/s", "", "0.9",
                  {explain_reason("ceiling-clamped")}}};
  ExplainActuation a;
  a.desired = "app=0.9 (fraction)";
  a.result = "BLOCKED";
  a.webhook_healthy = true;
  a.pods = {{"chat-1", false, "app=1 (whole)", "app=0.9 (fraction)", false,
             {explain_reason("pod-eviction-disabled")}, std::nullopt, ""}};
  e.actuation = a;
  return e;
}

TEST(ExplainReport, DocumentCarriesEverySection) {
  json doc = explanation_json(managed());
  EXPECT_EQ(doc["apiVersion"], "cli.kubex.ai/v1alpha1");
  EXPECT_EQ(doc["kind"], "Explanation");
  EXPECT_EQ(doc["target"], json({{"kind", "Pod"}, {"namespace", "ml"}, {"name", "chat-1"}}));
  EXPECT_TRUE(doc["managed"]);
  EXPECT_FALSE(doc.contains("notManaged"));
  EXPECT_EQ(doc["policies"][1]["invalidReason"], "its strategy does not exist");
  const json& gpu = doc["resources"][0];
  EXPECT_EQ(gpu["desired"], "1.4");
  EXPECT_EQ(gpu["applied"], "0.9");
  EXPECT_EQ(gpu["constraints"][0]["reason"], "ceiling-clamped");
  EXPECT_EQ(doc["actuation"]["pods"][0]["blockedBy"][0]["reason"], "pod-eviction-disabled");
  EXPECT_FALSE(doc.contains("reactive"));  // no reactive policy: no section
  EXPECT_FALSE(doc.contains("rollback"));
}

TEST(ExplainReport, UnmanagedIsOneLine) {
  Explanation e;
  e.kind = "Pod";
  e.ns = "ml";
  e.name = "bare";
  e.owner_chain = {"Pod/bare"};
  e.not_managed = explain_reason("no-workload");
  json doc = explanation_json(e);
  EXPECT_FALSE(doc["managed"]);
  EXPECT_EQ(doc["notManaged"]["reason"], "no-workload");
  EXPECT_FALSE(doc.contains("policies"));
  std::ostringstream out;
  print_explanation(e, out);
  EXPECT_EQ(out.str(), "Pod ml/bare is not managed by kubex (no-workload): " + reason_sentence("no-workload") + "\n");
  // With an owner chain, still one line.
  e.owner_chain = {"Pod/x", "ReplicaSet/x-5d", "Deployment/x"};
  e.not_managed = explain_reason("not-managed");
  std::ostringstream chained;
  print_explanation(e, chained);
  EXPECT_EQ(chained.str(), "Pod ml/bare is not managed by kubex (not-managed): " + reason_sentence("not-managed") +
                               " Owner chain: Pod/x -> ReplicaSet/x-5d -> Deployment/x.\n");
}

// ADM-3 (7), CLI-1 (issue 34 item 8): `not-managed` names the closest policy and the SEL-3 checks it fails, still in
// one line; the document carries the same as data.
TEST(ExplainReport, NotManagedNamesTheNearMiss) {
  ExplainNearMiss m;
  m.policy = "ClusterProactivePolicy/kai-gpu-sharing-baseline";
  m.misses = {{"labelSelector",
               "its labelSelector needs nvidia.com/gpu.present=true; the Deployment has no label nvidia.com/gpu.present"}};
  m.labels = {"nvidia.com/gpu.present"};
  m.more = 1;
  EXPECT_EQ(near_miss_text(m),
            "The closest policy is ClusterProactivePolicy/kai-gpu-sharing-baseline: its labelSelector needs "
            "nvidia.com/gpu.present=true; the Deployment has no label nvidia.com/gpu.present (and 1 more policy that "
            "misses by as little).");
  Explanation e;
  e.kind = "Deployment";
  e.ns = "ml";
  e.name = "chat";
  e.owner_chain = {"Deployment/chat"};
  e.not_managed = explain_reason("not-managed");
  e.not_managed->sentence += " " + near_miss_text(m);
  e.near_miss = m;
  std::ostringstream out;
  print_explanation(e, out);
  EXPECT_EQ(out.str(), "Deployment ml/chat is not managed by kubex (not-managed): no policy matches its workload. " +
                           near_miss_text(m) + "\n");
  const json doc = explanation_json(e);
  EXPECT_EQ(doc["notManaged"]["nearMiss"],
            json({{"policy", m.policy},
                  {"misses", {{{"check", "labelSelector"}, {"message", m.misses[0].sentence}}}},
                  {"labels", {"nvidia.com/gpu.present"}},
                  {"invalidReason", ""},
                  {"more", 1}}));
  // Two misses and an invalid policy, no others.
  m.misses.push_back({"workloadTypes", "its workloadTypes [Deployment] do not include StatefulSet"});
  m.invalid_reason = "its strategy does not exist";
  m.more = 0;
  EXPECT_EQ(near_miss_text(m),
            "The closest policy is ClusterProactivePolicy/kai-gpu-sharing-baseline: its labelSelector needs "
            "nvidia.com/gpu.present=true; the Deployment has no label nvidia.com/gpu.present; and its workloadTypes "
            "[Deployment] do not include StatefulSet; it is also invalid (its strategy does not exist).");
  m.more = 3;
  EXPECT_NE(near_miss_text(m).find("(and 3 more policies that miss by as little)"), std::string::npos);
}

TEST(ExplainReport, TableHasTheValuesAndTheirReasons) {
  std::ostringstream out;
  print_explanation(managed(), out);
  const std::string text = out.str();
  EXPECT_NE(text.find("Pod/chat-1 -> ReplicaSet/chat-5d -> Deployment/chat"), std::string::npos) << text;
  EXPECT_NE(text.find("no (its strategy does not exist)"), std::string::npos) << text;
  EXPECT_NE(text.find("ceiling-clamped: " + reason_sentence("ceiling-clamped")), std::string::npos) << text;
  EXPECT_NE(text.find("pod-eviction-disabled: " + reason_sentence("pod-eviction-disabled")), std::string::npos)
      << text;
}

// CLI-1, ADM-4, ACT-2: a paused pod says which pause-until pauses it and on which object (issue 26: explain only
// said "on the pod, its owner, the owner's pod template or the namespace").
TEST(ExplainReport, APauseNamesItsAnnotationAndObject) {
  Explanation e = managed();
  e.admission_result = "SKIPPED";
  e.pause = ExplainPause{"namespace", "Namespace/ml", "infinite", "no end", true};
  const std::string text = "paused by rightsizing.kubex.ai/pause-until=\"infinite\" on Namespace/ml (no end)";
  EXPECT_EQ(pause_text(*e.pause), text);
  e.actuation->pods[0].blocked_by = {explain_reason("pause-active")};
  e.actuation->pods[0].pause = ExplainPause{"pod", "Pod/chat-1", "2030-01-01T00:00:00Z", "until 2030-01-01T00:00:00Z",
                                            true};
  json doc = explanation_json(e);
  EXPECT_EQ(doc["pause"], json({{"source", "namespace"},
                                {"object", "Namespace/ml"},
                                {"annotation", "rightsizing.kubex.ai/pause-until"},
                                {"value", "infinite"},
                                {"meaning", "no end"},
                                {"checked", true},
                                {"message", text}}));
  EXPECT_EQ(doc["actuation"]["pods"][0]["pause"]["object"], "Pod/chat-1");
  std::ostringstream out;
  print_explanation(e, out);
  EXPECT_NE(out.str().find("  pause:        " + text + "\n"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("    chat-1: paused by rightsizing.kubex.ai/pause-until=\"2030-01-01T00:00:00Z\" on "
                           "Pod/chat-1 (until 2030-01-01T00:00:00Z)\n"),
            std::string::npos)
      << out.str();
  // Not paused: no pause line, no "pause" member.
  EXPECT_FALSE(explanation_json(managed()).contains("pause"));
  // A strategy that does not check pause-until: the annotation is named with why it has no effect.
  EXPECT_EQ(pause_text({"owner template", "Deployment/chat (pod template)", "soon", "not an RFC 3339 time", false}),
            "paused by rightsizing.kubex.ai/pause-until=\"soon\" on Deployment/chat (pod template) (not an RFC 3339 "
            "time), which has no effect: the strategy sets safetyChecks.enablePauseUntilAnnotationCheck: false");
}

// CLI-1, ADM-4 (issue 34 item 8): the pause sentence appeared three times (the pause line, "Here: …" after
// pause-active, and again under the pod in Actuation). Said once; a pod paused by another object still says so.
TEST(ExplainReport, ThePauseIsSaidOnce) {
  Explanation e = managed();
  e.admission_result = "SKIPPED";
  e.admission_stops = {explain_reason("pause-active")};
  e.pause = ExplainPause{"namespace", "Namespace/ml", "infinite", "no end", true};
  e.actuation->pods[0].blocked_by = {explain_reason("pause-active")};
  e.actuation->pods[0].pause = e.pause;
  std::ostringstream out;
  print_explanation(e, out);
  const std::string text = out.str();
  auto count = [&](const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(pause_text(*e.pause)), 1u) << text;
  EXPECT_EQ(count(reason_sentence("pause-active")), 1u) << text;
  // The running pod paused by its own annotation: that one is named too.
  e.actuation->pods[0].pause = ExplainPause{"pod", "Pod/chat-1", "infinite", "no end", true};
  std::ostringstream own;
  print_explanation(e, own);
  EXPECT_NE(own.str().find("    chat-1: " + pause_text(*e.actuation->pods[0].pause) + "\n"), std::string::npos)
      << own.str();
}

// PRO-2 (issue 34 item 8): in a pod's first minutes the proactive row showed an SM P95 and MEMORY MAX beside
// "no SM samples" and span -/-. A value without its span is shown as no value, like the reason says.
TEST(ExplainReport, NoP95BesideNoSamples) {
  Explanation e = managed();
  ExplainProactive p;
  p.policy = "ClusterProactivePolicy/baseline";
  p.queried = true;
  p.containers = {{"app", "1 (whole GPUs)", 12.5, 30.0, "", "", "", "", "", "", "no GPU history: no SM samples"}};
  e.proactive = p;
  std::ostringstream out;
  print_explanation(e, out);
  EXPECT_EQ(out.str().find("12.5%"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("no value for app: no GPU history: no SM samples"), std::string::npos) << out.str();
  const json doc = explanation_json(e);
  EXPECT_TRUE(doc["proactive"]["containers"][0]["smP95"].is_null());
  // With its span, the value shows.
  e.proactive->containers[0].compute_span = "40m";
  e.proactive->containers[0].memory_span = "40m";
  std::ostringstream spanned;
  print_explanation(e, spanned);
  EXPECT_NE(spanned.str().find("12.5%"), std::string::npos) << spanned.str();
}

// ACT-3b / ACT-10 (issue 34 item 8): a crash-looping pod's min-ready-duration-not-met says what kubex does: a pod
// kubex resized down is replaced once ACT-10 finds the harm; any other crash-looping pod is not evicted.
TEST(ExplainReport, ACrashLoopingPodSaysWhatKubexDoes) {
  const json looping = json::parse(R"({"status": {"conditions": [{"type": "Ready", "status": "False"}],
      "containerStatuses": [{"name": "app", "restartCount": 4,
                             "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}})");
  EXPECT_EQ(crash_loop_evidence(looping), "container app: CrashLoopBackOff, 4 restarts");
  // Ready between restarts (no readiness probe): still crash-looping while it waits in back-off.
  json between = looping;
  between["status"]["conditions"][0]["status"] = "True";
  EXPECT_EQ(crash_loop_evidence(between), "container app: CrashLoopBackOff, 4 restarts");
  const json fresh = json::parse(R"({"status": {"conditions": [{"type": "Ready", "status": "True"}],
      "containerStatuses": [{"name": "app", "restartCount": 0, "state": {"running": {}}}]}})");
  EXPECT_EQ(crash_loop_evidence(fresh), "");
  // Not resized down by kubex: ACT-10 does not apply, kubex does not evict it.
  const ExplainReason r = crash_looping_reason(crash_loop_evidence(looping), false);
  EXPECT_EQ(r.name, "min-ready-duration-not-met");
  EXPECT_EQ(r.sentence, "crash-looping: kubex did not resize it down, so it will not evict it (container app: "
                        "CrashLoopBackOff, 4 restarts); fix the workload or its size, or delete the pod.");
  // Resized down by kubex: replaced once the harm is found (ACT-10 (3)).
  const ExplainReason ours = crash_looping_reason(crash_loop_evidence(looping), true);
  EXPECT_EQ(ours.name, "min-ready-duration-not-met");
  EXPECT_EQ(ours.sentence.rfind("crash-looping after kubex resized it down (container app: CrashLoopBackOff", 0), 0u)
      << ours.sentence;
  EXPECT_NE(ours.sentence.find("kubex raises the container to a harm-guard floor and replaces the pod"),
            std::string::npos)
      << ours.sentence;
  Explanation e = managed();
  e.actuation->pods[0].blocked_by = {r};
  std::ostringstream out;
  print_explanation(e, out);
  EXPECT_NE(out.str().find("min-ready-duration-not-met: crash-looping: kubex did not resize it down"),
            std::string::npos)
      << out.str();
}

// ACT-10: the owner's harm-guard floor (container, floor, until, from a harmful resize), the harmed pod, and the
// reasons admission and actuation record for it, in the table and the document.
TEST(ExplainReport, HarmGuardFloorAndHarmedPods) {
  EXPECT_NE(reason_sentence("harm-guard"), kFallback);
  EXPECT_NE(reason_sentence(decide::actuation::check::kResizeHarmedWorkload), kFallback);
  EXPECT_NE(reason_sentence(decide::reason::kHarmGuard), kFallback);
  Explanation e = managed();
  e.harm_guard = {{"app", "1", "2030-01-02T03:04:05Z"}};
  e.resources[0].constraints = {explain_reason("harm-guard")};
  e.actuation->pods[0].harm = "container app, resized from 1 to 0.3 GPU, had an out-of-memory exit within 10 minutes "
                              "of starting";
  const std::string floor = "app gets at least 1 GPU until 2030-01-02T03:04:05Z: a resize down harmed the workload, "
                            "so kubex keeps the allocation it had before (ACT-10)";
  EXPECT_EQ(harm_floor_text(e.harm_guard[0]), floor);
  std::ostringstream out;
  print_explanation(e, out);
  EXPECT_NE(out.str().find("  harm guard:   " + floor + "\n"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("harm-guard: " + reason_sentence("harm-guard")), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("    chat-1: harmed by kubex's resize (container app, resized from 1 to 0.3 GPU"),
            std::string::npos)
      << out.str();
  const json doc = explanation_json(e);
  EXPECT_EQ(doc["harmGuard"], json::array({{{"container", "app"},
                                            {"floor", "1"},
                                            {"until", "2030-01-02T03:04:05Z"},
                                            {"source", "harm-guard"},
                                            {"message", floor}}}));
  EXPECT_EQ(doc["actuation"]["pods"][0]["harm"], e.actuation->pods[0].harm);
  EXPECT_FALSE(explanation_json(managed()).contains("harmGuard"));
  EXPECT_FALSE(explanation_json(managed())["actuation"]["pods"][0].contains("harm"));
}

// ACT-3b: actuation waiting for a replacement that is not stable yet names it and when it will be.
TEST(ExplainReport, AnUnstableReplacementSaysUntilWhen) {
  Explanation e = managed();
  e.actuation->last_eviction = "2030-01-01T00:00:00Z";
  e.actuation->min_ready_duration = "10s";
  e.actuation->settling = {{"chat-2", true, "2030-01-01T00:00:20Z", "2030-01-01T00:00:25Z", "2030-01-01T00:00:35Z"},
                           {"chat-3", false, "", "2030-01-01T00:00:30Z", ""}};
  std::ostringstream out;
  print_explanation(e, out);
  EXPECT_NE(out.str().find("  waiting for:      replacement chat-2 Ready since 2030-01-01T00:00:20Z, restarted at "
                           "2030-01-01T00:00:25Z: stable at 2030-01-01T00:00:35Z (minReadyDuration 10s); the next "
                           "eviction waits for it (ACT-3b)\n"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("  waiting for:      replacement chat-3 is not Ready (restarted at 2030-01-01T00:00:30Z): it "
                           "counts as in flight until it has been Ready for minReadyDuration 10s with no restart"),
            std::string::npos)
      << out.str();
  const json doc = explanation_json(e);
  EXPECT_EQ(doc["actuation"]["lastEviction"], "2030-01-01T00:00:00Z");
  EXPECT_EQ(doc["actuation"]["settling"][0]["stableAt"], "2030-01-01T00:00:35Z");
  EXPECT_EQ(doc["actuation"]["settling"][1]["ready"], false);
}

// KAI-2a: with spec.kai.fractionLimit.enabled: false under NvFractions, the pod says its fraction is a hard cap.
TEST(ExplainReport, FractionLimitOffWarns) {
  Explanation e = managed();
  e.kai_mode = "NvFractions";
  e.kai_limit = "none written: the strategy's spec.kai.fractionLimit.enabled is false";
  e.kai_warning = api::kFractionLimitOffWarning;
  std::ostringstream out;
  print_explanation(e, out);
  EXPECT_NE(out.str().find("  warning:      spec.kai.fractionLimit.enabled: false: under NvFractions every fraction "
                           "kubex writes is a hard memory cap\n"),
            std::string::npos)
      << out.str();
  EXPECT_EQ(explanation_json(e)["kaiWarning"], api::kFractionLimitOffWarning);
  EXPECT_FALSE(explanation_json(managed()).contains("kaiWarning"));
}

}  // namespace
}  // namespace kubex::engine
