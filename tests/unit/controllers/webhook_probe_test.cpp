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
  EXPECT_TRUE(missing_probe_markers(pod, false).late);
}

json admitted(const json& annotations) {
  return {{"metadata", {{"annotations", annotations}}}};
}

TEST(ProbeMarkers, EveryEnabledPassMustMark) {  // WHH-2
  json both = {{"automation-webhook.kubex.ai/probe-early", "ok"},
               {"automation-webhook.kubex.ai/probe-late", "ok"}};
  json late = {{"automation-webhook.kubex.ai/probe-late", "ok"}};
  json early = {{"automation-webhook.kubex.ai/probe-early", "ok"}};
  auto missing = [](const json& pod, bool early_enabled) {
    auto m = missing_probe_markers(pod, early_enabled);
    return std::string(m.early ? "early" : "") + (m.late ? "late" : "");
  };
  EXPECT_EQ(missing(admitted(both), true), "");
  EXPECT_EQ(missing(admitted(both), false), "");
  EXPECT_EQ(missing(admitted(late), false), "");  // early disabled: late alone is enough
  EXPECT_EQ(missing(admitted(late), true), "early");
  EXPECT_EQ(missing(admitted(early), true), "late");
  EXPECT_EQ(missing(admitted(json::object()), true), "earlylate");

  // Only the value "ok" counts; odd shapes are failures, never crashes.
  EXPECT_EQ(missing(admitted({{"automation-webhook.kubex.ai/probe-late", "OK"}}), false), "late");
  EXPECT_EQ(missing(admitted({{"automation-webhook.kubex.ai/probe-late", true}}), false), "late");
  EXPECT_EQ(missing(json::object(), false), "late");
  EXPECT_EQ(missing(json("text"), false), "late");
  EXPECT_EQ(missing(json({{"metadata", {{"annotations", "x"}}}}), false), "late");
}

}  // namespace
}  // namespace kubex::controllers
