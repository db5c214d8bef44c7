// Typed rightsizing.kubex.ai/v1alpha1 objects (SPEC §1), as the engine decides with them: every field of the
// CRD schemas, with the SPEC defaults already applied (the engine re-applies CRD defaults in memory, API-2).
// Produced by api/parse.h from JSON that passed api/validate.h; fields marked "accepted, no effect" in SPEC
// are parsed (so the parity test sees them) but nothing reads them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/kinds.h"
#include "common/clock.h"
#include "common/quantity.h"

namespace kubex::api {

using common::Duration;
using common::Quantity;
using common::TimePoint;

// The metadata kubex reads.
struct ObjectMeta {
  std::string name, ns, uid, resource_version;
  std::int64_t generation = 0;
  TimePoint created{};
  bool deleting = false;  // deletionTimestamp set
  std::vector<std::string> finalizers;
  std::map<std::string, std::string> labels;
};

// status.conditions[] entry (API-1).
struct Condition {
  std::string type, status, reason, message;  // status: True | False | Unknown
  std::int64_t observed_generation = 0;
  std::string last_transition_time;  // RFC 3339
};

// metav1.LabelSelector, kept as parsed requirements. `*` wildcards apply only where SPEC allows them
// (GpuConsolidationPolicy nodeSelector In/NotIn values).
struct SelectorRequirement {
  std::string key, op;  // In NotIn Exists DoesNotExist
  std::vector<std::string> values;
};
struct LabelSelector {
  bool present = false;  // the field was set
  std::map<std::string, std::string> match_labels;
  std::vector<SelectorRequirement> match_expressions;
};

// ---------------------------------------------------------------- AutomationStrategy (SPEC §1.1)

struct Bounds {
  std::optional<Quantity> floor, ceiling;
};

// One `enablement.<resource>.<usage>` block.
struct Gates {
  bool upsize = true, downsize = true, set_from_unspecified = true;
  Bounds bounds;
  std::map<std::string, Bounds> containers;  // containers.<name>.{floor,ceiling}
};

struct TimeWindow {  // accepted, no effect
  std::string name, timezone = "UTC", start, end;
  std::vector<std::string> weekdays;
};

struct SafetyChecks {
  bool enable_pause_until_annotation_check = true;
  Duration min_ready_duration = std::chrono::seconds(10);
  bool require_owner_pods_ready = false;
  bool respect_workload_max_unavailable = true;
  Duration resize_retry_interval = std::chrono::seconds(30);
  // Accepted, no effect.
  bool enable_resource_quota_filter = true, enable_hpa_filter = true, enable_vpa_filter = true,
       enable_limit_range_filter = true, enable_pod_limit_range_filter = true, require_node_allocatable = true;
  bool block_resize_on_vpa_controlled_resources = false, retain_guaranteed_qos = false;
  std::int32_t min_cpu_change_percent = 5, min_memory_change_percent = 5;
  std::string node_cpu_headroom = "10%", node_memory_headroom = "200Mi";
};

struct StrategySpec {
  bool has_experimental = false;
  std::string gpu_kai_contract;  // "" when absent
  std::string override_scheduler = "none";  // none | kai
  Gates gpu_requests{false, false, false, {}, {}};
  Gates cpu_requests{true, true, true, {}, {}};
  Gates cpu_limits{true, true, false, {}, {}};
  Gates memory_requests{true, true, true, {}, {}};
  Gates memory_limits{true, true, true, {}, {}};
  bool has_kai = false;  // spec.kai present
  std::string kai_queue = "kubex-unlimited-gpu-queue";
  bool set_queue_when_specified = false;
  bool has_vllm = false;  // spec.kai.vllm present: turns on the VLM rules
  std::int32_t vllm_buffer_percent = 0;
  // spec.kai.fractionLimit (KAI-2): the burst limit of a fraction under NvFractions.
  // KAI-2a: on unless the strategy sets spec.kai.fractionLimit.enabled: false (then every kubex-written
  // fraction under NvFractions is a hard memory cap, and the strategy is warned about it).
  bool fraction_limit_enabled = true;
  std::int32_t fraction_limit_headroom_percent = 50;
  std::optional<Quantity> fraction_limit_ceiling;  // absent: 1
  bool in_place_resize_enabled = true, in_place_container_restart = false;
  bool pod_eviction_enabled = true, retry_pod_disruption_budget = true;
  SafetyChecks safety;
  std::vector<TimeWindow> inclusion_windows, exclusion_windows;  // accepted, no effect

