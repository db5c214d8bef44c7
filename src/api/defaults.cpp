// The field catalogue of every rightsizing.kubex.ai kind (what charts/kubex-crds declares, field by field)
// and in-memory defaulting from it. tests/unit/api/parity_test.cpp compares this catalogue with the CRD YAML.
#include "api/defaults.h"

#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <utility>

#include "api/objects.h"

namespace kubex::api {

namespace {

using nlohmann::json;

class Catalogue {
 public:
  void add(const std::string& path, const char* type, std::string default_json = "") {
    fields_.push_back({path, type, std::move(default_json)});
  }
  void object(const std::string& path, bool default_empty = false) {
    add(path, "object", default_empty ? "{}" : "");
  }
  void boolean(const std::string& path, std::optional<bool> def = std::nullopt) {
    add(path, "boolean", def ? (*def ? "true" : "false") : "");
  }
  void integer(const std::string& path, std::optional<long long> def = std::nullopt) {
    add(path, "integer", def ? std::to_string(*def) : "");
  }
  void string(const std::string& path, const char* def = nullptr) {
    add(path, "string", def ? json(def).dump() : "");
  }
  void quantity(const std::string& path) { add(path, "int-or-string"); }
  void array(const std::string& path, std::string def = "") { add(path, "array", std::move(def)); }

  // metav1.LabelSelector.
  void label_selector(const std::string& p) {
    object(p);
    object(p + ".matchLabels");
    string(p + ".matchLabels.*");
    array(p + ".matchExpressions");
    object(p + ".matchExpressions[]");
    string(p + ".matchExpressions[].key");
    string(p + ".matchExpressions[].operator");
    array(p + ".matchExpressions[].values");
    string(p + ".matchExpressions[].values[]");
  }

  void bounds(const std::string& p) {
    quantity(p + ".floor");
    quantity(p + ".ceiling");
  }

  // One `enablement.<resource>.<usage>` block (SPEC §1.1).
  void gates(const std::string& p, bool up, bool down, bool unspecified) {
    object(p, true);
    boolean(p + ".upsize", up);
    boolean(p + ".downsize", down);
    boolean(p + ".setFromUnspecified", unspecified);
    bounds(p);
    object(p + ".containers");
    object(p + ".containers.*");
    bounds(p + ".containers.*");
  }

  // status with conditions (API-1) and observedGeneration.
  void status() {
    object("status");
    array("status.conditions");
    object("status.conditions[]");
    string("status.conditions[].type");
    string("status.conditions[].status");
    string("status.conditions[].reason");
    string("status.conditions[].message");
    integer("status.conditions[].observedGeneration");
    string("status.conditions[].lastTransitionTime");
    integer("status.observedGeneration");
  }

  std::vector<FieldInfo> take() { return std::move(fields_); }

