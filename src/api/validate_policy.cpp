// The six managing policy kinds (SPEC §1.2-1.4): ProactivePolicy, StaticPolicy, GpuReactivePolicy and their
// Cluster* counterparts.
#include <nlohmann/json.hpp>
#include <set>

#include "api/objects.h"
#include "api/validate_util.h"

namespace kubex::api::detail {

namespace {

using nlohmann::json;
using common::Quantity;

constexpr std::initializer_list<const char*> kWorkloadTypes = {"Deployment", "StatefulSet", "CronJob",
                                                               "Rollout",    "Job",         "AnalysisRun",
                                                               "DaemonSet",  "Model",       "StrimziPodSet"};

void check_scope(Checker& c, const json& spec, bool cluster) {
  const std::string p = "spec.scope";
  const json* scope = c.object(spec, "scope", p);
  if (!scope) {
    if (cluster && !c.has_error_at(p)) c.error(p, "required");
    return;
  }
  const std::string nsp = p + ".namespaceSelector";
  const json* ns = c.object(*scope, "namespaceSelector", nsp);
  if (!cluster) {
    if (ns || c.has_error_at(nsp)) {
      c.error(nsp, "not allowed on a namespaced policy, which only matches workloads in its own namespace");
    }
  } else if (!ns) {
    if (!c.has_error_at(nsp)) c.error(nsp, "required");
  } else {
    if (!Checker::find(*ns, "operator")) {
      c.error(nsp + ".operator", "required");
    } else {
      c.enumeration(*ns, "operator", nsp + ".operator", {"In", "NotIn"});
    }
    const std::string vp = nsp + ".values";
    const json* values = c.list(*ns, "values", vp);
    if (!values) {
      if (!c.has_error_at(vp)) c.error(vp, "must contain at least 1 item");
    } else {
      if (values->empty()) c.error(vp, "must contain at least 1 item");
      for (std::size_t i = 0; i < values->size(); ++i) {
        if (!(*values)[i].is_string()) c.error(common::index_path(vp, i), "must be a string");
      }
    }
  }
  check_label_selector(c, *scope, "labelSelector", p + ".labelSelector", false);
  const std::string wp = p + ".workloadTypes";
  if (const json* types = c.list(*scope, "workloadTypes", wp)) {
    std::set<std::string> seen;
    for (std::size_t i = 0; i < types->size(); ++i) {
      const std::string ip = common::index_path(wp, i);
      json holder = {{"t", (*types)[i]}};
      auto t = c.enumeration(holder, "t", ip, kWorkloadTypes);
      if ((*types)[i].is_null()) c.error(ip, "must be a string");
      if (t && !seen.insert(*t).second) c.error(ip, "duplicate value " + quote(*t));
    }
  }
}

void check_common(Checker& c, const json& spec, bool cluster) {
  const std::string rp = "spec.automationStrategyRef";
  const json* ref = c.object(spec, "automationStrategyRef", rp);
  if (ref) {
    c.required_string(*ref, "name", rp + ".name");
  } else if (!c.has_error_at(rp)) {
    c.error(rp + ".name", "required");
  }
  check_scope(c, spec, cluster);
  c.integer(spec, "weight", "spec.weight", 0);
}

// A valid requests.gpu of a static entry (> 0), for the limits.gpu comparison.
std::optional<Quantity> valid_gpu_request(const json& entry) {
  const json* requests = Checker::find(entry, "requests");
  const json* gpu = requests && requests->is_object() ? Checker::find(*requests, "gpu") : nullptr;
  if (!gpu || gpu->is_null()) return std::nullopt;
  auto parsed = Quantity::from_json(*gpu);
  std::optional<Quantity> q;
  if (parsed) q = *parsed;
  if (!q || q->sign() <= 0) return std::nullopt;
  return q;
}

void check_static_usage(Checker& c, const json& entry, const char* usage, const std::string& path,
                        const ValidationContext& ctx) {
  const std::string up = path + "." + usage;
  const json* block = c.object(entry, usage, up);
  if (!block) return;
  const bool limits = std::string_view(usage) == "limits";
  for (const auto& [resource, value] : block->items()) {
    const std::string rp = up + "." + resource;
    if (value.is_null()) continue;
    if (resource != "cpu" && resource != "memory" && resource != "gpu") {
      c.error(rp, "must be one of cpu, memory, gpu");
      continue;
    }
    auto q = c.quantity(*block, resource, rp);
    if (!q) continue;
    if (resource == "gpu" && q->sign() <= 0) {
      c.error(rp, "must be > 0");
    } else if (q->sign() < 0) {
      c.error(rp, "must be >= 0");
    } else if (limits && resource == "gpu") {  // KAI-2: the burst limit lies above the request
      if (auto request = valid_gpu_request(entry); request && !(*request < *q)) {
        c.error(rp, "must be greater than requests.gpu");
      } else {
        warn_unless_nv_fractions(c, ctx, rp);
      }
    }
  }
}

void check_static(Checker& c, const json& spec, const ValidationContext& ctx) {
  const json* res = c.object(spec, "resources", "spec.resources");
  if (!res) return;
  const std::string cp = "spec.resources.containers";
  const json* containers = c.object(*res, "containers", cp);
  if (!containers) return;
  for (const auto& [name, entry] : containers->items()) {
    const std::string ep = cp + "." + name;
    if (entry.is_null()) continue;
    if (!entry.is_object()) {
      c.error(ep, "must be an object");
      continue;
    }
    check_static_usage(c, entry, "requests", ep, ctx);
    check_static_usage(c, entry, "limits", ep, ctx);
  }
}

void check_signal(Checker& c, const json& metrics, const char* name) {
  const std::string p = std::string("spec.metrics.") + name;
  const json* sig = c.object(metrics, name, p);
  if (!sig) {
    if (!c.has_error_at(p)) c.error(p, "required");
    return;
  }
  const std::string pp = p + ".prometheus";
  if (const json* prom = c.object(*sig, "prometheus", pp)) {
    if (auto m = c.required_string(*prom, "metric", pp + ".metric"); m && !is_prometheus_metric_name(*m)) {
      c.error(pp + ".metric", "must match ^[A-Za-z_:][A-Za-z0-9_:]*$");
    }
    c.enumeration(*prom, "interpretation", pp + ".interpretation", {"fullGPU", "currentAllocation"});
    for (const char* label : {"namespaceLabel", "podLabel", "containerLabel"}) {
      const std::string lp = pp + "." + label;
      if (auto l = c.required_string(*prom, label, lp); l && !is_prometheus_label_name(*l)) {
        c.error(lp, "must match ^[A-Za-z_][A-Za-z0-9_]*$");
      }
    }
  } else if (!c.has_error_at(pp)) {
    c.error(pp, "required");
  }
  const std::string upp = p + ".upsize";
  if (const json* up = c.object(*sig, "upsize", upp)) {
    c.integer(*up, "thresholdPercent", upp + ".thresholdPercent", 1);
    c.duration(*up, "metricsWindow", upp + ".metricsWindow", DurationRule::kAtLeast1m);
    c.integer(*up, "headroomPercent", upp + ".headroomPercent", 0);
    c.integer(*up, "maxPercent", upp + ".maxPercent", 1);
  }
  const std::string sbp = p + ".scaleBack";
  if (const json* sb = c.object(*sig, "scaleBack", sbp)) {
    c.integer(*sb, "thresholdPercent", sbp + ".thresholdPercent", 1);
    c.duration(*sb, "metricsWindow", sbp + ".metricsWindow", DurationRule::kAtLeast1m);
    c.integer(*sb, "headroomPercent", sbp + ".headroomPercent", 0);
  }
}

void check_reactive(Checker& c, const json& spec) {
  c.duration(spec, "minPodMetricsAge", "spec.minPodMetricsAge", DurationRule::kZeroOr1m);
  const json* metrics = c.object(spec, "metrics", "spec.metrics");
  if (!metrics) {
    if (!c.has_error_at("spec.metrics")) c.error("spec.metrics", "required");
    return;
  }
  check_signal(c, *metrics, "compute");
  check_signal(c, *metrics, "memory");
}

}  // namespace

void warn_unless_nv_fractions(Checker& c, const ValidationContext& ctx, const std::string& path) {
  if (ctx.gpu_sharing_mode && *ctx.gpu_sharing_mode != kSharingNvFractions) {
    c.warn(path + " has no effect unless spec.kai.gpuSharingMode is \"NvFractions\" (the cluster's mode is \"" +
           *ctx.gpu_sharing_mode + "\")");
  }
}

void validate_policy_spec(Checker& c, Kind kind, const json& spec, const ValidationContext& ctx) {
  const bool cluster = is_cluster_policy(kind);
  if (is_reactive(kind)) check_required_contract(c, spec);
  check_common(c, spec, cluster);
  if (is_proactive(kind)) {
    if (const json* sc = c.object(spec, "safetyChecks", "spec.safetyChecks")) {
      c.integer(*sc, "maxAnalysisAgeDays", "spec.safetyChecks.maxAnalysisAgeDays", 1);
    }
  } else if (is_static(kind)) {
    check_static(c, spec, ctx);
  } else {
    check_reactive(c, spec);
  }
}

}  // namespace kubex::api::detail
