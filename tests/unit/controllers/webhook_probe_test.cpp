// WHH-1 / WHH-2: the probe pod built from global-config's spec.webhookProbe (as the real parser reads it),
// and the marker check of the object the dry-run CREATE returns.
#include "controllers/webhook_probe.h"

#include <gtest/gtest.h>

#include "api/parse.h"
#include "global_config_fakes.h"

namespace kubex::controllers {
namespace {

using nlohmann::json;

api::GlobalConfigSpec spec_of(const json& spec) {
  json obj = {{"apiVersion", "rightsizing.kubex.ai/v1alpha1"},
              {"kind", "GlobalConfiguration"},
              {"metadata", {{"name", "global-config"}}},
              {"spec", spec}};
  auto parsed = api::parse_global_config(obj);
  EXPECT_TRUE(parsed.valid()) << parsed.report.message();
  return parsed.value.spec;
}

TEST(ProbePod, BuiltFromWebhookProbe) {  // WHH-1
  json resources = {{"requests", {{"cpu", "10m"}, {"memory", "16Mi"}}}, {"limits", {{"memory", "32Mi"}}}};
  json psc = {{"runAsNonRoot", true}, {"seccompProfile", {{"type", "RuntimeDefault"}}}};
  json sc = {{"allowPrivilegeEscalation", false}, {"capabilities", {{"drop", {"ALL"}}}}};
  auto spec = spec_of({{"webhookProbe",
                        {{"image", "registry.example/kubex:1.2.3"},
                         {"labels", {{"team", "platform"}, {"app", "probe"}}},
                         {"annotations", {{"note", "hello"}}},
                         {"resources", resources},
                         {"podSecurityContext", psc},
                         {"securityContext", sc}}}});
  json pod = build_probe_pod(spec, "kubex", "x7k2p");
  EXPECT_EQ(pod["apiVersion"], "v1");
  EXPECT_EQ(pod["kind"], "Pod");
  EXPECT_EQ(pod["metadata"]["name"], "kubex-webhook-probe-x7k2p");
  EXPECT_EQ(pod["metadata"]["namespace"], "kubex");
  EXPECT_EQ(pod["metadata"]["labels"], json({{"team", "platform"}, {"app", "probe"}}));
  EXPECT_EQ(pod["metadata"]["annotations"],
            json({{"note", "hello"}, {"rightsizing.kubex.ai/webhook-probe", "true"}}));
  ASSERT_EQ(pod["spec"]["containers"].size(), 1u);
  const json& c = pod["spec"]["containers"][0];
  EXPECT_EQ(c["image"], "registry.example/kubex:1.2.3");
  EXPECT_EQ(c["resources"], resources);
  EXPECT_EQ(c["securityContext"], sc);
  EXPECT_EQ(pod["spec"]["securityContext"], psc);
  EXPECT_EQ(pod["spec"]["restartPolicy"], "Never");
}

TEST(ProbePod, DefaultsWhenWebhookProbeIsUnset) {  // WHH-1: image = the engine image
  auto spec = spec_of(json::object());
  json pod = build_probe_pod(spec, "ops", "abcde");
  EXPECT_EQ(pod["metadata"]["name"], "kubex-webhook-probe-abcde");
  EXPECT_EQ(pod["spec"]["containers"][0]["image"], "kubex-automation-engine");
  EXPECT_FALSE(pod["metadata"].contains("labels"));
  EXPECT_EQ(pod["metadata"]["annotations"], json({{"rightsizing.kubex.ai/webhook-probe", "true"}}));
  EXPECT_FALSE(pod["spec"]["containers"][0].contains("resources"));
  EXPECT_FALSE(pod["spec"].contains("securityContext"));
  EXPECT_EQ(build_probe_pod(spec, "ops", "abcde", "my/engine:2")["spec"]["containers"][0]["image"],
            "my/engine:2");
}

TEST(ProbePod, TemplateCannotForgeTheMarkersOrDropTheProbeKey) {  // WHH-1, WHH-2
  auto spec = spec_of({{"webhookProbe",
                        {{"annotations",
                          {{"automation-webhook.kubex.ai/probe-late", "ok"},
                           {"automation-webhook.kubex.ai/probe-early", "ok"},
                           {"rightsizing.kubex.ai/webhook-probe", "false"}}}}}});
  json pod = build_probe_pod(spec, "kubex", "zzzzz");
  EXPECT_EQ(pod["metadata"]["annotations"], json({{"rightsizing.kubex.ai/webhook-probe", "true"}}));
  // A pod the webhook never saw fails the check, whatever the template said.
  EXPECT_FALSE(check_probe_markers(pod, false).empty());
}

json admitted(const json& annotations) {
  return {{"metadata", {{"annotations", annotations}}}};
}

TEST(ProbeMarkers, EveryEnabledPassMustMark) {  // WHH-2
  json both = {{"automation-webhook.kubex.ai/probe-early", "ok"},
               {"automation-webhook.kubex.ai/probe-late", "ok"}};
  json late = {{"automation-webhook.kubex.ai/probe-late", "ok"}};
  json early = {{"automation-webhook.kubex.ai/probe-early", "ok"}};
  EXPECT_EQ(check_probe_markers(admitted(both), true), "");
  EXPECT_EQ(check_probe_markers(admitted(both), false), "");
  EXPECT_EQ(check_probe_markers(admitted(late), false), "");  // early disabled: late alone is enough

  std::string e = check_probe_markers(admitted(late), true);
  EXPECT_NE(e.find("automation-webhook.kubex.ai/probe-early"), std::string::npos) << e;
  EXPECT_EQ(e.find("probe-late"), std::string::npos) << e;
  e = check_probe_markers(admitted(early), true);
  EXPECT_NE(e.find("automation-webhook.kubex.ai/probe-late"), std::string::npos) << e;
  e = check_probe_markers(admitted(json::object()), true);
  EXPECT_NE(e.find("probe-early, automation-webhook.kubex.ai/probe-late"), std::string::npos) << e;

  // Only the value "ok" counts; odd shapes are failures, never crashes.
  EXPECT_NE(check_probe_markers(admitted({{"automation-webhook.kubex.ai/probe-late", "OK"}}), false), "");
  EXPECT_NE(check_probe_markers(admitted({{"automation-webhook.kubex.ai/probe-late", true}}), false), "");
  EXPECT_NE(check_probe_markers(json::object(), false), "");
  EXPECT_NE(check_probe_markers(json("text"), false), "");
  EXPECT_NE(check_probe_markers(json({{"metadata", {{"annotations", "x"}}}}), false), "");
}

}  // namespace
}  // namespace kubex::controllers