 private:
  std::vector<FieldInfo> fields_;
};

void strategy(Catalogue& c) {
  c.object("spec", true);
  c.object("spec.experimental");
  c.string("spec.experimental.gpuKaiContract");
  c.object("spec.enablement", true);
  c.string("spec.enablement.overrideScheduler", "none");
  c.object("spec.enablement.gpu", true);
  c.gates("spec.enablement.gpu.requests", false, false, false);
  c.object("spec.enablement.cpu", true);
  c.gates("spec.enablement.cpu.requests", true, true, true);
  c.gates("spec.enablement.cpu.limits", true, true, false);
  c.object("spec.enablement.memory", true);
  c.gates("spec.enablement.memory.requests", true, true, true);
  c.gates("spec.enablement.memory.limits", true, true, true);
  c.object("spec.kai");
  c.string("spec.kai.queue", "kubex-unlimited-gpu-queue");
  c.boolean("spec.kai.setQueueWhenSpecified", false);
  c.object("spec.kai.vllm");
  c.integer("spec.kai.vllm.gpuMemoryUtilizationBufferPercent", 0);
  c.object("spec.kai.fractionLimit");
  c.boolean("spec.kai.fractionLimit.enabled");  // KAI-2a: unset = on under NvFractions
  c.integer("spec.kai.fractionLimit.headroomPercent", 50);
  c.add("spec.kai.fractionLimit.ceiling", "int-or-string", "\"1\"");
  c.object("spec.inPlaceResize", true);
  c.boolean("spec.inPlaceResize.enabled", true);
  c.boolean("spec.inPlaceResize.containerRestart", false);
  c.object("spec.podEviction", true);
  c.boolean("spec.podEviction.enabled", true);
  c.boolean("spec.podEviction.retryPodDisruptionBudget", true);
  const std::string s = "spec.safetyChecks";
  c.object(s, true);
  c.boolean(s + ".enablePauseUntilAnnotationCheck", true);
  c.string(s + ".minReadyDuration", "10s");
  c.boolean(s + ".requireOwnerPodsReady", false);
  c.boolean(s + ".respectWorkloadMaxUnavailable", true);
  c.string(s + ".resizeRetryInterval", "30s");
  for (const char* f : {"enableResourceQuotaFilter", "enableHpaFilter", "enableVpaFilter",
                        "enableLimitRangeFilter", "enablePodLimitRangeFilter", "requireNodeAllocatable"}) {
    c.boolean(s + "." + f, true);
  }
  c.boolean(s + ".blockResizeOnVpaControlledResources", false);
  c.boolean(s + ".retainGuaranteedQOS", false);
  c.integer(s + ".minCpuChangePercent", 5);
  c.integer(s + ".minMemoryChangePercent", 5);
  c.string(s + ".nodeCpuHeadroom", "10%");
  c.string(s + ".nodeMemoryHeadroom", "200Mi");
  c.object("spec.scheduling");
  for (const char* w : {"inclusionWindows", "exclusionWindows"}) {
    const std::string p = std::string("spec.scheduling.") + w;
    c.array(p);
    c.object(p + "[]");
    c.string(p + "[].name");
    c.string(p + "[].timezone", "UTC");
    c.array(p + "[].weekdays");
    c.string(p + "[].weekdays[]");
    c.string(p + "[].start");
    c.string(p + "[].end");
  }
  c.status();
}

void policy_common(Catalogue& c, bool cluster) {
  c.object("spec.automationStrategyRef");
  c.string("spec.automationStrategyRef.name");
  c.object("spec.scope");
  if (cluster) {
    c.object("spec.scope.namespaceSelector");
    c.string("spec.scope.namespaceSelector.operator");
    c.array("spec.scope.namespaceSelector.values");
    c.string("spec.scope.namespaceSelector.values[]");
  }
  c.label_selector("spec.scope.labelSelector");
  c.array("spec.scope.workloadTypes", json(default_workload_types()).dump());
  c.string("spec.scope.workloadTypes[]");
  c.integer("spec.weight", 0);
}

void policy_status(Catalogue& c) {
  c.status();
  c.integer("status.matchedWorkloads");
  c.string("status.lastEvaluationTime");
}

void proactive(Catalogue& c, bool cluster) {
  c.object("spec");
  policy_common(c, cluster);
  c.object("spec.safetyChecks", true);
  c.integer("spec.safetyChecks.maxAnalysisAgeDays", 5);
  policy_status(c);
  c.integer("status.recommendedWorkloads");  // PRO-8
}

void static_policy(Catalogue& c, bool cluster) {
  c.object("spec");
  policy_common(c, cluster);
  c.object("spec.resources");
  c.object("spec.resources.containers");
  c.object("spec.resources.containers.*");
  c.object("spec.resources.containers.*.requests");
  c.quantity("spec.resources.containers.*.requests.*");
  c.object("spec.resources.containers.*.limits");
  c.quantity("spec.resources.containers.*.limits.*");
  policy_status(c);
}

void signal(Catalogue& c, const std::string& p) {
  c.object(p);
  c.object(p + ".prometheus");
  c.string(p + ".prometheus.metric");
  c.string(p + ".prometheus.interpretation", "fullGPU");
  c.string(p + ".prometheus.namespaceLabel");
  c.string(p + ".prometheus.podLabel");
  c.string(p + ".prometheus.containerLabel");
  c.object(p + ".upsize", true);
  c.integer(p + ".upsize.thresholdPercent", 120);
  c.string(p + ".upsize.metricsWindow", "10m");
  c.integer(p + ".upsize.headroomPercent", 20);
  c.integer(p + ".upsize.maxPercent", 200);
  c.object(p + ".scaleBack", true);
  c.integer(p + ".scaleBack.thresholdPercent", 80);
  c.string(p + ".scaleBack.metricsWindow", "10m");
  c.integer(p + ".scaleBack.headroomPercent", 20);
}

void reactive(Catalogue& c, bool cluster) {
  c.object("spec");
  c.object("spec.experimental");
  c.string("spec.experimental.gpuKaiContract");
  policy_common(c, cluster);
  c.string("spec.minPodMetricsAge", "15m");
  c.object("spec.metrics");
  signal(c, "spec.metrics.compute");
  signal(c, "spec.metrics.memory");
  policy_status(c);
}

void consolidation(Catalogue& c) {
  c.object("spec");
  c.object("spec.experimental");
  c.string("spec.experimental.gpuKaiContract");
  c.label_selector("spec.nodeSelector");
  c.integer("spec.utilizationThresholdPercent", 75);
  c.string("spec.requeueAfter", "1m");
  c.status();
  for (const char* f : {"poolNodes", "gpuCapacity"}) c.integer(std::string("status.") + f);
  c.string("status.gpuAllocated");
  c.integer("status.estimatedReclaimableGPUs");
  for (const char* f :
       {"drainingNode", "drainStartTime", "lastDrainedNode", "lastDrainTime", "lastEvaluationTime"}) {
    c.string(std::string("status.") + f);
  }
  c.array("status.gpuModels");
  c.object("status.gpuModels[]");
  c.string("status.gpuModels[].product");
  c.integer("status.gpuModels[].nodes");
}

void global_config(Catalogue& c) {
  c.object("spec", true);
  c.boolean("spec.automationEnabled", true);
  c.array("spec.protectedNamespacePatterns", R"(["kube-*","openshift-*","gmp-*"])");
  c.string("spec.protectedNamespacePatterns[]");
  c.object("spec.prometheus", true);
  c.string("spec.prometheus.url", "http://kubex-prometheus-server.kubex.svc");
  c.string("spec.prometheus.requestTimeout", "30s");
  c.string("spec.gpuReactiveCheckInterval", "1m");
  c.string("spec.recommendationReloadInterval", "1h");
  c.string("spec.webhookOwnerResolutionRetryTimeout", "1s");
  c.object("spec.webhookHealth", true);
  c.integer("spec.webhookHealth.failureThreshold", 2);
  c.integer("spec.webhookHealth.successThreshold", 3);
  c.string("spec.webhookHealth.transitionCheckInterval", "10s");
  c.object("spec.webhookProbe");
  c.string("spec.webhookProbe.image");
  c.object("spec.webhookProbe.labels");
  c.string("spec.webhookProbe.labels.*");
  c.object("spec.webhookProbe.annotations");
  c.string("spec.webhookProbe.annotations.*");
  c.object("spec.webhookProbe.resources");
  c.object("spec.webhookProbe.podSecurityContext");
  c.object("spec.webhookProbe.securityContext");
  c.object("spec.kai", true);
  c.string("spec.kai.schedulerName", "kai-scheduler");
  c.string("spec.kai.memoryIsolation", "None");
  c.string("spec.kai.gpuSharingMode");
  c.string("spec.kai.reservationNamespace", "kai-resource-reservation");
  c.object("spec.proactive", true);
  c.object("spec.proactive.recommendationsConfigMap");
  c.string("spec.proactive.recommendationsConfigMap.namespace");
  c.string("spec.proactive.recommendationsConfigMap.name");
  c.integer("spec.proactive.headroomPercent", 20);
  c.object("spec.consolidation", true);
  c.object("spec.consolidation.gpuMemoryReserve", true);
  c.integer("spec.consolidation.gpuMemoryReserve.percent", 3);
  c.add("spec.consolidation.gpuMemoryReserve.minimum", "int-or-string", "\"256Mi\"");
  c.object("spec.report", true);  // RPT-2
  c.object("spec.report.idle", true);
  c.integer("spec.report.idle.smPercent", 5);
  c.integer("spec.report.idle.memoryPercent", 10);
  c.add("spec.report.idle.minimumGpus", "int-or-string", "\"0.25\"");
  c.object("spec.cost");  // RPT-3
  c.array("spec.cost.gpuHourPrices");
  c.object("spec.cost.gpuHourPrices[]");
  c.label_selector("spec.cost.gpuHourPrices[].nodeSelector");
  c.string("spec.cost.gpuHourPrices[].price");
  c.string("spec.cost.gpuHourPrices[].currency", "USD");
  for (const char* f : {"rescanInterval", "mutationLogInterval", "snapshotInterval", "heartbeatInterval",
                        "proposalSyncInterval", "kubexAPIRequestTimeout"}) {
    c.string(std::string("spec.") + f);
  }
  for (const char* f : {"proposalSyncEnabled", "suppressFetchRecommendations", "respectKubexAutomation"}) {
    c.boolean(std::string("spec.") + f);
  }
  c.status();
  c.object("status.webhookHealth");
  c.integer("status.webhookHealth.consecutiveFailures");
  c.integer("status.webhookHealth.consecutiveSuccesses");
  c.string("status.webhookHealth.lastProbeResult");
  c.string("status.webhookHealth.lastProbeTime");
  c.object("status.recommendationReload");
  c.string("status.recommendationReload.lastTime");
  c.integer("status.recommendationReload.lastCount");
  c.string("status.recommendationReload.lastError");
  c.string("status.recommendationReload.lastErrorTime");
}

void policy_evaluation(Catalogue& c) {
  c.object("spec", true);
  json def = json::array();
  for (const auto& e : default_precedence()) def.push_back(json{{"type", e.type}, {"priority", e.priority}});
  c.array("spec.precedence", def.dump());
  c.object("spec.precedence[]");
  c.string("spec.precedence[].type");
  c.integer("spec.precedence[].priority");
  c.status();
}

// The schemas' maxLength/maxItems/maxProperties (scripts/gen-crds.py BOUNDS: kube-apiserver's CEL cost
// estimate needs them). A path has the same bound in every kind that declares it.
const std::map<std::string_view, std::size_t>& bounds_table() {
  static const std::map<std::string_view, std::size_t> table = {
    {"spec.automationStrategyRef.name", 256},
    {"spec.enablement.cpu.limits.ceiling", 64},
    {"spec.enablement.cpu.limits.containers", 64},
    {"spec.enablement.cpu.limits.containers.*.ceiling", 64},
    {"spec.enablement.cpu.limits.containers.*.floor", 64},
    {"spec.enablement.cpu.limits.floor", 64},
    {"spec.enablement.cpu.requests.ceiling", 64},
    {"spec.enablement.cpu.requests.containers", 64},
    {"spec.enablement.cpu.requests.containers.*.ceiling", 64},
    {"spec.enablement.cpu.requests.containers.*.floor", 64},
    {"spec.enablement.cpu.requests.floor", 64},
    {"spec.enablement.gpu.requests.ceiling", 64},
    {"spec.enablement.gpu.requests.containers", 64},
    {"spec.enablement.gpu.requests.containers.*.ceiling", 64},
    {"spec.enablement.gpu.requests.containers.*.floor", 64},
    {"spec.enablement.gpu.requests.floor", 64},
    {"spec.enablement.memory.limits.ceiling", 64},
    {"spec.enablement.memory.limits.containers", 64},
    {"spec.enablement.memory.limits.containers.*.ceiling", 64},
    {"spec.enablement.memory.limits.containers.*.floor", 64},
    {"spec.enablement.memory.limits.floor", 64},
    {"spec.enablement.memory.requests.ceiling", 64},
    {"spec.enablement.memory.requests.containers", 64},
    {"spec.enablement.memory.requests.containers.*.ceiling", 64},
    {"spec.enablement.memory.requests.containers.*.floor", 64},
    {"spec.enablement.memory.requests.floor", 64},
    {"spec.enablement.overrideScheduler", 256},
    {"spec.experimental.gpuKaiContract", 256},
    {"spec.gpuReactiveCheckInterval", 64},
    {"spec.kai.fractionLimit.ceiling", 64},
    {"spec.kai.gpuSharingMode", 256},
    {"spec.kai.memoryIsolation", 256},
    {"spec.kai.queue", 256},
    {"spec.consolidation.gpuMemoryReserve.minimum", 64},
    {"spec.report.idle.minimumGpus", 64},
    {"spec.cost.gpuHourPrices", 64},
    {"spec.cost.gpuHourPrices[].nodeSelector.matchExpressions", 64},
    {"spec.cost.gpuHourPrices[].nodeSelector.matchExpressions[].key", 317},
    {"spec.cost.gpuHourPrices[].nodeSelector.matchExpressions[].operator", 256},
    {"spec.cost.gpuHourPrices[].nodeSelector.matchExpressions[].values", 64},
    {"spec.cost.gpuHourPrices[].nodeSelector.matchExpressions[].values[]", 256},
    {"spec.cost.gpuHourPrices[].price", 32},
    {"spec.cost.gpuHourPrices[].currency", 16},
    {"spec.kai.schedulerName", 256},
    {"spec.metrics.compute.prometheus.containerLabel", 256},
    {"spec.metrics.compute.prometheus.interpretation", 256},
    {"spec.metrics.compute.prometheus.metric", 256},
    {"spec.metrics.compute.prometheus.namespaceLabel", 256},
    {"spec.metrics.compute.prometheus.podLabel", 256},
    {"spec.metrics.compute.scaleBack.metricsWindow", 64},
    {"spec.metrics.compute.upsize.metricsWindow", 64},
    {"spec.metrics.memory.prometheus.containerLabel", 256},
    {"spec.metrics.memory.prometheus.interpretation", 256},
    {"spec.metrics.memory.prometheus.metric", 256},
    {"spec.metrics.memory.prometheus.namespaceLabel", 256},
    {"spec.metrics.memory.prometheus.podLabel", 256},
    {"spec.metrics.memory.scaleBack.metricsWindow", 64},
    {"spec.metrics.memory.upsize.metricsWindow", 64},
    {"spec.minPodMetricsAge", 64},
    {"spec.nodeSelector.matchExpressions", 64},
    {"spec.nodeSelector.matchExpressions[].key", 317},
    {"spec.nodeSelector.matchExpressions[].operator", 256},
    {"spec.nodeSelector.matchExpressions[].values", 64},
    {"spec.nodeSelector.matchExpressions[].values[]", 256},
    {"spec.precedence", 64},
    {"spec.precedence[].type", 256},
    {"spec.proactive.recommendationsConfigMap.name", 256},
    {"spec.proactive.recommendationsConfigMap.namespace", 256},
    {"spec.prometheus.requestTimeout", 64},
    {"spec.prometheus.url", 2048},
    {"spec.protectedNamespacePatterns", 64},
    {"spec.recommendationReloadInterval", 64},
    {"spec.requeueAfter", 64},
    {"spec.resources.containers", 64},
    {"spec.resources.containers.*.limits", 8},
    {"spec.resources.containers.*.limits.*", 64},
    {"spec.resources.containers.*.requests", 8},
    {"spec.resources.containers.*.requests.*", 64},
    {"spec.safetyChecks.minReadyDuration", 64},
    {"spec.safetyChecks.nodeCpuHeadroom", 256},
    {"spec.safetyChecks.nodeMemoryHeadroom", 256},
    {"spec.safetyChecks.resizeRetryInterval", 64},
    {"spec.scheduling.exclusionWindows", 64},
    {"spec.scheduling.exclusionWindows[].end", 16},
    {"spec.scheduling.exclusionWindows[].name", 256},
    {"spec.scheduling.exclusionWindows[].start", 16},
    {"spec.scheduling.exclusionWindows[].timezone", 128},
    {"spec.scheduling.exclusionWindows[].weekdays", 64},
    {"spec.scheduling.exclusionWindows[].weekdays[]", 256},
    {"spec.scheduling.inclusionWindows", 64},
    {"spec.scheduling.inclusionWindows[].end", 16},
    {"spec.scheduling.inclusionWindows[].name", 256},
    {"spec.scheduling.inclusionWindows[].start", 16},
    {"spec.scheduling.inclusionWindows[].timezone", 128},
    {"spec.scheduling.inclusionWindows[].weekdays", 64},
    {"spec.scheduling.inclusionWindows[].weekdays[]", 256},
    {"spec.scope.labelSelector.matchExpressions", 64},
    {"spec.scope.labelSelector.matchExpressions[].key", 317},
    {"spec.scope.labelSelector.matchExpressions[].operator", 256},
    {"spec.scope.labelSelector.matchExpressions[].values", 64},
    {"spec.scope.labelSelector.matchExpressions[].values[]", 256},
    {"spec.scope.namespaceSelector.operator", 256},
    {"spec.scope.namespaceSelector.values", 64},
    {"spec.scope.workloadTypes", 64},
    {"spec.scope.workloadTypes[]", 256},
    {"spec.webhookHealth.transitionCheckInterval", 64},
    {"spec.webhookOwnerResolutionRetryTimeout", 64},
  };
  return table;
}

std::vector<FieldInfo> build_fields(Kind k);

std::vector<FieldInfo> build(Kind k) {
  std::vector<FieldInfo> fields = build_fields(k);
  for (auto& f : fields) {
    if (auto it = bounds_table().find(f.path); it != bounds_table().end()) f.max = it->second;
  }
  return fields;
}

std::vector<FieldInfo> build_fields(Kind k) {
  Catalogue c;
  switch (k) {
    case Kind::kAutomationStrategy:
    case Kind::kClusterAutomationStrategy:
      strategy(c);
      break;
    case Kind::kProactivePolicy:
      proactive(c, false);
      break;
    case Kind::kClusterProactivePolicy:
      proactive(c, true);
      break;
    case Kind::kStaticPolicy:
      static_policy(c, false);
      break;
    case Kind::kClusterStaticPolicy:
      static_policy(c, true);
      break;
    case Kind::kGpuReactivePolicy:
      reactive(c, false);
      break;
    case Kind::kClusterGpuReactivePolicy:
      reactive(c, true);
      break;
    case Kind::kGpuConsolidationPolicy:
      consolidation(c);
      break;
    case Kind::kGlobalConfiguration:
      global_config(c);
      break;
    case Kind::kPolicyEvaluation:
      policy_evaluation(c);
      break;
  }
  return c.take();
}

// A defaulted field, split into path segments ("spec", "containers", "*", "floor"; "[]" for list items).
struct DefaultRule {
  std::vector<std::string> segments;
  json value;
};

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t dot = path.find('.', start);
    std::string seg = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    bool list = seg.size() >= 2 && seg.compare(seg.size() - 2, 2, "[]") == 0;
    if (list) seg.resize(seg.size() - 2);
    out.push_back(seg);
    if (list) out.emplace_back("[]");
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return out;
}

struct KindDefaults {
  std::vector<FieldInfo> catalogue;
  std::vector<DefaultRule> rules;  // parents before children
};

const KindDefaults& kind_defaults(Kind k) {
  static const std::array<KindDefaults, 11> all = [] {
    std::array<KindDefaults, 11> a;
    for (const auto& info : all_kinds()) {
      auto& d = a[static_cast<std::size_t>(info.kind)];
      d.catalogue = build(info.kind);
      for (const auto& f : d.catalogue) {
        if (!f.default_json.empty()) d.rules.push_back({split_path(f.path), json::parse(f.default_json)});
      }
    }
    return a;
  }();
  return all[static_cast<std::size_t>(k)];
}

void apply_rule(json& node, const DefaultRule& rule, std::size_t i) {
  const std::string& seg = rule.segments[i];
  const bool last = i + 1 == rule.segments.size();
  if (seg == "[]") {
    if (!node.is_array()) return;
    for (auto& item : node) apply_rule(item, rule, i + 1);  // "[]" is never the last segment of a default
    return;
  }
  if (!node.is_object()) return;
  if (seg == "*") {
    for (auto& [key, value] : node.items()) {
      (void)key;
      if (!last) apply_rule(value, rule, i + 1);
    }
    return;
  }
  auto it = node.find(seg);
  if (last) {
    // Like the API server: an absent field, or a null the schema does not allow, takes the default.
    if (it == node.end() || it->is_null()) node[seg] = rule.value;
    return;
  }
  if (it != node.end()) apply_rule(*it, rule, i + 1);
}

}  // namespace

