// The cluster-wide kinds that manage no workloads: GpuConsolidationPolicy (SPEC §1.5), GlobalConfiguration
// (§1.6) and PolicyEvaluation (§1.7).
#include <nlohmann/json.hpp>
#include <set>

#include "api/objects.h"
#include "api/validate_util.h"

namespace kubex::api::detail {

namespace {

using nlohmann::json;

void check_string_map(Checker& c, const json& parent, std::string_view key, const std::string& path) {
  const json* m = c.object(parent, key, path);
  if (!m) return;
  for (const auto& [k, v] : m->items()) {
    if (!v.is_string() && !v.is_null()) c.error(path + "." + k, "must be a string");
  }
}

// A decimal string >= 0 as prices are written: digits with an optional fraction ("2.50", "0", "12").
bool is_decimal(const std::string& s) {
  std::size_t i = 0, digits = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    std::size_t frac = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++frac;
    if (frac == 0) return false;
  }
  return digits > 0 && i == s.size() && s.size() <= 32;
}

}  // namespace

void validate_consolidation_spec(Checker& c, const json& spec) {
  check_required_contract(c, spec);
  if (!Checker::find(spec, "nodeSelector")) {
    c.error("spec.nodeSelector", "required");
  } else {
    check_label_selector(c, spec, "nodeSelector", "spec.nodeSelector", true);
  }
  c.integer(spec, "utilizationThresholdPercent", "spec.utilizationThresholdPercent", 1, 100);
  c.duration(spec, "requeueAfter", "spec.requeueAfter", DurationRule::kAtLeast1s);
}

