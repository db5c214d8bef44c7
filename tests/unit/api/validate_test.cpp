// The validator (VAL-1..VAL-4, VAL-6) and the SPEC §14 message catalogue, rule by rule, with exact texts.
#include "api/validate.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "api/defaults.h"
#include "api/parse.h"
#include "api_test_util.h"

namespace kubex::api {
namespace {

using nlohmann::json;
using test::base_object;
using test::patched;
using test::yaml;

constexpr Kind CAS = Kind::kClusterAutomationStrategy;
constexpr Kind AS = Kind::kAutomationStrategy;
constexpr Kind PP = Kind::kProactivePolicy;
constexpr Kind CPP = Kind::kClusterProactivePolicy;
constexpr Kind SP = Kind::kStaticPolicy;
constexpr Kind CSP = Kind::kClusterStaticPolicy;
constexpr Kind GRP = Kind::kGpuReactivePolicy;
constexpr Kind CGRP = Kind::kClusterGpuReactivePolicy;
constexpr Kind GCP = Kind::kGpuConsolidationPolicy;
constexpr Kind GC = Kind::kGlobalConfiguration;
constexpr Kind PE = Kind::kPolicyEvaluation;

// The seed guide's YAML is accepted as written (SPEC §1, seed examples), with no warnings.
TEST(Validate, SeedGuideExamplesAreValidAsWritten) {
  for (const auto& doc : test::starter()) {
    auto r = validate_any(doc);
    EXPECT_TRUE(r.ok()) << doc["kind"] << ": " << r.message();
    EXPECT_TRUE(r.warnings.empty()) << doc["kind"] << ": " << r.warnings.front();
  }
  auto r = validate_any(test::consolidation_example());
  EXPECT_TRUE(r.ok()) << r.message();
  EXPECT_TRUE(r.warnings.empty());
}

struct MessageCase {
  Kind kind;
  const char* rule;
  const char* patch;      // merge patch (YAML) on base_object(kind)
  const char* message;    // the whole report, errors joined with "; " (VAL-1)
  bool contract = false;  // VAL-3: reason InvalidContract
};

const MessageCase kMessages[] = {
    // VAL-3 contract (verbatim messages).
    {CAS, "VAL-3", "spec: {experimental: {gpuKaiContract: v1alpha1-2026-04}}",
     "spec.experimental.gpuKaiContract: unsupported value \"v1alpha1-2026-04\": the only accepted GPU/KAI "
     "contract is "
     "\"v1alpha1-2026-07\"",
     true},
    {CAS, "VAL-3", "spec: {experimental: null}",
     "spec.experimental.gpuKaiContract: must be \"v1alpha1-2026-07\" when spec.enablement.overrideScheduler "
     "is \"kai\" "
     "or spec.kai is set",
     true},
    {CAS, "VAL-3", "spec: {experimental: {gpuKaiContract: none}, kai: null}",
     "spec.experimental.gpuKaiContract: must be \"v1alpha1-2026-07\" when spec.enablement.overrideScheduler "
     "is \"kai\" "
     "or spec.kai is set",
     true},
    {CAS, "VAL-3", "spec: {experimental: {gpuKaiContract: null}}",
     "spec.experimental.gpuKaiContract: required", true},
    {CGRP, "VAL-3", "spec: {experimental: null}", "spec.experimental: required", true},
    {CGRP, "VAL-3", "spec: {experimental: {gpuKaiContract: none}}",
     "spec.experimental.gpuKaiContract: must be \"v1alpha1-2026-07\"", true},
    {GRP, "VAL-3", "spec: {experimental: {gpuKaiContract: null}}",
     "spec.experimental.gpuKaiContract: must be \"v1alpha1-2026-07\"", true},
    {GCP, "VAL-3", "spec: {experimental: {gpuKaiContract: v1alpha1-2026-04}}",
     "spec.experimental.gpuKaiContract: unsupported value \"v1alpha1-2026-04\": the only accepted GPU/KAI "
     "contract is "
     "\"v1alpha1-2026-07\"",
     true},
    {GCP, "VAL-3", "spec: {experimental: null}", "spec.experimental: required", true},
    // VAL-4 minimums and ranges.
    {CGRP, "VAL-4 minimums", "spec: {metrics: {compute: {upsize: {thresholdPercent: 0}}}}",
     "spec.metrics.compute.upsize.thresholdPercent: must be >= 1"},
    {CGRP, "VAL-4 minimums", "spec: {metrics: {memory: {upsize: {maxPercent: 0, headroomPercent: -1}}}}",
     "spec.metrics.memory.upsize.headroomPercent: must be >= 0; spec.metrics.memory.upsize.maxPercent: must "
     "be >= 1"},
    {CGRP, "VAL-4 minimums", "spec: {metrics: {compute: {scaleBack: {thresholdPercent: 0}}}}",
     "spec.metrics.compute.scaleBack.thresholdPercent: must be >= 1"},
    {CPP, "VAL-4 minimums", "spec: {weight: -3}", "spec.weight: must be >= 0"},
    {CPP, "VAL-4 minimums", "spec: {safetyChecks: {maxAnalysisAgeDays: 0}}",
     "spec.safetyChecks.maxAnalysisAgeDays: must be >= 1"},
    {CAS, "VAL-4 minimums", "spec: {safetyChecks: {minMemoryChangePercent: -1}}",
     "spec.safetyChecks.minMemoryChangePercent: must be >= 0"},
    {GCP, "VAL-4 ranges", "spec: {utilizationThresholdPercent: 0}",
     "spec.utilizationThresholdPercent: must be between 1 and 100"},
    {CAS, "VAL-4 ranges", "spec: {kai: {vllm: {gpuMemoryUtilizationBufferPercent: 150}}}",
     "spec.kai.vllm.gpuMemoryUtilizationBufferPercent: must be between 0 and 100"},
    {GC, "VAL-4 ranges", "spec: {proactive: {headroomPercent: -1}}",
     "spec.proactive.headroomPercent: must be between 0 and 100"},
    {GC, "§1.6", "spec: {webhookHealth: {failureThreshold: 0, successThreshold: 0}}",
     "spec.webhookHealth.failureThreshold: must be >= 1; spec.webhookHealth.successThreshold: must be >= 1"},
    {PE, "§1.7", "spec: {precedence: [{type: StaticPolicy, priority: -1}]}",
     "spec.precedence[0].priority: must be >= 0"},
    // Enums.
    {CAS, "VAL-4 enums", "spec: {enablement: {overrideScheduler: x}}",
     "spec.enablement.overrideScheduler: unsupported value \"x\": supported values: \"none\", \"kai\""},
    {CGRP, "VAL-4 enums", "spec: {metrics: {compute: {prometheus: {interpretation: halfGPU}}}}",
     "spec.metrics.compute.prometheus.interpretation: unsupported value \"halfGPU\": supported values: "
     "\"fullGPU\", "
     "\"currentAllocation\""},
    {CPP, "VAL-4 enums", "spec: {scope: {namespaceSelector: {operator: Has}}}",
     "spec.scope.namespaceSelector.operator: unsupported value \"Has\": supported values: \"In\", \"NotIn\""},
    {CPP, "VAL-4 enums", "spec: {scope: {workloadTypes: [Deployment, Pod]}}",
     "spec.scope.workloadTypes[1]: unsupported value \"Pod\": supported values: \"Deployment\", "
     "\"StatefulSet\", "
     "\"CronJob\", \"Rollout\", \"Job\", \"AnalysisRun\", \"DaemonSet\", \"Model\", \"StrimziPodSet\""},
    {GC, "VAL-4 GlobalConfiguration", "spec: {kai: {memoryIsolation: Full}}",
     "spec.kai.memoryIsolation: unsupported value \"Full\": supported values: \"None\", \"HAMiCore\""},
    // Required.
    {CPP, "VAL-4 required", "spec: {automationStrategyRef: null}",
     "spec.automationStrategyRef.name: required"},
    {CGRP, "VAL-4 required", "spec: {automationStrategyRef: {name: \"\"}}",
     "spec.automationStrategyRef.name: required"},
    {CPP, "VAL-4 required", "spec: {scope: null}", "spec.scope: required"},
    {CSP, "VAL-4 required", "spec: {scope: {namespaceSelector: null}}",
     "spec.scope.namespaceSelector: required"},
    {GCP, "VAL-4 required", "spec: {nodeSelector: null}", "spec.nodeSelector: required"},
    {CGRP, "VAL-4 required", "spec: {metrics: {memory: null}}", "spec.metrics.memory: required"},
    {GRP, "VAL-4 required", "spec: {metrics: null}", "spec.metrics: required"},
    {CGRP, "VAL-4 required", "spec: {metrics: {compute: {prometheus: null}}}",
     "spec.metrics.compute.prometheus: required"},
    {CGRP, "VAL-4 required", "spec: {metrics: {compute: {prometheus: {metric: null, podLabel: \"\"}}}}",
     "spec.metrics.compute.prometheus.metric: required; spec.metrics.compute.prometheus.podLabel: required"},
    {GC, "VAL-4 GlobalConfiguration", "spec: {proactive: {recommendationsConfigMap: {namespace: kubex}}}",
     "spec.proactive.recommendationsConfigMap.name: required"},
    {GC, "§1.6", "spec: {kai: {schedulerName: \"\"}}", "spec.kai.schedulerName: required"},
    {PE, "§1.7", "spec: {precedence: [{priority: 3}]}", "spec.precedence[0].type: required"},
    {SP, "§1.3", "spec: null", "spec: required"},
    // Lists.
    {CPP, "VAL-4 lists", "spec: {scope: {namespaceSelector: {values: []}}}",
     "spec.scope.namespaceSelector.values: must contain at least 1 item"},
    {CPP, "VAL-4 lists", "spec: {scope: {workloadTypes: [Deployment, Job, Deployment]}}",
     "spec.scope.workloadTypes[2]: duplicate value \"Deployment\""},
    {CAS, "§1.1 windows",
     "spec: {scheduling: {inclusionWindows: [{start: \"01:00\", end: \"02:00\", weekdays: [Mon, Tue, "
     "Wed, Thu, Fri, Sat, Sun, Monday]}]}}",
     "spec.scheduling.inclusionWindows[0].weekdays: must have at most 7 items"},
    // Durations.
    {CGRP, "VAL-4 durations", "spec: {minPodMetricsAge: 30s}",
     "spec.minPodMetricsAge: must be zero or at least 1m"},
    {CGRP, "VAL-4 durations", "spec: {minPodMetricsAge: 15 minutes}",
     "spec.minPodMetricsAge: must be a valid duration"},
    {CGRP, "VAL-4 durations", "spec: {minPodMetricsAge: 15}",
     "spec.minPodMetricsAge: must be a valid duration"},
    {CGRP, "VAL-4 durations", "spec: {metrics: {memory: {scaleBack: {metricsWindow: 30s}}}}",
     "spec.metrics.memory.scaleBack.metricsWindow: must be at least 1m"},
    {GCP, "VAL-4 durations", "spec: {requeueAfter: 100ms}", "spec.requeueAfter: must be at least 1s"},
    {GC, "VAL-4 durations", "spec: {gpuReactiveCheckInterval: 10s, recommendationReloadInterval: 1s}",
     "spec.gpuReactiveCheckInterval: must be at least 1m; spec.recommendationReloadInterval: must be at "
     "least 1m"},
    {GC, "§1.6", "spec: {webhookOwnerResolutionRetryTimeout: 10s}",
     "spec.webhookOwnerResolutionRetryTimeout: must be at most 5s"},
    {GC, "§1.6", "spec: {webhookOwnerResolutionRetryTimeout: 0s}",
     "spec.webhookOwnerResolutionRetryTimeout: must be > 0"},
    {GC, "§1.6", "spec: {prometheus: {requestTimeout: -1s}}", "spec.prometheus.requestTimeout: must be > 0"},
    {GC, "§1.6", "spec: {webhookHealth: {transitionCheckInterval: 500ms}}",
     "spec.webhookHealth.transitionCheckInterval: must be at least 1s"},
    {CAS, "§1.1", "spec: {safetyChecks: {resizeRetryInterval: 500ms, minReadyDuration: -5s}}",
     "spec.safetyChecks.minReadyDuration: must be at least 0s; spec.safetyChecks.resizeRetryInterval: must "
     "be at least "
     "1s"},
    // Quantities.
    {CAS, "VAL-4 quantities", "spec: {enablement: {gpu: {requests: {ceiling: abc}}}}",
     "spec.enablement.gpu.requests.ceiling: must be a valid quantity"},
    // GPU-3: decimals must be quoted; an unquoted one is told how to write it (issue 26).
    {CAS, "GPU-3", "spec: {enablement: {gpu: {requests: {ceiling: 0.5}}}}",
     "spec.enablement.gpu.requests.ceiling: must be a quantity string, e.g. \"0.5\" (quote the number)"},
    {SP, "GPU-3", "spec: {resources: {containers: {app: {requests: {gpu: 0.25, cpu: 1}}}}}",
     "spec.resources.containers.app.requests.gpu: must be a quantity string, e.g. \"0.25\" (quote the number)"},
    {CSP, "GPU-3", "spec: {resources: {containers: {\"*\": {limits: {cpu: 0.1}}}}}",
     "spec.resources.containers.*.limits.cpu: must be a quantity string, e.g. \"0.1\" (quote the number)"},
    {CAS, "VAL-4 quantities", "spec: {enablement: {gpu: {requests: {ceiling: \"0\"}}}}",
     "spec.enablement.gpu.requests.ceiling: must be > 0"},
    {CAS, "VAL-4 quantities", "spec: {enablement: {gpu: {requests: {floor: \"-250m\"}}}}",
     "spec.enablement.gpu.requests.floor: must be >= 0"},
    {CAS, "VAL-4 quantities", "spec: {enablement: {gpu: {requests: {floor: \"0.5\", ceiling: \"0.25\"}}}}",
     "spec.enablement.gpu.requests: floor must be less than or equal to ceiling"},
    {CAS, "VAL-4 quantities",
     "spec: {enablement: {gpu: {requests: {containers: {app: {floor: \"1\", ceiling: \"500m\"}}}}}}",
     "spec.enablement.gpu.requests.containers.app: floor must be less than or equal to ceiling"},
    {CAS, "VAL-4 quantities", "spec: {enablement: {memory: {limits: {floor: 2Gi, ceiling: 1Gi}}}}",
     "spec.enablement.memory.limits: floor must be less than or equal to ceiling"},
    // Static GPU.
    {SP, "KAI-2 static limit", "spec: {resources: {containers: {app: {requests: {gpu: \"0.5\"}, limits: {gpu: \"0.4\"}}}}}",
     "spec.resources.containers.app.limits.gpu: must be greater than requests.gpu"},
    {SP, "KAI-2 static limit", "spec: {resources: {containers: {app: {limits: {gpu: \"0\"}}}}}",
     "spec.resources.containers.app.limits.gpu: must be > 0"},
    {GC, "KAI-1 mode", "spec: {kai: {gpuSharingMode: x}}",
     "spec.kai.gpuSharingMode: unsupported value \"x\": supported values: \"Disabled\", \"NonMemoryEnforced\", "
     "\"HamiCore\", \"NvFractions\""},
    {CAS, "KAI-2 fractionLimit", "spec: {experimental: {gpuKaiContract: v1alpha1-2026-07}, kai: {fractionLimit: {ceiling: \"1.5\"}}}",
     "spec.kai.fractionLimit.ceiling: must be > 0 and <= 1"},
    {SP, "VAL-4 static GPU", "spec: {resources: {containers: {app: {requests: {gpu: \"0\"}}}}}",
     "spec.resources.containers.app.requests.gpu: must be > 0"},
    {SP, "VAL-4 static GPU", "spec: {resources: {containers: {app: {requests: {nvidia.com/gpu: 1}}}}}",
     "spec.resources.containers.app.requests.nvidia.com/gpu: must be one of cpu, memory, gpu"},
    {CSP, "VAL-4 static GPU",
     "spec: {resources: {containers: {\"*\": {requests: {cpu: \"-1\", memory: lots}}}}}",
     "spec.resources.containers.*.requests.cpu: must be >= 0; spec.resources.containers.*.requests.memory: "
     "must be a "
     "valid quantity"},
    // Patterns.
    {CGRP, "VAL-4 patterns", "spec: {metrics: {compute: {prometheus: {metric: 9lives}}}}",
     "spec.metrics.compute.prometheus.metric: must match ^[A-Za-z_:][A-Za-z0-9_:]*$"},
    {CGRP, "VAL-4 patterns", "spec: {metrics: {memory: {prometheus: {namespaceLabel: k8s-namespace}}}}",
     "spec.metrics.memory.prometheus.namespaceLabel: must match ^[A-Za-z_][A-Za-z0-9_]*$"},
    {CAS, "VAL-4 patterns", "spec: {kai: {queue: Team_A}}", "spec.kai.queue: must be a valid RFC 1123 label"},
    {CAS, "VAL-4 patterns", "spec: {scheduling: {exclusionWindows: [{start: \"7:00\", end: \"25:00\"}]}}",
     "spec.scheduling.exclusionWindows[0].start: must be HH:MM; spec.scheduling.exclusionWindows[0].end: "
     "must be HH:MM"},
    {CAS, "VAL-4 patterns", "spec: {scheduling: {exclusionWindows: [{start: \"08:00\", end: \"08:00\"}]}}",
     "spec.scheduling.exclusionWindows[0]: start and end must not be the same"},
    // Selectors.
    {GCP, "VAL-4 selectors", "spec: {nodeSelector: {matchExpressions: [{key: pool, operator: In}]}}",
     "spec.nodeSelector.matchExpressions[0].values: required for operator In"},
    {GCP, "VAL-4 selectors",
     "spec: {nodeSelector: {matchExpressions: [{key: pool, operator: Exists, values: [a]}]}}",
     "spec.nodeSelector.matchExpressions[0].values: must be empty for operator Exists"},
    // Singletons (API-4).
    {GC, "VAL-4 singletons", "metadata: {name: my-config}", "metadata.name: must be \"global-config\""},
    {PE, "VAL-4 singletons", "metadata: {name: my-evaluation}",
     "metadata.name: must be \"policy-evaluation\""},
    {PE, "VAL-4 singletons",
     "spec: {precedence: [{type: GpuReactivePolicy, priority: 1}, {type: StaticPolicy, priority: 2}, {type: "
     "StaticPolicy, priority: 3}]}",
     "spec.precedence[2].type: duplicate value \"StaticPolicy\""},
    // GlobalConfiguration.
    {GC, "VAL-4 GlobalConfiguration", "spec: {prometheus: {url: prometheus.kubex.svc:9090}}",
     "spec.prometheus.url: must be an absolute http or https URL"},
    {GC, "VAL-4 GlobalConfiguration", "spec: {prometheus: {url: \"ftp://prometheus\"}}",
     "spec.prometheus.url: must be an absolute http or https URL"},
    // Namespaced kinds have no namespaceSelector (SPEC §1.2).
    {PP, "§1.2", "spec: {scope: {namespaceSelector: {operator: In, values: [a]}}}",
     "spec.scope.namespaceSelector: not allowed on a namespaced policy, which only matches workloads in its "
     "own "
     "namespace"},
    // Envelope.
    {CPP, "VAL-1", "apiVersion: rightsizing.kubex.ai/v1beta1",
     "apiVersion: must be \"rightsizing.kubex.ai/v1alpha1\""},
    {CPP, "VAL-1", "metadata: {name: null}", "metadata.name: required"},
    // Several errors, in document order, joined with "; " (VAL-1).
    {CGRP, "VAL-1",
     "spec: {experimental: null, weight: -1, metrics: {compute: {upsize: {thresholdPercent: 0}}, memory: "
     "null}}",
     "spec.experimental: required; spec.weight: must be >= 0; spec.metrics.compute.upsize.thresholdPercent: "
     "must be "
     ">= 1; spec.metrics.memory: required",
     true},
};

TEST(Validate, MessageCatalogue) {  // VAL-1, VAL-3, VAL-4
  for (const auto& c : kMessages) {
    auto r = validate(c.kind, patched(c.kind, c.patch));
    EXPECT_EQ(r.message(), c.message) << info(c.kind).name << " [" << c.rule << "] " << c.patch;
    EXPECT_EQ(r.contract, c.contract) << c.patch;
    EXPECT_STREQ(r.reason(), c.contract ? "InvalidContract" : "InvalidSpec") << c.patch;
  }
}

TEST(Validate, ErrorsCarryPathAndMessageSeparately) {  // VAL-1
  auto r = validate(CGRP, patched(CGRP, "spec: {metrics: {compute: {upsize: {thresholdPercent: 0}}}}"));
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors.items()[0].path, "spec.metrics.compute.upsize.thresholdPercent");
  EXPECT_EQ(r.errors.items()[0].message, "must be >= 1");
}

// VAL-3: a strategy that only sets enablement.gpu needs no contract.
TEST(Validate, StrategyWithoutKaiNeedsNoContract) {
  auto r = validate(AS, yaml(R"(
apiVersion: rightsizing.kubex.ai/v1alpha1
kind: AutomationStrategy
metadata: {name: vanilla, namespace: ml}
spec:
  enablement:
    gpu:
      requests: {upsize: true, downsize: true, ceiling: 4}
)"));
  EXPECT_TRUE(r.ok()) << r.message();
  EXPECT_TRUE(r.warnings.empty());
  // An empty strategy is valid too (everything defaults).
  EXPECT_TRUE(
      validate(AS, yaml("{apiVersion: rightsizing.kubex.ai/v1alpha1, kind: AutomationStrategy, metadata: "
                        "{name: s}}"))
          .ok());
}

// VAL-2 warnings.
TEST(Validate, KaiStrategyWarnings) {
  // Without ceiling "1".
  auto r = validate(CAS, patched(CAS, "spec: {enablement: {gpu: {requests: {ceiling: null}}}}"));
  EXPECT_TRUE(r.ok()) << r.message();
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0],
            "spec.enablement.gpu.requests.ceiling: \"1\" is recommended when overrideScheduler is \"kai\"");
  r = validate(CAS, patched(CAS, "spec: {enablement: {gpu: {requests: {ceiling: 2}}}}"));
  EXPECT_EQ(r.warnings.size(), 1u);
  r = validate(CAS, patched(CAS, "spec: {enablement: {gpu: {requests: {ceiling: \"500m\"}}}}"));
  EXPECT_TRUE(r.warnings.empty()) << r.warnings[0];  // below 1 is fine
  // A vanilla strategy gets no KAI warning.
  r = validate(
      AS, yaml("{kind: AutomationStrategy, apiVersion: rightsizing.kubex.ai/v1alpha1, metadata: {name: v}}"));
  EXPECT_TRUE(r.warnings.empty());

