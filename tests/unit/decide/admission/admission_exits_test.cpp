// ADM-3 exits (no patch), ADM-4 pause, RBK-4 hold, and robustness on bad input.
#include <gtest/gtest.h>

#include <algorithm>

#include "../fixtures.h"
#include "decide/admission/exits.h"
#include "decide/admission/pod_mutation.h"

using namespace kubex;
using namespace kubex::decide;
using namespace kubex::decide::test;

namespace {

constexpr const char* kConstraints = "rightsizing.kubex.ai/automation-constraints";

struct Managed {
  Scenario s;
  const api::Strategy* st = s.add_strategy(kai_strategy());
  Managed() { s.add_policy(static_policy("s", "kai", {{"app", gpu_request("0.7")}}), st); }
};

void expect_skipped(const AdmissionDecision& d, const json& in, const std::string& check) {
  EXPECT_EQ(d.result, AdmissionResult::kSkipped) << check;
  EXPECT_FALSE(d.patched()) << check << ": " << d.patch->dump();
  EXPECT_EQ(*d.pod, in) << check;
  EXPECT_EQ(d.summary.failed_checks, (std::vector<std::string>{check}));
  EXPECT_EQ(d.summary.text, "No rightsizing changes");
}

}  // namespace

// ADM-3 (3) / WHH-2: a probe pod only gets the marker of the pass.
TEST(AdmissionExits, ProbePodGetsOnlyTheMarker) {
  Managed f;
  const json in = app_pod(whole_gpus(2), {{"rightsizing.kubex.ai/webhook-probe", "true"}});
  for (Pass pass : {Pass::kEarly, Pass::kLate}) {
    const AdmissionDecision d = f.s.run(in, pass);
    json want = in;
    want["metadata"]["annotations"][pass == Pass::kEarly ? "automation-webhook.kubex.ai/probe-early"
                                                         : "automation-webhook.kubex.ai/probe-late"] = "ok";
    EXPECT_EQ(*d.pod, want);  // WHH-2
    EXPECT_EQ(d.result, AdmissionResult::kSkipped);
    EXPECT_EQ(d.summary.failed_checks, (std::vector<std::string>{"probe-pod"}));
  }
  // A probe pod that went through the early pass carries both markers after the late pass.
  const AdmissionDecision early = f.s.run(in, Pass::kEarly);
  const AdmissionDecision late = f.s.run(*early.pod, Pass::kLate);
  EXPECT_EQ(late.pod->at("metadata").at("annotations").at("automation-webhook.kubex.ai/probe-early"), "ok");
  EXPECT_EQ(late.pod->at("metadata").at("annotations").at("automation-webhook.kubex.ai/probe-late"), "ok");
}

// ADM-3 (4)-(7), checked in order, each without a patch.
TEST(AdmissionExits, ExitsWithoutPatch) {
  const json in = app_pod(whole_gpus(2));
  {
    Managed f;
    f.s.global.automation_enabled = false;
    expect_skipped(f.s.run(in), in, "automation-disabled");  // ADM-3 (4)
  }
  {
    Managed f;
    f.s.workload.ns = "kube-system";
    expect_skipped(f.s.run(in), in, "protected-namespace");  // ADM-3 (5)
    f.s.global.protected_namespace_patterns = {"ml"};
    f.s.workload.ns = "ml";
    expect_skipped(f.s.run(in), in, "protected-namespace");
  }
  {
    Managed f;
    AdmissionInput input = f.s.input(in);
    input.owner_unknown = true;
    expect_skipped(decide_admission(input), in, "unknown-owner");  // ADM-3 (6), SEL-2
    input.owner_unknown = false;
    input.workload = nullptr;
    expect_skipped(decide_admission(input), in, "no-workload");  // ADM-3 (6), SEL-1 bare pod
  }
  {
    Managed f;
    f.s.workload.kind = "StatefulSet";
    f.s.policies.front().static_spec.common.scope.workload_types = {"Deployment"};
    expect_skipped(f.s.run(in), in, "not-managed");  // ADM-3 (7)
  }
  {
    Managed f;
    f.s.candidates.front().valid = false;
    expect_skipped(f.s.run(in), in, "policies-on-hold");  // RBK-4: nothing applied
  }
  {
    Scenario s;  // no policies at all
    expect_skipped(s.run(in), in, "not-managed");
  }
}

// ADM-3: the order is probe, automationEnabled, protected namespace, owner, managed.
TEST(AdmissionExits, ExitOrder) {
  Managed f;
  f.s.global.automation_enabled = false;
  f.s.workload.ns = "kube-system";
  const json probe = app_pod(json::object(), {{"rightsizing.kubex.ai/webhook-probe", "true"}});
  EXPECT_EQ(f.s.run(probe).summary.failed_checks, (std::vector<std::string>{"probe-pod"}));
  const json in = app_pod();
  EXPECT_EQ(f.s.run(in).summary.failed_checks, (std::vector<std::string>{"automation-disabled"}));
  f.s.global.automation_enabled = true;
  AdmissionInput input = f.s.input(in);
  input.owner_unknown = true;
  EXPECT_EQ(decide_admission(input).summary.failed_checks, (std::vector<std::string>{"protected-namespace"}));
}