  bool kai_mode() const { return override_scheduler == "kai"; }
};

struct Strategy {
  Kind kind = Kind::kAutomationStrategy;  // or kClusterAutomationStrategy
  ObjectMeta meta;
  StrategySpec spec;
  std::vector<Condition> conditions;
};

// ---------------------------------------------------------------- policies (SPEC §1.2–1.4)

inline const std::vector<std::string>& default_workload_types() {
  static const std::vector<std::string> v = {"Deployment", "StatefulSet", "CronJob",   "Rollout",
                                             "Job",        "AnalysisRun", "DaemonSet", "Model"};
  return v;
}

struct Scope {
  bool present = false;
  bool has_namespace_selector = false;
  std::string namespace_operator;  // In | NotIn
  std::vector<std::string> namespace_values;  // `*` wildcards
  LabelSelector label_selector;               // against WORKLOAD labels; absent = everything
  std::vector<std::string> workload_types = default_workload_types();
};

// What every policy kind shares.
struct PolicyCommon {
  std::string strategy_ref;  // spec.automationStrategyRef.name
  Scope scope;
  std::int32_t weight = 0;
};

struct ProactiveSpec {
  PolicyCommon common;
  std::int32_t max_analysis_age_days = 5;  // spec.safetyChecks.maxAnalysisAgeDays
};

// spec.resources.containers.<name|"*">: requests.{cpu,memory,gpu}, limits.{cpu,memory,gpu} (limits.gpu: the
// KAI-2 burst limit).
struct StaticResources {
  std::optional<Quantity> cpu_request, memory_request, gpu_request, cpu_limit, memory_limit, gpu_limit;
};
struct StaticSpec {
  PolicyCommon common;
  std::map<std::string, StaticResources> containers;  // key "*" or a container name
};

struct PrometheusSignal {
  std::string metric;
  std::string interpretation = "fullGPU";  // fullGPU | currentAllocation
  std::string namespace_label, pod_label, container_label;
};
struct UpsizeRule {
  std::int32_t threshold_percent = 120;
  Duration metrics_window = std::chrono::minutes(10);
  std::int32_t headroom_percent = 20;
  std::int32_t max_percent = 200;
};
struct ScaleBackRule {
  std::int32_t threshold_percent = 80;
  Duration metrics_window = std::chrono::minutes(10);
  std::int32_t headroom_percent = 20;
};
struct SignalConfig {
  PrometheusSignal prometheus;
  UpsizeRule upsize;
  ScaleBackRule scale_back;
};
struct ReactiveSpec {
  PolicyCommon common;
  bool has_experimental = false;
  std::string gpu_kai_contract;
  Duration min_pod_metrics_age = std::chrono::minutes(15);
  SignalConfig compute, memory;
};

// One policy of any of the six managing kinds. Exactly one of the specs is meaningful, chosen by `kind`.
struct Policy {
  Kind kind = Kind::kStaticPolicy;
  ObjectMeta meta;
  ProactiveSpec proactive;
  StaticSpec static_spec;
  ReactiveSpec reactive;
  std::vector<Condition> conditions;

