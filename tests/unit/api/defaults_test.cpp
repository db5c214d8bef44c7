// In-memory CRD defaulting (API-2) and the field catalogue: every default of SPEC §1.
#include "api/defaults.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "api_test_util.h"

namespace kubex::api {
namespace {

using nlohmann::json;
using test::yaml;

json defaulted(Kind k, const std::string& text) {
  json o = yaml(text);
  apply_defaults(k, o);
  return o;
}

std::string default_of(Kind k, const std::string& path) {
  for (const auto& f : field_catalogue(k)) {
    if (f.path == path) return f.default_json;
  }
  ADD_FAILURE() << "no catalogue entry " << path;
  return "";
}

// SPEC §1.1 defaults, field by field.
TEST(Defaults, StrategyDefaults) {
  json o = defaulted(Kind::kAutomationStrategy, "{kind: AutomationStrategy, metadata: {name: s}}");
  const json& s = o["spec"];
  EXPECT_EQ(s["enablement"]["overrideScheduler"], "none");
  EXPECT_EQ(s["enablement"]["gpu"]["requests"],
            json::parse(R"({"upsize":false,"downsize":false,"setFromUnspecified":false})"));
  EXPECT_EQ(s["enablement"]["cpu"]["requests"],
            json::parse(R"({"upsize":true,"downsize":true,"setFromUnspecified":true})"));
  EXPECT_EQ(s["enablement"]["cpu"]["limits"],
            json::parse(R"({"upsize":true,"downsize":true,"setFromUnspecified":false})"));
  EXPECT_EQ(s["enablement"]["memory"]["requests"],
            json::parse(R"({"upsize":true,"downsize":true,"setFromUnspecified":true})"));
  EXPECT_EQ(s["enablement"]["memory"]["limits"],
            json::parse(R"({"upsize":true,"downsize":true,"setFromUnspecified":true})"));
  EXPECT_FALSE(s["enablement"]["gpu"].contains("limits"));  // there is no GPU limits block
  EXPECT_EQ(s["inPlaceResize"], json::parse(R"({"enabled":true,"containerRestart":false})"));
  EXPECT_EQ(s["podEviction"], json::parse(R"({"enabled":true,"retryPodDisruptionBudget":true})"));
  const json& sc = s["safetyChecks"];
  EXPECT_EQ(sc["enablePauseUntilAnnotationCheck"], true);
  EXPECT_EQ(sc["minReadyDuration"], "10s");
  EXPECT_EQ(sc["requireOwnerPodsReady"], false);
  EXPECT_EQ(sc["respectWorkloadMaxUnavailable"], true);
  EXPECT_EQ(sc["resizeRetryInterval"], "30s");
  for (const char* f : {"enableResourceQuotaFilter", "enableHpaFilter", "enableVpaFilter",
                        "enableLimitRangeFilter", "enablePodLimitRangeFilter", "requireNodeAllocatable"}) {
    EXPECT_EQ(sc[f], true) << f;
  }
  EXPECT_EQ(sc["blockResizeOnVpaControlledResources"], false);
  EXPECT_EQ(sc["retainGuaranteedQOS"], false);
  EXPECT_EQ(sc["minCpuChangePercent"], 5);
  EXPECT_EQ(sc["minMemoryChangePercent"], 5);
  EXPECT_EQ(sc["nodeCpuHeadroom"], "10%");
  EXPECT_EQ(sc["nodeMemoryHeadroom"], "200Mi");
  // Presence-meaningful objects are never created by defaulting (VAL-3: spec.kai; VLM: spec.kai.vllm).
  EXPECT_FALSE(s.contains("kai"));
  EXPECT_FALSE(s.contains("experimental"));
  EXPECT_FALSE(s.contains("scheduling"));
  // ... but are filled in when present.
  o = defaulted(Kind::kAutomationStrategy,
                "{spec: {kai: {vllm: {}}, scheduling: {exclusionWindows: [{start: "
                "\"01:00\", end: \"02:00\"}]}}}");
  EXPECT_EQ(o["spec"]["kai"],
            json::parse(R"({"queue":"kubex-unlimited-gpu-queue","setQueueWhenSpecified":false,
                                               "vllm":{"gpuMemoryUtilizationBufferPercent":0}})"));
  EXPECT_EQ(o["spec"]["scheduling"]["exclusionWindows"][0]["timezone"], "UTC");
}

TEST(Defaults, PresentValuesAreKeptAndWrongTypesTolerated) {
  json o = defaulted(Kind::kAutomationStrategy,
                     "{spec: {enablement: {overrideScheduler: kai, gpu: {requests: {upsize: true}}, cpu: 7}, "
                     "safetyChecks: null}}");
  EXPECT_EQ(o["spec"]["enablement"]["overrideScheduler"], "kai");
  EXPECT_EQ(o["spec"]["enablement"]["gpu"]["requests"]["upsize"], true);
  EXPECT_EQ(o["spec"]["enablement"]["gpu"]["requests"]["downsize"], false);
  EXPECT_EQ(o["spec"]["enablement"]["cpu"], 7);                     // wrong type: left alone
  EXPECT_EQ(o["spec"]["safetyChecks"]["minReadyDuration"], "10s");  // null counts as absent
  json not_object = json::array();
  apply_defaults(Kind::kAutomationStrategy, not_object);
  EXPECT_EQ(not_object, json::array());
}

TEST(Defaults, PolicyDefaults) {  // SPEC §1.2-1.4
  json o =
      defaulted(Kind::kClusterProactivePolicy,
                "{spec: {automationStrategyRef: {name: s}, scope: {namespaceSelector: {operator: In, values: "
                "[\"*\"]}}}}");
  EXPECT_EQ(o["spec"]["weight"], 0);
  EXPECT_EQ(o["spec"]["safetyChecks"]["maxAnalysisAgeDays"], 5);
  EXPECT_EQ(
      o["spec"]["scope"]["workloadTypes"],
      json::parse(
          R"(["Deployment","StatefulSet","CronJob","Rollout","Job","AnalysisRun","DaemonSet","Model"])"));
  o = defaulted(Kind::kGpuReactivePolicy,
                "{spec: {metrics: {compute: {prometheus: {metric: m}}, memory: {prometheus: {metric: n}}}}}");
  EXPECT_EQ(o["spec"]["minPodMetricsAge"], "15m");
  for (const char* s : {"compute", "memory"}) {
    const json& sig = o["spec"]["metrics"][s];
    EXPECT_EQ(sig["prometheus"]["interpretation"], "fullGPU");
    EXPECT_EQ(sig["upsize"],
              json::parse(R"({"thresholdPercent":120,"metricsWindow":"10m","headroomPercent":20,
                                             "maxPercent":200})"));
    EXPECT_EQ(sig["scaleBack"],
              json::parse(R"({"thresholdPercent":80,"metricsWindow":"10m","headroomPercent":20})"));
  }
  EXPECT_FALSE(o["spec"].contains("scope"));  // optional on namespaced kinds, never invented
  o = defaulted(Kind::kStaticPolicy, "{spec: {resources: {containers: {app: {requests: {cpu: 1}}}}}}");
  EXPECT_EQ(o["spec"]["resources"]["containers"]["app"], json::parse(R"({"requests":{"cpu":1}})"));
}

TEST(Defaults, ClusterKindDefaults) {  // SPEC §1.5-1.7
  json o = defaulted(Kind::kGpuConsolidationPolicy, "{spec: {nodeSelector: {}}}");
  EXPECT_EQ(o["spec"]["utilizationThresholdPercent"], 75);
  EXPECT_EQ(o["spec"]["requeueAfter"], "1m");
  o = defaulted(Kind::kGlobalConfiguration, "{metadata: {name: global-config}}");
  EXPECT_EQ(o["spec"], json::parse(R"({
    "automationEnabled": true,
    "protectedNamespacePatterns": ["kube-*", "openshift-*", "gmp-*"],
    "prometheus": {"url": "http://kubex-prometheus-server.kubex.svc", "requestTimeout": "30s"},
    "gpuReactiveCheckInterval": "1m", "recommendationReloadInterval": "1h",
    "webhookOwnerResolutionRetryTimeout": "1s",
    "webhookHealth": {"failureThreshold": 2, "successThreshold": 3, "transitionCheckInterval": "10s"},
    "kai": {"schedulerName": "kai-scheduler", "memoryIsolation": "None", "reservationNamespace": "kai-resource-reservation"},
    "proactive": {"headroomPercent": 20},
    "consolidation": {"gpuMemoryReserve": {"percent": 3, "minimum": "256Mi"}},
    "report": {"idle": {"smPercent": 5, "memoryPercent": 10, "minimumGpus": "0.25"}}})"));
  o = defaulted(Kind::kPolicyEvaluation, "{metadata: {name: policy-evaluation}}");
  EXPECT_EQ(o["spec"]["precedence"], json::parse(R"([
    {"type": "GpuReactivePolicy", "priority": 120}, {"type": "ClusterGpuReactivePolicy", "priority": 110},
    {"type": "StaticPolicy", "priority": 90}, {"type": "ClusterStaticPolicy", "priority": 90},
    {"type": "ProactivePolicy", "priority": 70}, {"type": "ClusterProactivePolicy", "priority": 70}])"));
  // A user's list is kept as written (no merging with the default list).
  o = defaulted(Kind::kPolicyEvaluation, "{spec: {precedence: [{type: StaticPolicy, priority: 1}]}}");
  EXPECT_EQ(o["spec"]["precedence"].size(), 1u);
}

TEST(Defaults, CatalogueListsEveryFieldOncePerKind) {
  EXPECT_EQ(default_of(Kind::kClusterGpuReactivePolicy, "spec.metrics.memory.upsize.maxPercent"), "200");
  EXPECT_EQ(default_of(Kind::kAutomationStrategy, "spec.kai.queue"), "\"kubex-unlimited-gpu-queue\"");
  EXPECT_EQ(default_of(Kind::kAutomationStrategy, "spec.enablement.gpu.requests.ceiling"), "");
  for (const auto& info : all_kinds()) {
    std::set<std::string> seen;
    for (const auto& f : field_catalogue(info.kind)) EXPECT_TRUE(seen.insert(f.path).second) << f.path;
    EXPECT_TRUE(seen.contains("status.conditions[].type")) << info.name;  // API-1
  }
  // Only cluster policies have a namespaceSelector.
  auto has = [](Kind k, const std::string& p) {
    for (const auto& f : field_catalogue(k)) {
      if (f.path == p) return true;
    }
    return false;
  };
  EXPECT_TRUE(has(Kind::kClusterStaticPolicy, "spec.scope.namespaceSelector.values[]"));
  EXPECT_FALSE(has(Kind::kStaticPolicy, "spec.scope.namespaceSelector"));
}

}  // namespace
}  // namespace kubex::api