// ADM-3 (3)-(5): one function tells, from the pod, its namespace and global-config, which exit applies
// before the owner is read. The webhook reads the owner only without one (needs_owner), and the decision
// skips with exactly that exit's check, on the whole and on the projected pod.
TEST(AdmissionExits, EarlyExitTable) {
  const json plain = app_pod(whole_gpus(2));
  const json probe = app_pod(whole_gpus(2), {{"rightsizing.kubex.ai/webhook-probe", "true"}});
  const json probe_false = app_pod(whole_gpus(2), {{"rightsizing.kubex.ai/webhook-probe", "false"}});
  json probe_bool = app_pod(whole_gpus(2));
  probe_bool["metadata"]["annotations"]["rightsizing.kubex.ai/webhook-probe"] = true;  // not a string
  const std::vector<std::string> defaults = api::GlobalConfigSpec{}.protected_namespace_patterns;
  struct Case {
    const char* name;
    const json* pod;
    bool automation_enabled;
    std::string ns;
    std::vector<std::string> patterns;
    EarlyExit want;
  } cases[] = {
      {"managed pod", &plain, true, "ml", defaults, EarlyExit::kNone},
      {"probe", &probe, true, "ml", defaults, EarlyExit::kProbePod},                         // (3)
      {"probe first", &probe, false, "kube-system", defaults, EarlyExit::kProbePod},         // (3) before (4)
      {"probe annotation false", &probe_false, true, "ml", defaults, EarlyExit::kNone},  // (3) "true" only
      {"probe annotation not a string", &probe_bool, true, "ml", defaults, EarlyExit::kNone},
      {"automation disabled", &plain, false, "ml", defaults, EarlyExit::kAutomationDisabled},  // (4)
      {"disabled before protected", &plain, false, "kube-system", defaults, EarlyExit::kAutomationDisabled},
      {"kube-*", &plain, true, "kube-system", defaults, EarlyExit::kProtectedNamespace},  // (5)
      {"openshift-*", &plain, true, "openshift-monitoring", defaults, EarlyExit::kProtectedNamespace},
      {"gmp-*", &plain, true, "gmp-system", defaults, EarlyExit::kProtectedNamespace},
      {"own pattern", &plain, true, "ml", {"ml"}, EarlyExit::kProtectedNamespace},
      {"pattern is whole-name", &plain, true, "ml-dev", {"ml"}, EarlyExit::kNone},
      {"no patterns", &plain, true, "kube-system", {}, EarlyExit::kNone},
  };
  for (const auto& c : cases) {
    Managed f;
    f.s.global.automation_enabled = c.automation_enabled;
    f.s.global.protected_namespace_patterns = c.patterns;
    f.s.workload.ns = c.ns;
    const EarlyExit got = early_exit(*c.pod, c.ns, f.s.global);
    EXPECT_EQ(got, c.want) << c.name;
    EXPECT_EQ(needs_owner(got), c.want == EarlyExit::kNone) << c.name;
    const AdmissionDecision d = f.s.run(*c.pod);
    if (c.want == EarlyExit::kNone) {
      const auto& checks = d.summary.failed_checks;
      for (EarlyExit e :
           {EarlyExit::kProbePod, EarlyExit::kAutomationDisabled, EarlyExit::kProtectedNamespace}) {
        EXPECT_EQ(std::count(checks.begin(), checks.end(), exit_check(e)), 0) << c.name;
      }
      AdmissionInput input = f.s.input(*c.pod);
      input.owner_unknown = true;  // past the exits, the owner is what decides next: ADM-3 (6)
      EXPECT_EQ(decide_admission(input).summary.failed_checks, (std::vector<std::string>{"unknown-owner"}))
          << c.name;
    } else {
      EXPECT_EQ(d.summary.failed_checks, (std::vector<std::string>{exit_check(c.want)})) << c.name;
      EXPECT_EQ(d.result, AdmissionResult::kSkipped) << c.name;
    }
  }
  EXPECT_STREQ(exit_check(EarlyExit::kProbePod), "probe-pod");
  EXPECT_STREQ(exit_check(EarlyExit::kAutomationDisabled), "automation-disabled");
  EXPECT_STREQ(exit_check(EarlyExit::kProtectedNamespace), "protected-namespace");
  EXPECT_STREQ(exit_check(EarlyExit::kNone), "");
  // Any JSON: a non-object has no probe annotation and never throws.
  const api::GlobalConfigSpec global;
  for (const json& odd : {json(nullptr), json("pod"), json::array(), json{{"metadata", "x"}},
                          json{{"metadata", {{"annotations", json::array()}}}}}) {
    EXPECT_EQ(early_exit(odd, "ml", global), EarlyExit::kNone) << odd.dump();
    EXPECT_EQ(early_exit(odd, "kube-system", global), EarlyExit::kProtectedNamespace) << odd.dump();
  }
}