  // Early webhook disabled.
  ValidationContext ctx;
  ctx.early_webhook_enabled = false;
  r = validate(CAS, base_object(CAS), ctx);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0],
            "spec.enablement.overrideScheduler: \"kai\" needs the early pod-mutating webhook "
            "(webhook.podMutation.additionalWebhook.enabled: true), which is disabled");

  // A queue that does not exist while the Queue API is present; none when the API is absent.
  ctx = {};
  ctx.kai_queues = std::set<std::string>{"kubex-parent-queue"};
  r = validate(CAS, base_object(CAS), ctx);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0], "spec.kai.queue: KAI queue \"kubex-unlimited-gpu-queue\" does not exist");
  ctx.kai_queues->insert("kubex-unlimited-gpu-queue");
  EXPECT_TRUE(validate(CAS, base_object(CAS), ctx).warnings.empty());
  ctx.kai_queues.reset();
  EXPECT_TRUE(validate(CAS, patched(CAS, "spec: {kai: {queue: nowhere}}"), ctx).warnings.empty());
}

// VAL-2: fields marked "accepted, no effect" warn when set to anything but their default, so that an object
// the API server already defaulted warns exactly like the raw one.
TEST(Validate, AcceptedNoEffectFieldsWarn) {
  auto r = validate(CAS, patched(CAS, R"(
spec:
  inPlaceResize: {containerRestart: true}
  safetyChecks: {enableHpaFilter: false, retainGuaranteedQOS: true, minCpuChangePercent: 10, nodeMemoryHeadroom: 1Gi}
  scheduling:
    inclusionWindows: [{start: "01:00", end: "05:00", weekdays: [Sat]}]
)"));
  EXPECT_TRUE(r.ok()) << r.message();
  const std::vector<std::string> expected = {
      "spec.inPlaceResize.containerRestart: accepted for compatibility, has no effect",
      "spec.safetyChecks.enableHpaFilter: accepted for compatibility, has no effect",
      "spec.safetyChecks.retainGuaranteedQOS: accepted for compatibility, has no effect",
      "spec.safetyChecks.minCpuChangePercent: accepted for compatibility, has no effect",
      "spec.safetyChecks.nodeMemoryHeadroom: accepted for compatibility, has no effect",
      "spec.scheduling.inclusionWindows: accepted for compatibility, has no effect",
  };
  EXPECT_EQ(r.warnings, expected);
  // Defaults written out explicitly do not warn.
  r = validate(CAS, patched(CAS, "spec: {safetyChecks: {enableHpaFilter: true, minCpuChangePercent: 5}}"));
  EXPECT_TRUE(r.warnings.empty());
  // GlobalConfiguration compatibility fields have no default: any value warns.
  r = validate(GC, patched(GC, "spec: {rescanInterval: 5m, proposalSyncEnabled: false}"));
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.warnings, (std::vector<std::string>{
                            "spec.rescanInterval: accepted for compatibility, has no effect",
                            "spec.proposalSyncEnabled: accepted for compatibility, has no effect"}));
}

