// GpuConsolidationPolicy, GlobalConfiguration and PolicyEvaluation JSON -> typed objects (SPEC §1.5-1.7).
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

// Shared shape of the three parsers: validate the raw object, then read a defaulted copy. Never throws.
template <class T, class Read>
Parsed<T> parse_kind(Kind k, const json& obj, Read read) {
  Parsed<T> out;
  out.report = validate(k, obj);
  if (exceeds_depth(obj)) return out;  // refused by the validator; nothing is read
  try {
    json d = obj.is_object() ? obj : json::object();
    apply_defaults(k, d);
    out.value.meta = parse_meta(d);
    out.value.conditions = parse_conditions(d);
    read(child_object(d, "spec"), d, out.value);
  } catch (const std::exception& e) {
    out.report.errors.add("", std::string("internal parse error: ") + e.what());
  }
  return out;
}

std::string compact(const json& parent, std::string_view key) {
  const json* v = child(parent, key);
  return v && v->is_object() ? v->dump(-1, ' ', false, json::error_handler_t::replace) : "";
}

}  // namespace

Parsed<ConsolidationPolicy> parse_consolidation_policy(const nlohmann::json& obj) {
  return parse_kind<ConsolidationPolicy>(
      Kind::kGpuConsolidationPolicy, obj, [](const json& spec, const json& whole, ConsolidationPolicy& p) {
        ConsolidationSpec& s = p.spec;
        if (const json* exp = child(spec, "experimental"); exp && exp->is_object()) {
          s.has_experimental = true;
          s.gpu_kai_contract = read_string(*exp, "gpuKaiContract");
        }
        s.node_selector = read_selector(spec, "nodeSelector");
        s.utilization_threshold_percent =
            read_int32(spec, "utilizationThresholdPercent", s.utilization_threshold_percent);
        s.requeue_after = read_duration(spec, "requeueAfter", s.requeue_after);
        const json& st = child_object(whole, "status");
        ConsolidationStatus& t = p.status;
        t.pool_nodes = read_int64(st, "poolNodes", 0);
        t.gpu_capacity = read_int64(st, "gpuCapacity", 0);
        t.estimated_reclaimable_gpus = read_int64(st, "estimatedReclaimableGPUs", 0);
        t.gpu_allocated = read_string(st, "gpuAllocated");
        t.draining_node = read_string(st, "drainingNode");
        t.drain_start_time = read_string(st, "drainStartTime");
        t.last_drained_node = read_string(st, "lastDrainedNode");
        t.last_drain_time = read_string(st, "lastDrainTime");
        t.last_evaluation_time = read_string(st, "lastEvaluationTime");
      });
}