// ADM-4: pause-until on the pod, owner, owner template or namespace, in the future or `infinite`
// (unparseable counts as paused): the patch only adds `pause-active` with `targets: []`.
TEST(AdmissionPause, PauseOnEverySource) {
  const json plain = app_pod(whole_gpus(2));
  // kNow is 2027-01-15T08:00:00Z.
  struct Case {
    const char* where;
    const char* value;
    bool paused;
  } cases[] = {
      {"pod", "infinite", true},
      {"owner", "2030-01-01T00:00:00Z", true},
      {"template", "not-a-time", true},
      {"namespace", "infinite", true},
      {"pod", "2020-01-01T00:00:00Z", false},
      {"namespace", "2027-01-15T07:59:59Z", false},
      {"owner", "2027-01-15T08:00:01Z", true},
  };
  for (const auto& c : cases) {
    Managed f;
    json in = plain;
    const std::string where = c.where;
    if (where == "pod") in["metadata"]["annotations"]["rightsizing.kubex.ai/pause-until"] = c.value;
    if (where == "owner") f.s.workload.annotations["rightsizing.kubex.ai/pause-until"] = c.value;
    if (where == "template") f.s.workload.template_annotations["rightsizing.kubex.ai/pause-until"] = c.value;
    if (where == "namespace") f.s.namespace_annotations["rightsizing.kubex.ai/pause-until"] = c.value;
    const AdmissionDecision d = f.s.run(in);
    if (c.paused) {
      json want = in;
      want["metadata"]["annotations"][kConstraints] = R"([{"reason":"pause-active","targets":[]}])";
      EXPECT_EQ(*d.pod, want) << c.where << " " << c.value;  // ADM-4
      EXPECT_EQ(d.result, AdmissionResult::kSkipped);
      EXPECT_EQ(d.summary.failed_checks, (std::vector<std::string>{"pause-active"}));
      EXPECT_FALSE(f.s.run(*d.pod).patched());  // ADM-2
    } else {
      EXPECT_EQ(d.result, AdmissionResult::kMutated) << c.where << " " << c.value;
    }
  }
}

// ADM-4: only when the governing strategy has enablePauseUntilAnnotationCheck.
TEST(AdmissionPause, CheckCanBeDisabled) {
  Managed f;
  f.s.strategies.front().spec.safety.enable_pause_until_annotation_check = false;
  const json in = app_pod(whole_gpus(2), {{"rightsizing.kubex.ai/pause-until", "infinite"}});
  const AdmissionDecision d = f.s.run(in);
  EXPECT_EQ(d.result, AdmissionResult::kMutated);
  EXPECT_EQ(d.pod->at("metadata").at("annotations").at("gpu-fraction"), "0.7");
}

// ADM-2 / ENG-2: malformed objects never throw and never get a patch.
TEST(AdmissionExits, MalformedPodsFailOpen) {
  Managed f;
  const json cases[] = {
      json(nullptr),
      json("pod"),
      json::array(),
      json{{"metadata", "x"}, {"spec", json::object()}},
      json{{"metadata", json::object()}},
      json{{"spec", {{"containers", "x"}}}},
      json{{"spec", {{"containers", json::array({1, 2})}}}},
      json{{"spec", {{"containers", json::array({{{"name", "app"}, {"resources", {{"requests", 5}}}}})}}}},
      json{{"spec", {{"containers", json::array({{{"name", "app"}, {"args", json::array({1})}}})}}}},
      json{{"metadata", {{"annotations", json::array()}}}, {"spec", json::object()}},
  };
  for (const json& in : cases) {
    const AdmissionDecision d = f.s.run(in);
    EXPECT_FALSE(d.patched()) << in.dump();
    EXPECT_EQ(d.result, AdmissionResult::kSkipped) << in.dump();
  }
  AdmissionInput input = f.s.input(json());
  input.pod = nullptr;
  EXPECT_FALSE(decide_admission(input).patched());
  // Garbage inside well-formed shapes is read as absent, not thrown.
  json odd = app_pod(json{{"requests", {{"nvidia.com/gpu", "lots"}, {"cpu", true}}}});
  odd["metadata"]["annotations"] = {{"gpu-fraction", 7}};
  const AdmissionDecision d = f.s.run(odd);
  EXPECT_TRUE(d.constraints.has("unsupported-gpu-request"));
  EXPECT_TRUE(d.summary.failed_checks.empty());  // decided, not failed open
  // A non-string image or a damaged pod-rightsizing-info still gets a full decision.
  Scenario v;
  api::Strategy strategy = kai_strategy();
  strategy.spec.has_vllm = true;
  const auto* st = v.add_strategy(strategy);
  v.add_policy(static_policy("s", "kai", {{"app", gpu_request("0.5")}}), st);
  json weird =
      app_pod(whole_gpus(1), {{"automation-webhook.kubex.ai/pod-rightsizing-info", R"({"containers":[1]})"}});
  weird["spec"]["containers"][0]["image"] = 42;
  const AdmissionDecision w = v.run(weird);
  EXPECT_TRUE(w.summary.failed_checks.empty());
  EXPECT_EQ(w.pod->at("metadata").at("annotations").at("gpu-fraction"), "0.5");
}
