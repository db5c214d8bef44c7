// The six managing policy kinds JSON -> api::Policy (SPEC §1.2-1.4).
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

PolicyCommon read_common(const json& spec) {
  PolicyCommon c;
  c.strategy_ref = read_string(child_object(spec, "automationStrategyRef"), "name");
  c.weight = read_int32(spec, "weight", c.weight);
  if (const json* scope = child(spec, "scope"); scope && scope->is_object()) {
    Scope& s = c.scope;
    s.present = true;
    if (const json* ns = child(*scope, "namespaceSelector"); ns && ns->is_object()) {
      s.has_namespace_selector = true;
      s.namespace_operator = read_string(*ns, "operator");
      s.namespace_values = read_strings(*ns, "values");
    }
    s.label_selector = read_selector(*scope, "labelSelector");
    if (const json* types = child(*scope, "workloadTypes"); types && types->is_array()) {
      s.workload_types = read_strings(*scope, "workloadTypes");
    }
  }
  return c;
}

void read_signal(const json& metrics, std::string_view key, SignalConfig& s) {
  const json& sig = child_object(metrics, key);
  const json& prom = child_object(sig, "prometheus");
  s.prometheus.metric = read_string(prom, "metric");
  s.prometheus.interpretation = read_string(prom, "interpretation", s.prometheus.interpretation);
  s.prometheus.namespace_label = read_string(prom, "namespaceLabel");
  s.prometheus.pod_label = read_string(prom, "podLabel");
  s.prometheus.container_label = read_string(prom, "containerLabel");
  const json& up = child_object(sig, "upsize");
  s.upsize.threshold_percent = read_int32(up, "thresholdPercent", s.upsize.threshold_percent);
  s.upsize.metrics_window = read_duration(up, "metricsWindow", s.upsize.metrics_window);
  s.upsize.headroom_percent = read_int32(up, "headroomPercent", s.upsize.headroom_percent);
  s.upsize.max_percent = read_int32(up, "maxPercent", s.upsize.max_percent);
  const json& sb = child_object(sig, "scaleBack");
  s.scale_back.threshold_percent = read_int32(sb, "thresholdPercent", s.scale_back.threshold_percent);
  s.scale_back.metrics_window = read_duration(sb, "metricsWindow", s.scale_back.metrics_window);
  s.scale_back.headroom_percent = read_int32(sb, "headroomPercent", s.scale_back.headroom_percent);
}

std::map<std::string, StaticResources> read_static(const json& spec) {
  std::map<std::string, StaticResources> out;
  for (const auto& [name, entry] : child_object(child_object(spec, "resources"), "containers").items()) {
    if (!entry.is_object()) continue;
    StaticResources r;
    const json& req = child_object(entry, "requests");
    const json& lim = child_object(entry, "limits");
    r.cpu_request = read_quantity(req, "cpu");
    r.memory_request = read_quantity(req, "memory");
    r.gpu_request = read_quantity(req, "gpu");
    r.cpu_limit = read_quantity(lim, "cpu");
    r.memory_limit = read_quantity(lim, "memory");
    r.gpu_limit = read_quantity(lim, "gpu");
    out[name] = r;
  }
  return out;
}

// RBK-4: an invalid policy still holds the workloads its scope matches, unless the scope itself is unusable.
bool scope_usable(const ValidationReport& r) {
  for (const auto& e : r.errors.items()) {
    if (e.path == "spec" || e.path == "spec.scope" || e.path.starts_with("spec.scope.")) return false;
  }
  return true;
}

}  // namespace

PolicyParse parse_policy(const nlohmann::json& obj, const ValidationContext& ctx) {
  PolicyParse out;
  auto k = kind_of(obj);
  out.value.kind = k && is_policy(*k) ? *k : Kind::kStaticPolicy;
  out.report = validate(out.value.kind, obj, ctx);
  if (exceeds_depth(obj)) {  // refused by the validator; nothing is read
    out.scope_evaluates = false;
    return out;
  }
  try {
    json d = obj.is_object() ? obj : json::object();
    apply_defaults(out.value.kind, d);
    out.value.meta = parse_meta(d);
    out.value.conditions = parse_conditions(d);
    const json& spec = child_object(d, "spec");
    PolicyCommon common = read_common(spec);
    const Kind kind = out.value.kind;
    if (is_proactive(kind)) {
      out.value.proactive.common = common;
      out.value.proactive.max_analysis_age_days =
          read_int32(child_object(spec, "safetyChecks"), "maxAnalysisAgeDays",
                     out.value.proactive.max_analysis_age_days);
    } else if (is_static(kind)) {
      out.value.static_spec.common = common;
      out.value.static_spec.containers = read_static(spec);
    } else {
      ReactiveSpec& r = out.value.reactive;
      r.common = common;
      if (const json* exp = child(spec, "experimental"); exp && exp->is_object()) {
        r.has_experimental = true;
        r.gpu_kai_contract = read_string(*exp, "gpuKaiContract");
      }
      r.min_pod_metrics_age = read_duration(spec, "minPodMetricsAge", r.min_pod_metrics_age);
      read_signal(child_object(spec, "metrics"), "compute", r.compute);
      read_signal(child_object(spec, "metrics"), "memory", r.memory);
    }
    out.scope_evaluates = (!k || is_policy(*k)) && scope_usable(out.report);
  } catch (const std::exception& e) {
    out.report.errors.add("", std::string("internal parse error: ") + e.what());
    out.scope_evaluates = false;
  }
  return out;
}

}  // namespace kubex::api