const std::vector<FieldInfo>& field_catalogue(Kind k) {
  return kind_defaults(k).catalogue;
}

namespace {

std::size_t utf8_length(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;
  return n;
}

void check_bound(const json& node, const std::vector<std::string>& segs, std::size_t i, const std::string& path,
                 const FieldInfo& f, std::vector<std::pair<std::string, std::string>>& out) {
  if (i == segs.size()) {
    const std::string n = std::to_string(f.max);
    if (node.is_string() && utf8_length(node.get_ref<const std::string&>()) > f.max) {
      out.emplace_back(path, "must be at most " + n + " characters");
    } else if (node.is_array() && f.type == "array" && node.size() > f.max) {
      out.emplace_back(path, "must have at most " + n + " items");
    } else if (node.is_object() && f.type == "object" && node.size() > f.max) {
      out.emplace_back(path, "must have at most " + n + " entries");
    }
    return;
  }
  const std::string& seg = segs[i];
  if (seg == "[]") {
    if (!node.is_array()) return;
    for (std::size_t j = 0; j < node.size(); ++j)
      check_bound(node[j], segs, i + 1, path + "[" + std::to_string(j) + "]", f, out);
    return;
  }
  if (!node.is_object()) return;
  if (seg == "*") {
    for (const auto& [key, value] : node.items()) check_bound(value, segs, i + 1, path + "." + key, f, out);
    return;
  }
  if (auto it = node.find(seg); it != node.end()) check_bound(*it, segs, i + 1, path.empty() ? seg : path + "." + seg, f, out);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> bound_violations(Kind k, const json& object) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& f : field_catalogue(k)) {
    if (f.max > 0) check_bound(object, split_path(f.path), 0, "", f, out);
  }
  return out;
}

void apply_defaults(Kind k, nlohmann::json& object) {
  if (!object.is_object()) return;
  for (const auto& rule : kind_defaults(k).rules) apply_rule(object, rule, 0);
}

}  // namespace kubex::api
