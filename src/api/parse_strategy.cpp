// AutomationStrategy / ClusterAutomationStrategy JSON -> api::Strategy (SPEC §1.1).
#include <exception>
#include <nlohmann/json.hpp>

#include "api/defaults.h"
#include "api/parse.h"
#include "api/parse_util.h"
#include "api/validate_util.h"

namespace kubex::api {

namespace {

using namespace detail;  // NOLINT(google-build-using-namespace): implementation file
using nlohmann::json;

Bounds read_bounds(const json& obj) {
  return {read_quantity(obj, "floor"), read_quantity(obj, "ceiling")};
}

void read_gates(const json& parent, std::string_view key, Gates& g) {
  const json& o = child_object(parent, key);
  g.upsize = read_bool(o, "upsize", g.upsize);
  g.downsize = read_bool(o, "downsize", g.downsize);
  g.set_from_unspecified = read_bool(o, "setFromUnspecified", g.set_from_unspecified);
  g.bounds = read_bounds(o);
  for (const auto& [name, entry] : child_object(o, "containers").items()) {
    if (entry.is_object()) g.containers[name] = read_bounds(entry);
  }
}

std::vector<TimeWindow> read_windows(const json& sched, std::string_view key) {
  std::vector<TimeWindow> out;
  const json* list = child(sched, key);
  if (!list || !list->is_array()) return out;
  for (const auto& w : *list) {
    if (!w.is_object()) continue;
    TimeWindow t;
    t.name = read_string(w, "name");
    t.timezone = read_string(w, "timezone", t.timezone);
    t.start = read_string(w, "start");
    t.end = read_string(w, "end");
    t.weekdays = read_strings(w, "weekdays");
    out.push_back(std::move(t));
  }
  return out;
}

StrategySpec read_strategy_spec(const json& spec) {
  StrategySpec s;
  if (const json* exp = child(spec, "experimental"); exp && exp->is_object()) {
    s.has_experimental = true;
    s.gpu_kai_contract = read_string(*exp, "gpuKaiContract");
  }
  const json& en = child_object(spec, "enablement");
  s.override_scheduler = read_string(en, "overrideScheduler", s.override_scheduler);
  read_gates(child_object(en, "gpu"), "requests", s.gpu_requests);
  read_gates(child_object(en, "cpu"), "requests", s.cpu_requests);
  read_gates(child_object(en, "cpu"), "limits", s.cpu_limits);
  read_gates(child_object(en, "memory"), "requests", s.memory_requests);
  read_gates(child_object(en, "memory"), "limits", s.memory_limits);
  if (const json* kai = child(spec, "kai"); kai && kai->is_object()) {
    s.has_kai = true;
    s.kai_queue = read_string(*kai, "queue", s.kai_queue);
    s.set_queue_when_specified = read_bool(*kai, "setQueueWhenSpecified", s.set_queue_when_specified);
    if (const json* vllm = child(*kai, "vllm"); vllm && vllm->is_object()) {
      s.has_vllm = true;
      s.vllm_buffer_percent = read_int32(*vllm, "gpuMemoryUtilizationBufferPercent", s.vllm_buffer_percent);
    }
    const json& limit = child_object(*kai, "fractionLimit");
    s.fraction_limit_enabled = read_bool(limit, "enabled", s.fraction_limit_enabled);
    s.fraction_limit_headroom_percent =
        read_int32(limit, "headroomPercent", s.fraction_limit_headroom_percent);
    s.fraction_limit_ceiling = read_quantity(limit, "ceiling");
  }
  const json& ipr = child_object(spec, "inPlaceResize");
  s.in_place_resize_enabled = read_bool(ipr, "enabled", s.in_place_resize_enabled);
  s.in_place_container_restart = read_bool(ipr, "containerRestart", s.in_place_container_restart);
  const json& pe = child_object(spec, "podEviction");
  s.pod_eviction_enabled = read_bool(pe, "enabled", s.pod_eviction_enabled);
  s.retry_pod_disruption_budget = read_bool(pe, "retryPodDisruptionBudget", s.retry_pod_disruption_budget);
  const json& sc = child_object(spec, "safetyChecks");
  SafetyChecks& f = s.safety;
  f.enable_pause_until_annotation_check =
      read_bool(sc, "enablePauseUntilAnnotationCheck", f.enable_pause_until_annotation_check);
  f.min_ready_duration = read_duration(sc, "minReadyDuration", f.min_ready_duration);
  f.require_owner_pods_ready = read_bool(sc, "requireOwnerPodsReady", f.require_owner_pods_ready);
  f.respect_workload_max_unavailable =
      read_bool(sc, "respectWorkloadMaxUnavailable", f.respect_workload_max_unavailable);
  f.resize_retry_interval = read_duration(sc, "resizeRetryInterval", f.resize_retry_interval);
  f.enable_resource_quota_filter = read_bool(sc, "enableResourceQuotaFilter", f.enable_resource_quota_filter);
  f.enable_hpa_filter = read_bool(sc, "enableHpaFilter", f.enable_hpa_filter);
  f.enable_vpa_filter = read_bool(sc, "enableVpaFilter", f.enable_vpa_filter);
  f.enable_limit_range_filter = read_bool(sc, "enableLimitRangeFilter", f.enable_limit_range_filter);
  f.enable_pod_limit_range_filter =
      read_bool(sc, "enablePodLimitRangeFilter", f.enable_pod_limit_range_filter);
  f.require_node_allocatable = read_bool(sc, "requireNodeAllocatable", f.require_node_allocatable);
  f.block_resize_on_vpa_controlled_resources =
      read_bool(sc, "blockResizeOnVpaControlledResources", f.block_resize_on_vpa_controlled_resources);
  f.retain_guaranteed_qos = read_bool(sc, "retainGuaranteedQOS", f.retain_guaranteed_qos);
  f.min_cpu_change_percent = read_int32(sc, "minCpuChangePercent", f.min_cpu_change_percent);
  f.min_memory_change_percent = read_int32(sc, "minMemoryChangePercent", f.min_memory_change_percent);
  f.node_cpu_headroom = read_string(sc, "nodeCpuHeadroom", f.node_cpu_headroom);
  f.node_memory_headroom = read_string(sc, "nodeMemoryHeadroom", f.node_memory_headroom);
  const json& sched = child_object(spec, "scheduling");
  s.inclusion_windows = read_windows(sched, "inclusionWindows");
  s.exclusion_windows = read_windows(sched, "exclusionWindows");
  return s;
}

}  // namespace

Parsed<Strategy> parse_strategy(const nlohmann::json& obj, const ValidationContext& ctx) {
  Parsed<Strategy> out;
  auto k = kind_of(obj);
  out.value.kind = k && is_strategy(*k) ? *k : Kind::kAutomationStrategy;
  out.report = validate(out.value.kind, obj, ctx);
  if (exceeds_depth(obj)) return out;  // refused by the validator; nothing is read
  try {
    json d = obj.is_object() ? obj : json::object();
    apply_defaults(out.value.kind, d);
    out.value.meta = parse_meta(d);
    out.value.spec = read_strategy_spec(child_object(d, "spec"));
    out.value.conditions = parse_conditions(d);
  } catch (const std::exception& e) {
    out.report.errors.add("", std::string("internal parse error: ") + e.what());
  }
  return out;
}

}  // namespace kubex::api