TEST(Validate, UnknownPolicyEvaluationTypesAreAcceptedWithAWarning) {  // §1.7, VAL-2
  auto r =
      validate(PE, patched(PE,
                           "spec: {precedence: [{type: StaticPolicy, priority: 90}, {type: RollbackPolicy, "
                           "priority: 10}]}"));
  EXPECT_TRUE(r.ok()) << r.message();
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0], "spec.precedence[1].type: unknown policy type \"RollbackPolicy\" is ignored");
  EXPECT_TRUE(validate(PE, base_object(PE)).warnings.empty());  // the default list is all known kinds
}

// SPEC §1.2 details: workloadTypes allows StrimziPodSet; scope is optional on namespaced kinds; `*`
// wildcards.
TEST(Validate, ScopeDetails) {
  EXPECT_TRUE(validate(PP, patched(PP, "spec: {scope: null}")).ok());
  EXPECT_TRUE(validate(PP, patched(PP, "spec: {scope: {workloadTypes: [StrimziPodSet]}}")).ok());
  EXPECT_TRUE(
      validate(CPP, patched(CPP,
                            "spec: {scope: {namespaceSelector: {operator: NotIn, values: [\"kube-*\", "
                            "prod]}}}"))
          .ok());
  EXPECT_FALSE(validate(CPP, patched(CPP, "spec: {scope: {namespaceSelector: {values: null}}}")).ok());
  auto r = validate(CPP, patched(CPP, "spec: {scope: {labelSelector: {matchLabels: {\"a b\": x}}}}"));
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.message().starts_with("spec.scope.labelSelector.matchLabels: invalid label key \"a b\""))
      << r.message();
  // `*` is only a wildcard in the consolidation nodeSelector (CON-1), not in workload label selectors.
  EXPECT_TRUE(
      validate(GCP, patched(GCP,
                            "spec: {nodeSelector: {matchExpressions: [{key: k, operator: NotIn, values: "
                            "[\"t4-*\"]}]}}"))
          .ok());
  EXPECT_FALSE(
      validate(CPP, patched(CPP,
                            "spec: {scope: {labelSelector: {matchExpressions: [{key: k, operator: In, "
                            "values: [\"t4-*\"]}]}}}"))
          .ok());
}