Parsed<GlobalConfig> parse_global_config(const nlohmann::json& obj) {
  return parse_kind<GlobalConfig>(
      Kind::kGlobalConfiguration, obj, [](const json& spec, const json&, GlobalConfig& g) {
        GlobalConfigSpec& s = g.spec;
        s.automation_enabled = read_bool(spec, "automationEnabled", s.automation_enabled);
        if (const json* p = child(spec, "protectedNamespacePatterns"); p && p->is_array()) {
          s.protected_namespace_patterns = read_strings(spec, "protectedNamespacePatterns");
        }
        const json& prom = child_object(spec, "prometheus");
        s.prometheus_url = read_string(prom, "url", s.prometheus_url);
        s.prometheus_request_timeout = read_duration(prom, "requestTimeout", s.prometheus_request_timeout);
        s.gpu_reactive_check_interval =
            read_duration(spec, "gpuReactiveCheckInterval", s.gpu_reactive_check_interval);
        s.recommendation_reload_interval =
            read_duration(spec, "recommendationReloadInterval", s.recommendation_reload_interval);
        s.webhook_owner_resolution_retry_timeout = read_duration(spec, "webhookOwnerResolutionRetryTimeout",
                                                                 s.webhook_owner_resolution_retry_timeout);
        const json& health = child_object(spec, "webhookHealth");
        s.webhook_failure_threshold = read_int32(health, "failureThreshold", s.webhook_failure_threshold);
        s.webhook_success_threshold = read_int32(health, "successThreshold", s.webhook_success_threshold);
        s.webhook_transition_check_interval =
            read_duration(health, "transitionCheckInterval", s.webhook_transition_check_interval);
        const json& probe = child_object(spec, "webhookProbe");
        s.probe_image = read_string(probe, "image");
        s.probe_labels = read_string_map(probe, "labels");
        s.probe_annotations = read_string_map(probe, "annotations");
        s.probe_resources_json = compact(probe, "resources");
        s.probe_pod_security_context_json = compact(probe, "podSecurityContext");
        s.probe_security_context_json = compact(probe, "securityContext");
        const json& kai = child_object(spec, "kai");
        s.kai_scheduler_name = read_string(kai, "schedulerName", s.kai_scheduler_name);
        s.kai_memory_isolation = read_string(kai, "memoryIsolation", s.kai_memory_isolation);
        s.kai_gpu_sharing_mode = read_string(kai, "gpuSharingMode");
        s.kai_reservation_namespace = read_string(kai, "reservationNamespace", s.kai_reservation_namespace);
        const json& pro = child_object(spec, "proactive");
        if (const json* cm = child(pro, "recommendationsConfigMap"); cm && cm->is_object()) {
          s.has_recommendations_config_map = true;
          s.recommendations_config_map_namespace = read_string(*cm, "namespace");
          s.recommendations_config_map_name = read_string(*cm, "name");
        }
        s.proactive_headroom_percent = read_int32(pro, "headroomPercent", s.proactive_headroom_percent);
        const json& reserve = child_object(child_object(spec, "consolidation"), "gpuMemoryReserve");
        s.gpu_memory_reserve_percent = read_int32(reserve, "percent", s.gpu_memory_reserve_percent);
        if (auto q = read_quantity(reserve, "minimum"); q && q->milli_value() >= 0) {
          s.gpu_memory_reserve_minimum_bytes = q->milli_value() / 1000;
        }
        const json& idle = child_object(child_object(spec, "report"), "idle");  // RPT-2
        s.report_idle_sm_percent = read_int32(idle, "smPercent", s.report_idle_sm_percent);
        s.report_idle_memory_percent = read_int32(idle, "memoryPercent", s.report_idle_memory_percent);
        if (auto q = read_quantity(idle, "minimumGpus"); q && q->milli_value() > 0) {
          s.report_idle_minimum_gpus_milli = q->milli_value();
        }
        if (const json* prices = child(child_object(spec, "cost"), "gpuHourPrices"); prices && prices->is_array()) {
          for (const json& e : *prices) {  // RPT-3
            if (!e.is_object()) continue;
            GpuHourPrice price;
            price.node_selector = read_selector(e, "nodeSelector");
            price.currency = read_string(e, "currency", price.currency);
            try {
              price.price = std::stod(read_string(e, "price", "0"));
            } catch (...) {
              continue;  // invalid (VAL-1 says so); never priced
            }
            s.gpu_hour_prices.push_back(std::move(price));
          }
        }
      });
}

Parsed<PolicyEvaluation> parse_policy_evaluation(const nlohmann::json& obj) {
  return parse_kind<PolicyEvaluation>(Kind::kPolicyEvaluation, obj,
                                      [](const json& spec, const json&, PolicyEvaluation& pe) {
                                        const json* list = child(spec, "precedence");
                                        if (!list || !list->is_array()) return;
                                        pe.precedence.clear();
                                        for (const auto& e : *list) {
                                          if (!e.is_object()) continue;
                                          PrecedenceEntry entry;
                                          entry.type = read_string(e, "type");
                                          entry.priority = read_int32(e, "priority", 0);
                                          if (entry.type.empty()) continue;
                                          bool seen = false;  // a repeated type keeps its first priority
                                          for (const auto& p : pe.precedence)
                                            seen = seen || p.type == entry.type;
                                          if (!seen) pe.precedence.push_back(std::move(entry));
                                        }
                                      });
}

}  // namespace kubex::api
