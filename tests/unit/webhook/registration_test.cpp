// The engine's webhook configuration objects (ADM-1, HLM-2, ENG-3 --register-webhooks).
#include "webhook/registration.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "api/keys.h"
#include "api/kinds.h"
#include "common/base64.h"

namespace kubex::webhook {
namespace {

using nlohmann::json;

RegistrationOptions options(bool with_ca = true) {
  RegistrationOptions o;
  o.base_url = "https://127.0.0.1:9443";
  if (with_ca) o.ca_bundle_pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  return o;
}

TEST(WebhookBaseUrl, WildcardHostsBecomeLoopback) {  // ENG-3: url points at --webhook-bind-address
  EXPECT_EQ(webhook_base_url("0.0.0.0", 9443), "https://127.0.0.1:9443");
  EXPECT_EQ(webhook_base_url("", 9443), "https://127.0.0.1:9443");
  EXPECT_EQ(webhook_base_url("127.0.0.1", 41234), "https://127.0.0.1:41234");
  EXPECT_EQ(webhook_base_url("::", 9443), "https://[::1]:9443");
  EXPECT_EQ(webhook_base_url("::1", 9443), "https://[::1]:9443");
  EXPECT_EQ(webhook_base_url("engine.local", 1), "https://engine.local:1");
}

// HLM-2: one webhook per kind, CREATE+UPDATE (VAL-4: no DELETE, a strategy DELETE is allowed), failurePolicy Ignore,
// sideEffects None, admissionReviewVersions [v1], timeoutSeconds 10.
TEST(ValidatingConfiguration, OneWebhookPerKind) {
  json cfg = build_validating_configuration(options());
  EXPECT_EQ(cfg["apiVersion"], "admissionregistration.k8s.io/v1");
  EXPECT_EQ(cfg["kind"], "ValidatingWebhookConfiguration");
  EXPECT_EQ(cfg["metadata"]["name"], "kubex-validating-webhook-configuration");
  EXPECT_EQ(cfg["metadata"]["labels"]["app.kubernetes.io/managed-by"], "kubex-automation-engine");
  ASSERT_EQ(cfg["webhooks"].size(), api::all_kinds().size());
  std::set<std::string> names;
  for (std::size_t i = 0; i < api::all_kinds().size(); ++i) {
    const auto& k = api::all_kinds()[i];
    const json& w = cfg["webhooks"][i];
    names.insert(w["name"].get<std::string>());
    EXPECT_EQ(w["name"], api::validating_webhook_name(k.kind));
    EXPECT_EQ(w["clientConfig"]["url"], "https://127.0.0.1:9443" + api::validating_webhook_path(k.kind));
    EXPECT_EQ(*common::base64_decode(w["clientConfig"]["caBundle"].get<std::string>()),
              *options().ca_bundle_pem);
    ASSERT_EQ(w["rules"].size(), 1u);
    const json& rule = w["rules"][0];
    EXPECT_EQ(rule["apiGroups"], json({"rightsizing.kubex.ai"}));
    EXPECT_EQ(rule["apiVersions"], json({"v1alpha1"}));
    EXPECT_EQ(rule["resources"], json({k.plural}));
    EXPECT_EQ(rule["operations"], json({"CREATE", "UPDATE"})) << k.name;
    EXPECT_EQ(w["failurePolicy"], "Ignore");
    EXPECT_EQ(w["sideEffects"], "None");
    EXPECT_EQ(w["admissionReviewVersions"], json({"v1"}));
    EXPECT_EQ(w["timeoutSeconds"], 10);
  }
  EXPECT_EQ(names.size(), api::all_kinds().size());
  EXPECT_TRUE(names.count("vclusterautomationstrategy-v1alpha1.kb.io"));
  EXPECT_EQ(cfg["webhooks"][0]["clientConfig"]["url"],
            "https://127.0.0.1:9443/validate-rightsizing-kubex-ai-v1alpha1-automationstrategy");
}

TEST(ValidatingConfiguration, FailurePolicyAndTimeoutFollowOptions) {  // HLM-1 webhook.failurePolicy
  RegistrationOptions o = options(false);
  o.validating_failure_policy = "Fail";
  o.timeout_seconds = 5;
  json cfg = build_validating_configuration(o);
  for (const auto& w : cfg["webhooks"]) {
    EXPECT_EQ(w["failurePolicy"], "Fail");
    EXPECT_EQ(w["timeoutSeconds"], 5);
    EXPECT_FALSE(w["clientConfig"].contains("caBundle"));
  }
}

// ADM-1: late and early configurations, core v1 pods CREATE, Ignore, NoneOnDryRun, no selectors.
TEST(MutatingConfiguration, LateAndEarlyPasses) {
  for (bool early : {false, true}) {
    json cfg = build_mutating_configuration(early, options());
    EXPECT_EQ(cfg["kind"], "MutatingWebhookConfiguration");
    EXPECT_EQ(cfg["metadata"]["name"], early ? "000-kubex-mutating-webhook-configuration"
                                             : "zzz-kubex-mutating-webhook-configuration");
    ASSERT_EQ(cfg["webhooks"].size(), 1u);
    const json& w = cfg["webhooks"][0];
    EXPECT_EQ(w["name"], early ? "000-mpod-rightsizing-recommendations.kubex.ai"
                               : "zzz-mpod-rightsizing-recommendations.kubex.ai");
    EXPECT_EQ(w["clientConfig"]["url"],
              std::string("https://127.0.0.1:9443") + (early ? "/mutate--v1-pod-early" : "/mutate--v1-pod"));
    EXPECT_EQ(w["rules"], json::parse(R"([{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE"],
                                           "resources":["pods"]}])"));
    EXPECT_EQ(w["failurePolicy"], "Ignore");
    EXPECT_EQ(w["sideEffects"], "NoneOnDryRun");
    EXPECT_EQ(w["admissionReviewVersions"], json({"v1"}));
    EXPECT_EQ(w["timeoutSeconds"], 10);
    EXPECT_FALSE(w.contains("namespaceSelector"));
    EXPECT_FALSE(w.contains("objectSelector"));
  }
  // Even a validating failurePolicy of Fail leaves pod mutation at Ignore (HLM-1).
  RegistrationOptions o = options();
  o.validating_failure_policy = "Fail";
  EXPECT_EQ(build_mutating_configuration(false, o)["webhooks"][0]["failurePolicy"], "Ignore");
}

TEST(ConfigurationPaths, RestPaths) {
  EXPECT_EQ(mutating_configuration_path(),
            "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations");
  EXPECT_EQ(validating_configuration_path("x"),
            "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/x");
}

}  // namespace
}  // namespace kubex::webhook