TEST(Validate, WrongTypesGiveFieldPathErrors) {  // VAL-4, "never throws"
  struct C {
    Kind kind;
    const char* patch;
    const char* message;
  };
  const C cases[] = {
      {CAS, "spec: {enablement: {gpu: {requests: {upsize: \"yes\"}}}}",
       "spec.enablement.gpu.requests.upsize: must be a boolean"},
      {CAS, "spec: {enablement: {gpu: 3}}", "spec.enablement.gpu: must be an object"},
      {CAS, "spec: {kai: {queue: 7}}", "spec.kai.queue: must be a string"},
      {CAS, "spec: {scheduling: {inclusionWindows: {start: a}}}",
       "spec.scheduling.inclusionWindows: must be a list"},
      {CPP, "spec: {weight: 1.5}", "spec.weight: must be an integer"},
      {CPP, "spec: {scope: {workloadTypes: Deployment}}", "spec.scope.workloadTypes: must be a list"},
      {CGRP, "spec: {minPodMetricsAge: 600}", "spec.minPodMetricsAge: must be a valid duration"},
      {CGRP, "spec: {metrics: []}", "spec.metrics: must be an object"},
      {CAS, "spec: {enablement: {gpu: {requests: {ceiling: [1]}}}}",
       "spec.enablement.gpu.requests.ceiling: must be a valid quantity"},
      {GC, "spec: {webhookProbe: {labels: {a: 1}}}", "spec.webhookProbe.labels.a: must be a string"},
      {PE, "spec: {precedence: [StaticPolicy]}", "spec.precedence[0]: must be an object"},
      {CPP, "spec: 42", "spec: must be an object"},
      {CPP, "metadata: []", "metadata: must be an object"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(validate(c.kind, patched(c.kind, c.patch)).message(), c.message) << c.patch;
  }
  EXPECT_EQ(validate(CPP, json::array()).message(), "the object must be a JSON object");
  EXPECT_EQ(validate(CPP, json("text")).message(), "the object must be a JSON object");
}

TEST(Validate, ValidateAnyDispatchesOnKind) {
  EXPECT_EQ(validate_any(json::object()).message(), "kind: required");
  EXPECT_EQ(validate_any(json{{"kind", 3}}).message(), "kind: must be a string");
  EXPECT_EQ(
      validate_any(json{{"kind", "Deployment"}}).message(),
      "kind: unsupported value \"Deployment\": supported values: \"AutomationStrategy\", "
      "\"ClusterAutomationStrategy\", \"ProactivePolicy\", \"ClusterProactivePolicy\", \"StaticPolicy\", "
      "\"ClusterStaticPolicy\", \"GpuReactivePolicy\", \"ClusterGpuReactivePolicy\", "
      "\"GpuConsolidationPolicy\", \"GlobalConfiguration\", \"PolicyEvaluation\"");
  json no_version = base_object(CPP);
  no_version.erase("apiVersion");
  EXPECT_EQ(validate_any(no_version).message(), "apiVersion: required");
  auto r = validate_any(patched(CGRP, "spec: {experimental: null}"));
  EXPECT_TRUE(r.contract);
  EXPECT_EQ(r.message(), "spec.experimental: required");
  // validate(kind) also accepts objects without apiVersion/kind (LIST items), and refuses another kind.
  json bare = base_object(CPP);
  bare.erase("apiVersion");
  bare.erase("kind");
  EXPECT_TRUE(validate(CPP, bare).ok());
  EXPECT_EQ(
      validate(PP, base_object(CPP)).message(),
      "kind: must be \"ProactivePolicy\"; spec.scope.namespaceSelector: not allowed on a namespaced policy, "
      "which only matches workloads in its own namespace");
}

// API-2: a defaulted object and the raw object validate the same way.
TEST(Validate, RawAndDefaultedObjectsValidateAlike) {
  for (const auto& info : all_kinds()) {
    json raw = base_object(info.kind);
    json defaulted = raw;
    apply_defaults(info.kind, defaulted);
    auto a = validate(info.kind, raw);
    auto b = validate(info.kind, defaulted);
    EXPECT_EQ(a.message(), b.message()) << info.name;
    EXPECT_EQ(a.warnings, b.warnings) << info.name;
  }
}

// ENG-2: absurdly deep documents are refused before anything walks them recursively.
TEST(Validate, DeeplyNestedObjectsAreRefused) {
  json obj = base_object(GC);
  json* cur = &obj["spec"]["webhookProbe"]["resources"];
  for (int i = 0; i < 100000; ++i) {
    (*cur)["x"] = json::object();
    cur = &(*cur)["x"];
  }
  auto r = validate(GC, obj);
  EXPECT_EQ(r.message(), "the object is nested more than 100 levels deep");
  auto p = parse_global_config(obj);
  EXPECT_FALSE(p.valid());
  EXPECT_EQ(p.value.spec.probe_resources_json, "");
  json ok = base_object(GC);
  ok["spec"]["webhookProbe"]["resources"] = {{"limits", {{"cpu", "1"}}}};
  EXPECT_TRUE(validate(GC, ok).ok());
}

// VAL-6 / ENG-2: nothing a user can write makes the validator throw or crash. Random structural mutations of
// every base object (values replaced by values of other types, fields removed, deep nesting).
TEST(Validate, NeverThrowsOnMutatedObjects) {
  std::mt19937 rng(12345);
  const json replacements[] = {nullptr,
                               true,
                               0,
                               -1,
                               3000000000LL,
                               1.5,
                               "",
                               "x",
                               "1m",
                               json::array(),
                               json::array({1, "a"}),
                               json::object(),
                               json{{"a", {{"b", nullptr}}}},
                               std::string("\xff\xfe")};
  for (const auto& info : all_kinds()) {
    json base = base_object(info.kind);
    apply_defaults(info.kind, base);
    std::vector<json::json_pointer> pointers;
    json flat = base.flatten();
    for (const auto& [p, v] : flat.items()) {
      (void)v;
      json::json_pointer ptr(p);
      while (!ptr.empty()) {
        pointers.push_back(ptr);
        ptr = ptr.parent_pointer();
      }
    }
    for (int round = 0; round < 300; ++round) {
      json obj = base;
      for (int m = 0; m < 3; ++m) {
        const auto& ptr = pointers[rng() % pointers.size()];
        if (!obj.contains(ptr)) continue;
        obj[ptr] = replacements[rng() % std::size(replacements)];
      }
      EXPECT_NO_THROW({
        auto r = validate(info.kind, obj);
        auto any = validate_any(obj);
        (void)r.message();
        (void)any.message();
      }) << obj.dump(-1, ' ', false, json::error_handler_t::replace);
    }
  }
}

}  // namespace
}  // namespace kubex::api
