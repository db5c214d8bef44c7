// JSON -> typed objects (api/parse.h): SPEC defaults applied, best-effort values for invalid objects (RBK-4),
// never a throw.
#include "api/parse.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "api_test_util.h"
#include "common/duration.h"
#include "common/time_format.h"

namespace kubex::api {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using test::patched;
using test::yaml;

Quantity q(const char* s) {
  return *Quantity::parse(s);
}

TEST(Parse, SeedStrategy) {  // SPEC §1.1 with the guide's values
  auto p = parse_strategy(test::starter().at(0));
  ASSERT_TRUE(p.valid()) << p.report.message();
  const Strategy& s = p.value;
  EXPECT_EQ(s.kind, Kind::kClusterAutomationStrategy);
  EXPECT_EQ(s.meta.name, "kai-gpu-sharing");
  EXPECT_TRUE(s.spec.has_experimental);
  EXPECT_EQ(s.spec.gpu_kai_contract, "v1alpha1-2026-07");
  EXPECT_TRUE(s.spec.kai_mode());
  EXPECT_TRUE(s.spec.gpu_requests.upsize);
  EXPECT_TRUE(s.spec.gpu_requests.downsize);
  EXPECT_FALSE(s.spec.gpu_requests.set_from_unspecified);
  ASSERT_TRUE(s.spec.gpu_requests.bounds.ceiling);
  EXPECT_EQ(*s.spec.gpu_requests.bounds.ceiling, Quantity(1));
  EXPECT_FALSE(s.spec.gpu_requests.bounds.floor);
  EXPECT_TRUE(s.spec.has_kai);
  EXPECT_TRUE(s.spec.has_vllm);
  EXPECT_EQ(s.spec.vllm_buffer_percent, 10);
  EXPECT_EQ(s.spec.kai_queue, "kubex-unlimited-gpu-queue");  // default
  EXPECT_FALSE(s.spec.in_place_resize_enabled);
  EXPECT_TRUE(s.spec.pod_eviction_enabled);
  // Defaults of everything the guide leaves out.
  EXPECT_TRUE(s.spec.cpu_requests.upsize && s.spec.cpu_requests.set_from_unspecified);
  EXPECT_FALSE(s.spec.cpu_limits.set_from_unspecified);
  EXPECT_TRUE(s.spec.memory_limits.set_from_unspecified);
  EXPECT_EQ(s.spec.safety.min_ready_duration, 10s);
  EXPECT_EQ(s.spec.safety.resize_retry_interval, 30s);
  EXPECT_TRUE(s.spec.safety.enable_pause_until_annotation_check);
  EXPECT_TRUE(s.spec.retry_pod_disruption_budget);
}

TEST(Parse, StrategyContainerBoundsAndWindows) {
  auto p = parse_strategy(yaml(R"(
apiVersion: rightsizing.kubex.ai/v1alpha1
kind: AutomationStrategy
metadata: {name: s, namespace: ml, generation: 4, labels: {team: a}}
spec:
  enablement:
    gpu:
      requests:
        floor: "250m"
        containers: {app: {floor: "0.1", ceiling: 2}}
    memory:
      limits: {ceiling: 4Gi, upsize: false}
  safetyChecks: {minReadyDuration: 1m30s, requireOwnerPodsReady: true}
  scheduling:
    exclusionWindows: [{name: night, start: "22:00", end: "24:00", weekdays: [Sat, Sun]}]
status:
  conditions:
  - {type: Valid, status: "True", reason: Valid, message: ok, observedGeneration: 4,
     lastTransitionTime: "2026-11-29T22:24:48Z"}
  - {status: "False"}
  - 7
)"));
  ASSERT_TRUE(p.valid()) << p.report.message();
  const Strategy& s = p.value;
  EXPECT_EQ(s.kind, Kind::kAutomationStrategy);
  EXPECT_EQ(s.meta.ns, "ml");
  EXPECT_EQ(s.meta.generation, 4);
  EXPECT_EQ(s.meta.labels.at("team"), "a");
  EXPECT_EQ(*s.spec.gpu_requests.bounds.floor, q("0.25"));
  EXPECT_EQ(*s.spec.gpu_requests.containers.at("app").floor, q("100m"));
  EXPECT_EQ(*s.spec.gpu_requests.containers.at("app").ceiling, Quantity(2));
  EXPECT_EQ(*s.spec.memory_limits.bounds.ceiling, q("4Gi"));
  EXPECT_FALSE(s.spec.memory_limits.upsize);
  EXPECT_TRUE(s.spec.memory_limits.downsize);
  EXPECT_EQ(s.spec.safety.min_ready_duration, 90s);
  EXPECT_TRUE(s.spec.safety.require_owner_pods_ready);
  EXPECT_FALSE(s.spec.has_kai);
  ASSERT_EQ(s.spec.exclusion_windows.size(), 1u);
  EXPECT_EQ(s.spec.exclusion_windows[0].timezone, "UTC");
  EXPECT_EQ(s.spec.exclusion_windows[0].weekdays, (std::vector<std::string>{"Sat", "Sun"}));
  ASSERT_EQ(s.conditions.size(), 1u);  // entries without a type, and non-objects, are skipped
  EXPECT_EQ(s.conditions[0].type, "Valid");
  EXPECT_EQ(s.conditions[0].observed_generation, 4);
  EXPECT_EQ(s.conditions[0].last_transition_time, "2026-11-29T22:24:48Z");
}

TEST(Parse, SeedPolicies) {  // SPEC §1.2, §1.4
  auto base = parse_policy(test::starter().at(1));
  ASSERT_TRUE(base.valid()) << base.report.message();
  EXPECT_TRUE(base.scope_evaluates);
  EXPECT_EQ(base.value.kind, Kind::kClusterProactivePolicy);
  const PolicyCommon& c = base.value.common();
  EXPECT_EQ(c.strategy_ref, "kai-gpu-sharing");
  EXPECT_TRUE(c.scope.has_namespace_selector);
  EXPECT_EQ(c.scope.namespace_operator, "In");
  EXPECT_EQ(c.scope.namespace_values, (std::vector<std::string>{"*"}));
  EXPECT_TRUE(c.scope.label_selector.present);
  EXPECT_EQ(c.scope.label_selector.match_labels.at("nvidia.com/gpu.present"), "true");
  EXPECT_EQ(c.scope.workload_types, (std::vector<std::string>{"Deployment"}));
  EXPECT_EQ(base.value.proactive.max_analysis_age_days, 5);

  auto r = parse_policy(test::starter().at(2));
  ASSERT_TRUE(r.valid()) << r.report.message();
  const ReactiveSpec& rs = r.value.reactive;
  EXPECT_EQ(r.value.kind, Kind::kClusterGpuReactivePolicy);
  EXPECT_EQ(rs.common.strategy_ref, "kai-gpu-sharing");
  EXPECT_EQ(rs.gpu_kai_contract, "v1alpha1-2026-07");
  EXPECT_EQ(rs.min_pod_metrics_age, 10min);
  EXPECT_EQ(rs.compute.prometheus.metric, "kubex_gpu_container_sm_utilization_percent");
  EXPECT_EQ(rs.compute.prometheus.interpretation, "fullGPU");
  EXPECT_EQ(rs.memory.prometheus.interpretation, "currentAllocation");
  EXPECT_EQ(rs.memory.prometheus.container_label, "container");
  EXPECT_EQ(rs.compute.upsize.threshold_percent, 100);
  EXPECT_EQ(rs.compute.upsize.metrics_window, 2min);
  EXPECT_EQ(rs.compute.upsize.max_percent, 200);
  EXPECT_EQ(rs.memory.scale_back.threshold_percent, 75);
  EXPECT_EQ(rs.memory.scale_back.metrics_window, 10min);
}

TEST(Parse, StaticPolicyResources) {  // SPEC §1.3
  auto p = parse_policy(test::base_object(Kind::kStaticPolicy));
  ASSERT_TRUE(p.valid()) << p.report.message();
  const auto& star = p.value.static_spec.containers.at("*");
  EXPECT_EQ(*star.cpu_request, q("250m"));
  EXPECT_EQ(*star.memory_request, q("512Mi"));
  EXPECT_EQ(*star.gpu_request, q("0.5"));
  EXPECT_EQ(*star.cpu_limit, Quantity(1));
  EXPECT_EQ(*star.memory_limit, q("1Gi"));
  const auto& app = p.value.static_spec.containers.at("app");
  EXPECT_EQ(*app.gpu_request, q("0.25"));
  EXPECT_FALSE(app.cpu_request);
  EXPECT_EQ(p.value.common().scope.workload_types, default_workload_types());  // scope absent: defaults
  EXPECT_FALSE(p.value.common().scope.present);
}

// RBK-4: an invalid policy still yields its values; scope_evaluates tells whether its scope can hold
// workloads.
TEST(Parse, InvalidPoliciesAreBestEffort) {
  auto p = parse_policy(
      patched(Kind::kClusterGpuReactivePolicy,
              "spec: {experimental: null, metrics: {compute: {upsize: {thresholdPercent: 0}}}}"));
  EXPECT_FALSE(p.valid());
  EXPECT_TRUE(p.report.contract);
  EXPECT_TRUE(p.scope_evaluates);
  EXPECT_EQ(p.value.reactive.compute.upsize.threshold_percent, 0);  // as written
  EXPECT_EQ(p.value.common().scope.namespace_values, (std::vector<std::string>{"*"}));

  p = parse_policy(
      patched(Kind::kClusterProactivePolicy, "spec: {scope: {namespaceSelector: {values: []}}}"));
  EXPECT_FALSE(p.valid());
  EXPECT_FALSE(p.scope_evaluates);
  p = parse_policy(patched(Kind::kClusterProactivePolicy, "spec: {scope: null}"));
  EXPECT_FALSE(p.scope_evaluates);
  p = parse_policy(patched(Kind::kClusterProactivePolicy, "spec: {automationStrategyRef: null}"));
  EXPECT_FALSE(p.valid());
  EXPECT_TRUE(p.scope_evaluates);
  EXPECT_EQ(p.value.common().strategy_ref, "");
  p = parse_policy(patched(Kind::kProactivePolicy, "spec: {weight: bad}"));
  EXPECT_FALSE(p.valid());
  EXPECT_EQ(p.value.common().weight, 0);  // wrong type: the default
  EXPECT_TRUE(p.scope_evaluates);
}

TEST(Parse, ClusterKinds) {  // SPEC §1.5-1.7
  auto c = parse_consolidation_policy(test::consolidation_example());
  ASSERT_TRUE(c.valid()) << c.report.message();
  EXPECT_EQ(c.value.meta.name, "gpu-consolidation-pool-a");
  EXPECT_EQ(c.value.spec.node_selector.match_labels.at("cloud.google.com/gke-accelerator"),
            "nvidia-tesla-t4");
  EXPECT_EQ(c.value.spec.utilization_threshold_percent, 75);
  EXPECT_EQ(c.value.spec.requeue_after, 1min);
  json with_status = test::consolidation_example();
  with_status["status"] = {
      {"poolNodes", 3}, {"gpuCapacity", 3}, {"gpuAllocated", "1.50"}, {"drainingNode", "n2"}};
  c = parse_consolidation_policy(with_status);
  EXPECT_EQ(c.value.status.pool_nodes, 3);
  EXPECT_EQ(c.value.status.gpu_allocated, "1.50");
  EXPECT_EQ(c.value.status.draining_node, "n2");

  auto g = parse_global_config(yaml(R"(
apiVersion: rightsizing.kubex.ai/v1alpha1
kind: GlobalConfiguration
metadata: {name: global-config}
spec:
  automationEnabled: false
  prometheus: {url: "http://prom:9090"}
  kai: {memoryIsolation: HAMiCore}
  webhookProbe: {image: engine:1, labels: {a: b}, resources: {requests: {cpu: 10m}}}
  proactive: {recommendationsConfigMap: {namespace: kubex, name: recs}}
)"));
  ASSERT_TRUE(g.valid()) << g.report.message();
  EXPECT_FALSE(g.value.spec.automation_enabled);
  EXPECT_EQ(g.value.spec.prometheus_url, "http://prom:9090");
  EXPECT_EQ(g.value.spec.prometheus_request_timeout, 30s);
  EXPECT_EQ(g.value.spec.kai_memory_isolation, "HAMiCore");
  EXPECT_EQ(g.value.spec.kai_scheduler_name, "kai-scheduler");
  EXPECT_EQ(g.value.spec.probe_image, "engine:1");
  EXPECT_EQ(g.value.spec.probe_labels.at("a"), "b");
  EXPECT_EQ(json::parse(g.value.spec.probe_resources_json), json::parse(R"({"requests":{"cpu":"10m"}})"));
  EXPECT_EQ(g.value.spec.probe_security_context_json, "");
  EXPECT_TRUE(g.value.spec.has_recommendations_config_map);
  EXPECT_EQ(g.value.spec.recommendations_config_map_name, "recs");
  EXPECT_EQ(g.value.spec.protected_namespace_patterns,
            (std::vector<std::string>{"kube-*", "openshift-*", "gmp-*"}));

  auto wrong_name = parse_global_config(patched(Kind::kGlobalConfiguration, "metadata: {name: other}"));
  EXPECT_FALSE(wrong_name.valid());  // API-4: rejected and ignored
  EXPECT_EQ(wrong_name.report.message(), "metadata.name: must be \"global-config\"");

  auto pe = parse_policy_evaluation(test::base_object(Kind::kPolicyEvaluation));
  ASSERT_TRUE(pe.valid());
  EXPECT_EQ(pe.value.priority_of(Kind::kGpuReactivePolicy), 120);
  EXPECT_EQ(pe.value.priority_of(Kind::kClusterProactivePolicy), 70);
  pe = parse_policy_evaluation(patched(Kind::kPolicyEvaluation,
                                       "spec: {precedence: [{type: StaticPolicy, priority: "
                                       "5}, {type: RollbackPolicy, priority: 9}]}"));
  ASSERT_TRUE(pe.valid());
  EXPECT_EQ(pe.report.warnings.size(), 1u);
  EXPECT_EQ(pe.value.priority_of(Kind::kStaticPolicy), 5);
  EXPECT_EQ(pe.value.priority_of(Kind::kGpuReactivePolicy), 0);  // missing from the list: 0 (§1.7)
}

TEST(Parse, MetaFields) {
  ObjectMeta m = parse_meta(yaml(R"(
metadata:
  name: p
  namespace: ns
  uid: 123
  resourceVersion: "77"
  generation: 3
  creationTimestamp: "2026-11-29T22:24:48Z"
  deletionTimestamp: "2026-11-29T22:30:00Z"
  finalizers: [rightsizing.kubex.ai/consolidation-cleanup]
)"));
  EXPECT_EQ(m.name, "p");
  EXPECT_EQ(m.uid, "");  // not a string
  EXPECT_EQ(m.resource_version, "77");
  EXPECT_EQ(m.generation, 3);
  EXPECT_EQ(m.created, *common::parse_rfc3339("2026-11-29T22:24:48Z"));
  EXPECT_TRUE(m.deleting);
  EXPECT_EQ(m.finalizers.size(), 1u);
  EXPECT_EQ(parse_meta(json("x")).name, "");
}

TEST(Parse, NeverThrows) {  // ENG-2
  const json inputs[] = {
      nullptr,
      json::array(),
      7,
      "s",
      json::object(),
      json{{"spec", 1}},
      json{{"kind", "StaticPolicy"}, {"spec", {{"resources", {{"containers", 5}}}}}},
      json{{"kind", "ClusterAutomationStrategy"}, {"spec", {{"enablement", {{"gpu", {{"requests", 1}}}}}}}},
      json{{"metadata", {{"labels", {{"a", 1}}}}}, {"status", {{"conditions", "x"}}}}};
  for (const auto& in : inputs) {
    EXPECT_NO_THROW({
      (void)parse_strategy(in);
      (void)parse_policy(in);
      (void)parse_consolidation_policy(in);
      (void)parse_global_config(in);
      (void)parse_policy_evaluation(in);
      (void)parse_meta(in);
      (void)parse_conditions(in);
    }) << in.dump();
  }
  EXPECT_FALSE(parse_policy(json::array()).valid());
}

}  // namespace
}  // namespace kubex::api