  const PolicyCommon& common() const;
};

// ---------------------------------------------------------------- GpuConsolidationPolicy (SPEC §1.5)

struct ConsolidationSpec {
  bool has_experimental = false;
  std::string gpu_kai_contract;
  LabelSelector node_selector;  // `*` wildcards in In/NotIn values
  std::int32_t utilization_threshold_percent = 75;
  Duration requeue_after = std::chrono::minutes(1);
};

struct ConsolidationStatus {
  std::int64_t pool_nodes = 0, gpu_capacity = 0, estimated_reclaimable_gpus = 0;
  std::string gpu_allocated;  // 2 decimals
  std::string draining_node, drain_start_time, last_drained_node, last_drain_time, last_evaluation_time;
};

struct ConsolidationPolicy {
  ObjectMeta meta;
  ConsolidationSpec spec;
  ConsolidationStatus status;
  std::vector<Condition> conditions;
};

// ---------------------------------------------------------------- GlobalConfiguration (SPEC §1.6)

// One spec.cost.gpuHourPrices[] entry (RPT-3).
struct GpuHourPrice {
  LabelSelector node_selector;
  double price = 0;          // per GPU-hour
  std::string currency = "USD";
};

struct GlobalConfigSpec {
  bool automation_enabled = true;
  std::vector<std::string> protected_namespace_patterns = {"kube-*", "openshift-*", "gmp-*"};
  std::string prometheus_url = "http://kubex-prometheus-server.kubex.svc";
  Duration prometheus_request_timeout = std::chrono::seconds(30);
  Duration gpu_reactive_check_interval = std::chrono::minutes(1);
  Duration recommendation_reload_interval = std::chrono::hours(1);
  Duration webhook_owner_resolution_retry_timeout = std::chrono::seconds(1);
  std::int32_t webhook_failure_threshold = 2, webhook_success_threshold = 3;
  Duration webhook_transition_check_interval = std::chrono::seconds(10);
  // spec.webhookProbe: the probe pod template (WHH-1), kept as JSON text of each sub-object ("" = absent).
  std::string probe_image;
  std::map<std::string, std::string> probe_labels, probe_annotations;
  std::string probe_resources_json, probe_pod_security_context_json, probe_security_context_json;
  std::string kai_scheduler_name = "kai-scheduler";
  std::string kai_memory_isolation = "None";  // None | HAMiCore (deprecated by kai_gpu_sharing_mode)
  std::string kai_gpu_sharing_mode;           // "" when absent: derived (gpu_sharing_mode(), KAI-1)
  std::string kai_reservation_namespace = "kai-resource-reservation";
  bool has_recommendations_config_map = false;
  std::string recommendations_config_map_namespace, recommendations_config_map_name;
  std::int32_t proactive_headroom_percent = 20;
  // spec.consolidation.gpuMemoryReserve (CON-2a).
  std::int32_t gpu_memory_reserve_percent = 3;
  std::int64_t gpu_memory_reserve_minimum_bytes = 256LL * 1024 * 1024;
  // spec.report.idle (RPT-2): a workload holding at least minimumGpus whose p95 SM use stays under smPercent % of
  // a GPU and whose memory footprint stays under memoryPercent % of what it holds is idle.
  std::int32_t report_idle_sm_percent = 5, report_idle_memory_percent = 10;
  std::int64_t report_idle_minimum_gpus_milli = 250;
  // spec.cost.gpuHourPrices (RPT-3): the first entry whose nodeSelector matches a node prices its GPUs.
  std::vector<GpuHourPrice> gpu_hour_prices;
};

// KAI-1: the cluster's KAI sharing mode, `Disabled`, `NonMemoryEnforced`, `HamiCore` or `NvFractions`:
// spec.kai.gpuSharingMode, else derived from memoryIsolation (HAMiCore -> HamiCore, otherwise
// NonMemoryEnforced).
inline constexpr const char* kSharingDisabled = "Disabled";
inline constexpr const char* kSharingNonMemoryEnforced = "NonMemoryEnforced";
inline constexpr const char* kSharingHamiCore = "HamiCore";
inline constexpr const char* kSharingNvFractions = "NvFractions";
// A view of `g` or of a constant: valid as long as `g` is.
inline std::string_view gpu_sharing_mode(const GlobalConfigSpec& g) {
  if (!g.kai_gpu_sharing_mode.empty()) return g.kai_gpu_sharing_mode;
  return g.kai_memory_isolation == "HAMiCore" ? kSharingHamiCore : kSharingNonMemoryEnforced;
}

// The static constant naming `mode` (one of the four above), or "unknown" for any other text.
inline std::string_view canonical_sharing_mode(std::string_view mode) {
  for (const char* m : {kSharingDisabled, kSharingNonMemoryEnforced, kSharingHamiCore, kSharingNvFractions}) {
    if (mode == m) return m;
  }
  return "unknown";
}

struct GlobalConfig {
  ObjectMeta meta;
  GlobalConfigSpec spec;
  std::vector<Condition> conditions;
};

// ---------------------------------------------------------------- PolicyEvaluation (SPEC §1.7)

struct PrecedenceEntry {
  std::string type;
  std::int32_t priority = 0;
};

inline const std::vector<PrecedenceEntry>& default_precedence() {
  static const std::vector<PrecedenceEntry> v = {
      {"GpuReactivePolicy", 120}, {"ClusterGpuReactivePolicy", 110}, {"StaticPolicy", 90},
      {"ClusterStaticPolicy", 90}, {"ProactivePolicy", 70},          {"ClusterProactivePolicy", 70}};
  return v;
}

struct PolicyEvaluation {
  ObjectMeta meta;
  std::vector<PrecedenceEntry> precedence = default_precedence();
  std::vector<Condition> conditions;

  // The priority of a kind; 0 when the kind is not listed (SPEC §1.7).
  std::int32_t priority_of(Kind k) const;
};

}  // namespace kubex::api