void validate_global_config_spec(Checker& c, const json& spec) {
  c.boolean(spec, "automationEnabled", "spec.automationEnabled");
  const std::string pp = "spec.protectedNamespacePatterns";
  if (const json* patterns = c.list(spec, "protectedNamespacePatterns", pp)) {
    for (std::size_t i = 0; i < patterns->size(); ++i) {
      if (!(*patterns)[i].is_string()) c.error(common::index_path(pp, i), "must be a string");
    }
  }
  if (const json* prom = c.object(spec, "prometheus", "spec.prometheus")) {
    if (auto url = c.string(*prom, "url", "spec.prometheus.url"); url && !is_http_url(*url)) {
      c.error("spec.prometheus.url", "must be an absolute http or https URL");
    }
    c.duration(*prom, "requestTimeout", "spec.prometheus.requestTimeout", DurationRule::kPositive);
  }
  c.duration(spec, "gpuReactiveCheckInterval", "spec.gpuReactiveCheckInterval", DurationRule::kAtLeast1m);
  c.duration(spec, "recommendationReloadInterval", "spec.recommendationReloadInterval",
             DurationRule::kAtLeast1m);
  c.duration(spec, "webhookOwnerResolutionRetryTimeout", "spec.webhookOwnerResolutionRetryTimeout",
             DurationRule::kPositiveMax5s);
  const std::string hp = "spec.webhookHealth";
  if (const json* health = c.object(spec, "webhookHealth", hp)) {
    c.integer(*health, "failureThreshold", hp + ".failureThreshold", 1);
    c.integer(*health, "successThreshold", hp + ".successThreshold", 1);
    c.duration(*health, "transitionCheckInterval", hp + ".transitionCheckInterval", DurationRule::kAtLeast1s);
  }
  const std::string wp = "spec.webhookProbe";
  if (const json* probe = c.object(spec, "webhookProbe", wp)) {
    c.string(*probe, "image", wp + ".image");
    check_string_map(c, *probe, "labels", wp + ".labels");
    check_string_map(c, *probe, "annotations", wp + ".annotations");
    for (const char* f : {"resources", "podSecurityContext", "securityContext"})
      c.object(*probe, f, wp + "." + f);
  }
  if (const json* kai = c.object(spec, "kai", "spec.kai")) {
    c.required_string(*kai, "schedulerName", "spec.kai.schedulerName");
    auto isolation = c.enumeration(*kai, "memoryIsolation", "spec.kai.memoryIsolation", {"None", "HAMiCore"});
    auto mode = c.enumeration(*kai, "gpuSharingMode", "spec.kai.gpuSharingMode",
                              {kSharingDisabled, kSharingNonMemoryEnforced, kSharingHamiCore, kSharingNvFractions});
    // KAI-1: gpuSharingMode wins. memoryIsolation defaults to None, so only HAMiCore can disagree.
    if (isolation && mode && *isolation == "HAMiCore" && *mode != kSharingHamiCore) {
      c.warn("spec.kai.memoryIsolation: \"HAMiCore\" disagrees with spec.kai.gpuSharingMode \"" + *mode +
             "\"; gpuSharingMode wins (memoryIsolation is deprecated)");
    }
    c.string(*kai, "reservationNamespace", "spec.kai.reservationNamespace");
  }
  if (const json* pro = c.object(spec, "proactive", "spec.proactive")) {
    const std::string cm = "spec.proactive.recommendationsConfigMap";
    if (const json* ref = c.object(*pro, "recommendationsConfigMap", cm)) {
      c.required_string(*ref, "namespace", cm + ".namespace");
      c.required_string(*ref, "name", cm + ".name");
    }
    c.integer(*pro, "headroomPercent", "spec.proactive.headroomPercent", 0, 100);
  }
  if (const json* con = c.object(spec, "consolidation", "spec.consolidation")) {  // CON-2a
    const std::string rp = "spec.consolidation.gpuMemoryReserve";
    if (const json* reserve = c.object(*con, "gpuMemoryReserve", rp)) {
      c.integer(*reserve, "percent", rp + ".percent", 0, 50);
      if (auto q = c.quantity(*reserve, "minimum", rp + ".minimum"); q && q->sign() < 0) {
        c.error(rp + ".minimum", "must be >= 0");
      }
    }
  }
  if (const json* report = c.object(spec, "report", "spec.report")) {  // RPT-2
    const std::string ip = "spec.report.idle";
    if (const json* idle = c.object(*report, "idle", ip)) {
      c.integer(*idle, "smPercent", ip + ".smPercent", 0, 100);
      c.integer(*idle, "memoryPercent", ip + ".memoryPercent", 0, 100);
      if (auto q = c.quantity(*idle, "minimumGpus", ip + ".minimumGpus"); q && q->sign() <= 0) {
        c.error(ip + ".minimumGpus", "must be > 0");
      }
    }
  }
  if (const json* cost = c.object(spec, "cost", "spec.cost")) {  // RPT-3
    const std::string pp = "spec.cost.gpuHourPrices";
    if (const json* prices = c.list(*cost, "gpuHourPrices", pp)) {
      for (std::size_t i = 0; i < prices->size(); ++i) {
        const std::string ip = common::index_path(pp, i);
        const json& e = (*prices)[i];
        if (!e.is_object()) {
          c.error(ip, "must be an object");
          continue;
        }
        check_label_selector(c, e, "nodeSelector", ip + ".nodeSelector", false);
        const json* price = Checker::find(e, "price");
        if (!price) {
          c.error(ip + ".price", "required");
        } else if (!price->is_string() || !is_decimal(price->get<std::string>())) {
          c.error(ip + ".price", "must be a decimal >= 0");
        }
        if (auto cur = c.string(e, "currency", ip + ".currency"); cur && cur->empty()) {
          c.error(ip + ".currency", "must not be empty");
        }
      }
    }
  }
  // Accepted for compatibility, no effect (VAL-2): these have no default, so any value warns.
  for (const char* f : {"rescanInterval", "mutationLogInterval", "snapshotInterval", "heartbeatInterval",
                        "proposalSyncInterval", "kubexAPIRequestTimeout"}) {
    const std::string p = std::string("spec.") + f;
    if (c.string(spec, f, p)) c.warn(p + ": accepted for compatibility, has no effect");
  }
  for (const char* f : {"proposalSyncEnabled", "suppressFetchRecommendations", "respectKubexAutomation"}) {
    const std::string p = std::string("spec.") + f;
    if (c.boolean(spec, f, p)) c.warn(p + ": accepted for compatibility, has no effect");
  }
}

void validate_policy_evaluation_spec(Checker& c, const json& spec) {
  const std::string p = "spec.precedence";
  const json* list = c.list(spec, "precedence", p);
  if (!list) return;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const std::string ip = common::index_path(p, i);
    const json& entry = (*list)[i];
    if (!entry.is_object()) {
      c.error(ip, "must be an object");
      continue;
    }
    auto type = c.required_string(entry, "type", ip + ".type");
    if (type) {
      if (!seen.insert(*type).second) {
        c.error(ip + ".type", "duplicate value " + quote(*type));
      } else {
        auto k = kind_from_name(*type);
        if (!k || !is_policy(*k)) c.warn(ip + ".type: unknown policy type " + quote(*type) + " is ignored");
      }
    }
    if (!Checker::find(entry, "priority")) {
      c.error(ip + ".priority", "required");
    } else {
      c.integer(entry, "priority", ip + ".priority", 0);
    }
  }
}

}  // namespace kubex::api::detail
