// AutomationStrategy / ClusterAutomationStrategy (SPEC §1.1, VAL-2, VAL-3).
#include <nlohmann/json.hpp>
#include <set>

#include "api/objects.h"
#include "api/validate_util.h"

namespace kubex::api::detail {

namespace {

using common::Quantity;
using nlohmann::json;

const json& empty_object() {
  static const json e = json::object();
  return e;
}

// "<path>: accepted for compatibility, has no effect" (VAL-2): only when the value differs from its default,
// so that an object the API server already defaulted warns exactly like the raw one.
void warn_no_effect(Checker& c, const json& parent, std::string_view key, const std::string& path,
                    const json& default_value) {
  const json* v = Checker::find(parent, key);
  if (v && *v != default_value) c.warn(path + ": accepted for compatibility, has no effect");
}

struct BoundsResult {
  std::optional<Quantity> floor, ceiling;
};

BoundsResult check_bounds(Checker& c, const json& obj, const std::string& path) {
  BoundsResult r;
  r.floor = c.quantity(obj, "floor", path + ".floor");
  if (r.floor && r.floor->sign() < 0) {
    c.error(path + ".floor", "must be >= 0");
    r.floor.reset();
  }
  r.ceiling = c.quantity(obj, "ceiling", path + ".ceiling");
  if (r.ceiling && r.ceiling->sign() <= 0) {
    c.error(path + ".ceiling", "must be > 0");
    r.ceiling.reset();
  }
  if (r.floor && r.ceiling && *r.floor > *r.ceiling)
    c.error(path, "floor must be less than or equal to ceiling");
  return r;
}

// One enablement.<resource>.<usage> block; returns its usage-level bounds.
BoundsResult check_gates(Checker& c, const json& parent, std::string_view key, const std::string& path) {
  const json* g = c.object(parent, key, path);
  if (!g) return {};
  for (const char* flag : {"upsize", "downsize", "setFromUnspecified"})
    c.boolean(*g, flag, path + "." + flag);
  BoundsResult r = check_bounds(c, *g, path);
  const std::string cpath = path + ".containers";
  if (const json* containers = c.object(*g, "containers", cpath)) {
    for (const auto& [name, entry] : containers->items()) {
      const std::string epath = cpath + "." + name;
      if (entry.is_null()) continue;
      if (!entry.is_object()) {
        c.error(epath, "must be an object");
        continue;
      }
      check_bounds(c, entry, epath);
    }
  }
  return r;
}

void check_window(Checker& c, const json& w, const std::string& path) {
  if (!w.is_object()) {
    c.error(path, "must be an object");
    return;
  }
  if (auto name = c.string(w, "name", path + ".name"); name && name->size() > 128) {
    c.error(path + ".name", "must be at most 128 characters");
  }
  if (auto tz = c.string(w, "timezone", path + ".timezone"); tz && tz->size() > 64) {
    c.error(path + ".timezone", "must be at most 64 characters");
  }
  if (const json* days = c.list(w, "weekdays", path + ".weekdays")) {
    if (days->size() > 7) c.error(path + ".weekdays", "must have at most 7 items");
    for (std::size_t i = 0; i < days->size(); ++i) {
      json holder = {{"d", (*days)[i]}};
      c.enumeration(holder, "d", common::index_path(path + ".weekdays", i),
                    {"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sun",
                     "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"});
    }
  }
  auto start = c.string(w, "start", path + ".start");
  auto end = c.string(w, "end", path + ".end");
  bool times_ok = true;
  if (!start) {
    if (!c.has_error_at(path + ".start")) c.error(path + ".start", "required");
    times_ok = false;
  } else if (!is_hh_mm(*start, false)) {
    c.error(path + ".start", "must be HH:MM");
    times_ok = false;
  }
  if (!end) {
    if (!c.has_error_at(path + ".end")) c.error(path + ".end", "required");
    times_ok = false;
  } else if (!is_hh_mm(*end, true)) {
    c.error(path + ".end", "must be HH:MM");
    times_ok = false;
  }
  if (times_ok && *start == *end) c.error(path, "start and end must not be the same");
}

void check_headroom(Checker& c, const json& parent, std::string_view key, const std::string& path) {
  auto s = c.string(parent, key, path);
  if (!s) return;
  if (!is_percent(*s) && !Quantity::parse(*s))
    c.error(path, "must be a percentage such as \"10%\" or a quantity");
}

void check_safety(Checker& c, const json& spec) {
  const std::string p = "spec.safetyChecks";
  const json* s = c.object(spec, "safetyChecks", p);
  if (!s) return;
  for (const char* f :
       {"enablePauseUntilAnnotationCheck", "requireOwnerPodsReady", "respectWorkloadMaxUnavailable"}) {
    c.boolean(*s, f, p + "." + f);
  }
  c.duration(*s, "minReadyDuration", p + ".minReadyDuration", DurationRule::kNonNegative);
  c.duration(*s, "resizeRetryInterval", p + ".resizeRetryInterval", DurationRule::kAtLeast1s);
  for (const char* f : {"enableResourceQuotaFilter", "enableHpaFilter", "enableVpaFilter",
                        "enableLimitRangeFilter", "enablePodLimitRangeFilter", "requireNodeAllocatable"}) {
    if (c.boolean(*s, f, p + "." + f)) warn_no_effect(c, *s, f, p + "." + f, true);
  }
  for (const char* f : {"blockResizeOnVpaControlledResources", "retainGuaranteedQOS"}) {
    if (c.boolean(*s, f, p + "." + f)) warn_no_effect(c, *s, f, p + "." + f, false);
  }
  for (const char* f : {"minCpuChangePercent", "minMemoryChangePercent"}) {
    if (c.integer(*s, f, p + "." + f, 0)) warn_no_effect(c, *s, f, p + "." + f, 5);
  }
  const std::size_t before = c.error_count();
  check_headroom(c, *s, "nodeCpuHeadroom", p + ".nodeCpuHeadroom");
  check_headroom(c, *s, "nodeMemoryHeadroom", p + ".nodeMemoryHeadroom");
  if (c.error_count() == before) {
    warn_no_effect(c, *s, "nodeCpuHeadroom", p + ".nodeCpuHeadroom", "10%");
    warn_no_effect(c, *s, "nodeMemoryHeadroom", p + ".nodeMemoryHeadroom", "200Mi");
  }
}

void check_scheduling(Checker& c, const json& spec) {
  const json* sched = c.object(spec, "scheduling", "spec.scheduling");
  if (!sched) return;
  for (const char* w : {"inclusionWindows", "exclusionWindows"}) {
    const std::string p = std::string("spec.scheduling.") + w;
    const json* list = c.list(*sched, w, p);
    if (!list) continue;
    if (list->size() > 32) c.error(p, "must have at most 32 items");
    for (std::size_t i = 0; i < list->size(); ++i) check_window(c, (*list)[i], common::index_path(p, i));
    if (!list->empty()) c.warn(p + ": accepted for compatibility, has no effect");
  }
}

}  // namespace

void validate_strategy_spec(Checker& c, const json& spec, const ValidationContext& ctx) {
  // VAL-3: the contract value itself.
  const std::string contract_path = "spec.experimental.gpuKaiContract";
  std::string contract;  // "" = absent or unusable
  bool contract_reported = false;
  if (const json* exp = c.object(spec, "experimental", "spec.experimental")) {
    const json* v = Checker::find(*exp, "gpuKaiContract");
    if (!v) {
      c.contract_error(contract_path, "required");
      contract_reported = true;
    } else if (!v->is_string()) {
      c.contract_error(contract_path, "must be a string");
      contract_reported = true;
    } else if (*v != "none" && *v != kGpuKaiContract) {
      c.contract_error(contract_path, "unsupported value " + quote(v->get<std::string>()) +
                                          ": the only accepted GPU/KAI contract is \"" + kGpuKaiContract +
                                          "\"");
      contract_reported = true;
    } else {
      contract = v->get<std::string>();
    }
  }

  const json* en = c.object(spec, "enablement", "spec.enablement");
  const json& enablement = en ? *en : empty_object();
  auto scheduler =
      c.enumeration(enablement, "overrideScheduler", "spec.enablement.overrideScheduler", {"none", "kai"});
  const bool kai_mode = scheduler && *scheduler == "kai";
  BoundsResult gpu_bounds;
  if (const json* gpu = c.object(enablement, "gpu", "spec.enablement.gpu")) {
    gpu_bounds = check_gates(c, *gpu, "requests", "spec.enablement.gpu.requests");
  }
  for (const char* res : {"cpu", "memory"}) {
    const std::string p = std::string("spec.enablement.") + res;
    if (const json* r = c.object(enablement, res, p)) {
      check_gates(c, *r, "requests", p + ".requests");
      check_gates(c, *r, "limits", p + ".limits");
    }
  }

  const json* kai = c.object(spec, "kai", "spec.kai");
  const bool has_kai = Checker::find(spec, "kai") != nullptr;
  std::optional<std::string> queue;
  if (kai) {
    queue = c.string(*kai, "queue", "spec.kai.queue");
    if (queue && !is_rfc1123_label(*queue)) {
      c.error("spec.kai.queue", "must be a valid RFC 1123 label");
      queue.reset();
    }
    c.boolean(*kai, "setQueueWhenSpecified", "spec.kai.setQueueWhenSpecified");
    if (const json* vllm = c.object(*kai, "vllm", "spec.kai.vllm")) {
      c.integer(*vllm, "gpuMemoryUtilizationBufferPercent", "spec.kai.vllm.gpuMemoryUtilizationBufferPercent",
                0, 100);
    }
    const std::string lp = "spec.kai.fractionLimit";
    if (const json* limit = c.object(*kai, "fractionLimit", lp)) {  // KAI-2
      auto enabled = c.boolean(*limit, "enabled", lp + ".enabled");
      c.integer(*limit, "headroomPercent", lp + ".headroomPercent", 0, 1000);
      if (auto ceiling = c.quantity(*limit, "ceiling", lp + ".ceiling");
          ceiling && (ceiling->sign() <= 0 || *ceiling > Quantity(1))) {
        c.error(lp + ".ceiling", "must be > 0 and <= 1");
      }
      if (enabled && *enabled) warn_unless_nv_fractions(c, ctx, lp + ".enabled");
      if (enabled && !*enabled && ctx.gpu_sharing_mode && *ctx.gpu_sharing_mode == kSharingNvFractions) {
        c.warn(kFractionLimitOffWarning);  // KAI-2a
      }
    }
  }

  // VAL-3: KAI needs the contract; a strategy that only sets enablement.gpu does not.
  if ((kai_mode || has_kai) && !contract_reported && contract != kGpuKaiContract) {
    c.contract_error(contract_path,
                     std::string("must be \"") + kGpuKaiContract +
                         "\" when spec.enablement.overrideScheduler is \"kai\" or spec.kai is set");
  }

  if (const json* ipr = c.object(spec, "inPlaceResize", "spec.inPlaceResize")) {
    c.boolean(*ipr, "enabled", "spec.inPlaceResize.enabled");
    if (c.boolean(*ipr, "containerRestart", "spec.inPlaceResize.containerRestart")) {
      warn_no_effect(c, *ipr, "containerRestart", "spec.inPlaceResize.containerRestart", false);
    }
  }
  if (const json* pe = c.object(spec, "podEviction", "spec.podEviction")) {
    c.boolean(*pe, "enabled", "spec.podEviction.enabled");
    c.boolean(*pe, "retryPodDisruptionBudget", "spec.podEviction.retryPodDisruptionBudget");
  }
  check_safety(c, spec);
  check_scheduling(c, spec);

  // VAL-2 warnings for KAI strategies.
  if (kai_mode) {
    const std::string ceiling_path = "spec.enablement.gpu.requests.ceiling";
    if (!c.has_error_at(ceiling_path) && (!gpu_bounds.ceiling || *gpu_bounds.ceiling > Quantity(1))) {
      c.warn(ceiling_path + ": \"1\" is recommended when overrideScheduler is \"kai\"");
    }
    if (!ctx.early_webhook_enabled) {
      c.warn(
          "spec.enablement.overrideScheduler: \"kai\" needs the early pod-mutating webhook "
          "(webhook.podMutation.additionalWebhook.enabled: true), which is disabled");
    }
    const std::string effective_queue = queue.value_or(kai ? "" : "kubex-unlimited-gpu-queue");
    if (ctx.kai_queues && !effective_queue.empty() && !ctx.kai_queues->contains(effective_queue)) {
      c.warn("spec.kai.queue: KAI queue " + quote(effective_queue) + " does not exist");
    }
  }
}

}  // namespace kubex::api::detail
