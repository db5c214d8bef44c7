#include "engine/explain_build.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "api/keys.h"
#include "api/kinds.h"
#include "api/validate.h"
#include "api/views.h"
#include "common/duration.h"
#include "common/time_format.h"
#include "controllers/workload_evictions.h"
#include "decide/actuation/actuation_state.h"
#include "decide/actuation/rollback.h"
#include "decide/admission/constraints.h"
#include "decide/admission/exits.h"
#include "decide/admission/fraction_limit.h"
#include "decide/admission/pause.h"
#include "decide/admission/pod_mutation.h"
#include "decide/desired_annotations.h"
#include "decide/policy/catalog.h"
#include "decide/policy/desired.h"
#include "decide/policy/match.h"
#include "decide/policy/near_miss.h"
#include "decide/reactive/reactive.h"
#include "engine/explain_report.h"
#include "kube/client/client.h"
#include "observe/actuation.h"
#include "observe/caches.h"
#include "observe/catalog.h"
#include "observe/signals.h"
#include "observe/workloads.h"
#include "prom/client.h"

namespace kubex::engine {
namespace {

using nlohmann::json;
namespace da = decide::actuation;
namespace dp = decide::policy;

std::string annotation_or_empty(const api::WorkloadView& w, const std::string& key) {
  const common::IStr* v = w.annotation(key);
  return v ? v->str() : std::string();
}

// SEL-4: why a policy does not count.
std::string invalid_reason(const dp::Catalog& catalog, const api::Policy* policy, bool has_strategy) {
  for (const auto& lp : catalog.policies()) {
    if (lp.input.policy.get() != policy) continue;
    if (!lp.input.spec_valid) return "invalid spec: " + lp.input.message;
    switch (lp.resolution) {
      case dp::Resolution::kResolved: break;
      case dp::Resolution::kStrategyNotFound: return "its strategy does not exist";
      case dp::Resolution::kStrategyInvalid:
      case dp::Resolution::kStrategyContract:
        return "its strategy is invalid" + (lp.strategy && !lp.strategy->message.empty()
                                                ? ": " + lp.strategy->message
                                                : std::string());
    }
  }
  return has_strategy ? "invalid" : "its strategy does not exist";
}

// ADM-3 (7): the policy that came closest to matching the workload, and why it does not (issue 34 item 8).
std::optional<ExplainNearMiss> near_miss_of(const dp::Catalog& catalog, const dp::Workload& workload) {
  const auto m = dp::nearest_miss(workload, catalog.candidates(), catalog.global().protected_namespace_patterns);
  if (!m) return std::nullopt;
  ExplainNearMiss out;
  out.policy = m->ref;
  for (const auto& x : m->misses) {
    out.misses.push_back({dp::scope_check_name(x.check), x.why});
    if (!x.label.empty()) out.labels.push_back(x.label);
  }
  if (!m->candidate->valid || !m->candidate->strategy)
    out.invalid_reason = invalid_reason(catalog, m->candidate->policy, m->candidate->strategy != nullptr);
  out.more = m->more;
  return out;
}

// status.<field> of an object, nullptr when absent.
const json* status_field(const json& obj, const char* field) {
  auto st = obj.find("status");
  if (st == obj.end() || !st->is_object()) return nullptr;
  auto f = st->find(field);
  return f == st->end() ? nullptr : &*f;
}

std::string current_text(const decide::PodResources& pod, const decide::ContainerResources& c, decide::Slot slot) {
  if (slot == decide::Slot::kRequestsGpu)
    return c.current_gpu ? decide::format_gpu(*c.current_gpu) : decide::kUnspecified;
  if (slot == decide::Slot::kLimitsGpu)  // KAI-2: the pod's gpu-fraction.limit, on its fraction container
    return c.current_is_fraction && pod.has_fraction_limit ? pod.fraction_limit_text : decide::kUnspecified;
  const auto& q = c.quantity(slot);
  return q ? q->canonical() : decide::kUnspecified;
}

bool targets_slot(const decide::ConstraintTarget& t, const std::string& container, decide::Slot slot) {
  if (t.container != container || t.resource.empty()) return false;
  if (t.resource != decide::resource_name(decide::resource_of(slot))) return false;
  return t.usage.empty() || t.usage == decide::usage_name(decide::usage_of(slot)) ||
         (slot == decide::Slot::kRequestsGpu && t.usage != decide::usage_name(decide::Usage::kLimit));
}

// KAI-2 in one line: the limit a new pod gets and where it comes from, or why it gets none ("" outside
// NvFractions when the pod has no limit of its own: nothing to explain).
std::string kai_limit_text(const json& pod, const std::string& sharing_mode, const dp::Match& match,
                           const dp::Desired& desired) {
  const decide::PodResources r = decide::read_pod_resources(pod);
  const dp::MatchedPolicy* governing = desired.governing_policy(match);
  const api::StrategySpec* strategy = governing && governing->strategy ? &governing->strategy->spec : nullptr;
  if (!r.fraction) return "none: the pod gets no gpu-fraction";
  if (sharing_mode != api::kSharingNvFractions) {  // said only when the pod carries a limit of its own
    if (!r.has_fraction_limit) return "";
    return "gpu-fraction.limit " + r.fraction_limit_text + " is the pod's own: kubex writes burst limits only under " +
           "spec.kai.gpuSharingMode NvFractions (KAI >= 0.18.2); the cluster's is " + sharing_mode;
  }
  if (!strategy || !strategy->fraction_limit_enabled) {
    return "none written: the strategy's spec.kai.fractionLimit.enabled is false" +
           (r.has_fraction_limit ? " (the pod keeps its gpu-fraction.limit " + r.fraction_limit_text + ")"
                                 : std::string());
  }
  const std::string bounds = ", headroom " + std::to_string(strategy->fraction_limit_headroom_percent) +
                             "%, ceiling " + decide::format_gpu(decide::fraction_limit_ceiling(*strategy));
  if (desired.gpu_container) {
    if (const auto& v = desired.containers[*desired.gpu_container].at(decide::Slot::kLimitsGpu)) {
      const std::string how = "request " + decide::format_gpu(*r.fraction) + ", peak " + decide::format_gpu(v->gpu) +
                              " from " + match.policies[v->policy].ref + bounds;
      if (!r.has_fraction_limit) return "none: the peak leaves no room above the request (" + how + ")";
      return "gpu-fraction.limit " + r.fraction_limit_text + " (" + how + ")";
    }
  }
  // KAI-2a: no peak is known, so the limit is the pod's original allocation (capped at 1 and at the ceiling).
  std::string original = "unknown";
  for (const auto& c : r.targets)
    if (c.current_is_fraction)
      if (auto o = r.original_gpu(c)) original = decide::format_gpu(*o);
  const std::string how = "request " + decide::format_gpu(*r.fraction) + ", no peak known (no limits.gpu from any " +
                          "policy), original allocation " + original + bounds;
  if (!r.has_fraction_limit)
    return "none: the request is not below the pod's original allocation, capped at 1 and at the ceiling (KAI-2a: " +
           how + ")";
  return "gpu-fraction.limit " + r.fraction_limit_text +
         " (KAI-2a: with no peak known the limit is the pod's original allocation, capped at 1 and at the ceiling; " +
         how + ")";
}

decide::AnnotationMap annotations_of(const json& pod) {
  decide::AnnotationMap out;
  auto meta = pod.find("metadata");
  if (meta == pod.end() || !meta->is_object()) return out;
  auto a = meta->find("annotations");
  if (a == meta->end() || !a->is_object()) return out;
  for (const auto& [k, v] : a->items())
    if (v.is_string()) out.emplace(k, v.get<std::string>());
  return out;
}

// ACT-10: the harm-guard floors on the owner's actuation-state that are still in force.
std::vector<ExplainHarmFloor> harm_floors(const api::WorkloadView& w, common::TimePoint now) {
  std::vector<ExplainHarmFloor> out;
  const common::IStr* text = w.annotation(api::keys::kActuationState);
  if (!text) return out;
  auto st = da::parse_actuation_state(text->view());
  if (!st) return out;
  for (const auto& [container, f] : st->harm_floors)
    if (f.until > now) out.push_back({container, decide::format_gpu(f.floor), common::format_rfc3339(f.until)});
  return out;
}

// ACT-10: the containers of `pod` whose GPU admission raised to a harm-guard floor (pod-rightsizing-info's gpu
// change with source `harm-guard`): "app 0.3 -> 1".
std::vector<std::string> raised_by_harm_guard(const json& pod) {
  std::vector<std::string> out;
  const auto a = annotations_of(pod);
  auto it = a.find(api::keys::kPodRightsizingInfo);
  if (it == a.end()) return out;
  const json info = json::parse(it->second, nullptr, false);
  if (!info.is_object() || !info.contains("containers") || !info["containers"].is_object()) return out;
  for (const auto& [name, entry] : info["containers"].items()) {
    if (!entry.is_object() || !entry.contains("gpu") || !entry["gpu"].is_object()) continue;
    const json& g = entry["gpu"];
    if (g.value("source", json()) == decide::reason::kHarmGuard)
      out.push_back(name + " " + g.value("from", std::string("-")) + " -> " + g.value("to", std::string("-")));
  }
  return out;
}

}  // namespace

// ADM-4 / ACT-2: the pause-until that pauses a pod, in decide::paused_by's order (the pod, its owner, the owner's
// pod template, the namespace), and the object that carries it; nullopt when none is in force. `pod` is null
// when there is no live pod (a pod created now carries the template's annotations: the owner template source).
std::optional<ExplainPause> pause_of(const decide::AnnotationMap* pod, const std::string& pod_name,
                                     const decide::AnnotationMap& owner, const decide::AnnotationMap& owner_template,
                                     const decide::AnnotationMap& ns_annotations, const std::string& owner_ref,
                                     const std::string& ns, common::TimePoint now, bool checked) {
  decide::PauseSources sources;
  sources.pod = pod;
  sources.owner = &owner;
  sources.owner_template = &owner_template;
  sources.ns = &ns_annotations;
  const std::optional<std::string> by = decide::paused_by(sources, now);
  if (!by) return std::nullopt;
  ExplainPause p;
  p.source = *by;
  const decide::AnnotationMap* on = &ns_annotations;
  p.object = "Namespace/" + ns;
  if (*by == "pod") {
    on = pod;
    p.object = "Pod/" + pod_name;
  } else if (*by == "owner") {
    on = &owner;
    p.object = owner_ref;
  } else if (*by == "owner template") {
    on = &owner_template;
    p.object = owner_ref + " (pod template)";
  }
  p.value = on->at(api::keys::kPauseUntil);
  if (p.value == "infinite") {
    p.meaning = "no end";
  } else if (common::parse_rfc3339(p.value)) {
    p.meaning = "until " + p.value;
  } else {
    p.meaning = "not an RFC 3339 time or \"infinite\", so it counts as paused";
  }
  p.checked = checked;
  return p;
}



void explain_admission(const ExplainContext& ctx, const api::WorkloadView& view, const json& new_pod,
                       const json* live_pod, Explanation& e) {
  auto catalog = ctx.catalog.catalog();
  const api::GlobalConfigSpec& global = catalog->global();
  const std::string ns = view.ns.str();
  // ADM-3 (4), (5): decided before any owner is looked at.
  if (auto exit = decide::early_exit(live_pod ? *live_pod : new_pod, ns, global); exit != decide::EarlyExit::kNone) {
    e.not_managed = explain_reason(decide::exit_check(exit));
    return;
  }
  const dp::Workload workload = observe::decision_workload(view);
  const dp::Match match =
      dp::match_policies(workload, catalog->candidates(), catalog->evaluation(), global.protected_namespace_patterns);
  if (!match.managed && !match.on_hold) {  // ADM-3 (7)
    e.not_managed = explain_reason("not-managed");
    e.near_miss = near_miss_of(*catalog, workload);
    e.not_managed->sentence += e.near_miss ? " " + near_miss_text(*e.near_miss) : " There is no policy in the cluster.";
    return;
  }
  e.on_hold = match.on_hold;

  const decide::PodResources template_resources = decide::read_pod_resources(new_pod);
  const decide::PodResources live_resources = decide::read_pod_resources(live_pod ? *live_pod : new_pod);
  const std::vector<dp::TargetContainer> targets = template_resources.target_containers();
  const dp::Desired desired = dp::collect_desired(match, workload, targets);

  for (std::size_t i = 0; i < match.policies.size(); ++i) {
    const dp::MatchedPolicy& mp = match.policies[i];
    ExplainPolicy p;
    p.ref = mp.ref;
    p.valid = mp.valid;
    p.strategy = mp.strategy_ref;
    if (!mp.valid) p.invalid_reason = invalid_reason(*catalog, mp.policy, mp.strategy != nullptr);
    for (const auto& c : desired.containers)
      for (decide::Slot slot : decide::kAllSlots)
        if (const auto& v = c.at(slot); v && v->policy == i) p.wins.push_back(c.name + " " + decide::slot_name(slot));
    const api::Kind kind = mp.policy->kind;
    if (mp.valid && api::is_reactive(kind) && match.reactive_winner && *match.reactive_winner != i) {
      p.note = "not evaluated: " + match.policies[*match.reactive_winner].ref + " wins the reactive family (SEL-7)";
    } else if (mp.valid && api::is_proactive(kind) && match.proactive_winner && *match.proactive_winner != i) {
      p.note = "not evaluated: " + match.policies[*match.proactive_winner].ref + " wins the proactive family (SEL-7)";
    } else if (mp.valid && p.wins.empty()) {
      p.note = api::is_static(kind) ? "provides no value that an earlier policy does not"
                                    : "no recommendation on the owner yet";
    }
    e.policies.push_back(std::move(p));
  }
  if (match.on_hold) {
    e.admission_result = decide::result_name(decide::AdmissionResult::kSkipped);
    e.admission_stops.push_back(explain_reason("policies-on-hold"));
    return;
  }

  // The admission decision a pod created now gets (the webhook's own function).
  decide::AdmissionInput in;
  in.pod = &new_pod;
  in.phase = "explain";
  in.now = ctx.now;
  in.global = &global;
  in.evaluation = &catalog->evaluation();
  in.ns = ns;
  in.namespace_annotations = observe::namespace_annotations(ctx.caches, ns);
  in.workload = &workload;
  in.candidates = catalog->candidates();
  const decide::AdmissionDecision d = decide::decide_admission(in);
  e.strategy = d.summary.strategy;
  e.mode = d.summary.mode;
  e.kai_mode = std::string(d.summary.kai_mode);
  if (!e.kai_mode.empty() && d.pod) {
    e.kai_limit = kai_limit_text(*d.pod, e.kai_mode, match, desired);
    // KAI-2a: with the limit turned off under NvFractions, every fraction kubex writes is a hard memory cap.
    const dp::MatchedPolicy* governing = desired.governing_policy(match);
    const bool limit_off = governing && governing->strategy && !governing->strategy->spec.fraction_limit_enabled;
    if (e.kai_mode == api::kSharingNvFractions && limit_off && decide::read_pod_resources(*d.pod).fraction)
      e.kai_warning = api::kFractionLimitOffWarning;
  }
  e.harm_guard = harm_floors(view, ctx.now);  // ACT-10
  e.admission_result = decide::result_name(d.result);
  for (const auto& c : d.summary.failed_checks) e.admission_stops.push_back(explain_reason(c));
  // ADM-4: where a pause comes from; the explained pod's own annotations first, as actuation reads them (ACT-2).
  {
    const dp::MatchedPolicy* governing = desired.governing_policy(match);
    const bool checked = governing && governing->strategy &&
                         governing->strategy->spec.safety.enable_pause_until_annotation_check;
    const decide::AnnotationMap live_annotations = live_pod ? annotations_of(*live_pod) : decide::AnnotationMap();
    e.pause = pause_of(live_pod ? &live_annotations : nullptr, e.name, workload.annotations,
                       workload.template_annotations, in.namespace_annotations, workload.ref(), ns, ctx.now, checked);
  }

  const auto entries = d.constraints.entries();
  for (std::size_t ci = 0; ci < desired.containers.size() && ci < template_resources.targets.size(); ++ci) {
    const dp::ContainerDesired& cd = desired.containers[ci];
    const decide::ContainerResources& tc = template_resources.targets[ci];
    const auto live_index = live_resources.find(cd.name);
    for (decide::Slot slot : decide::kAllSlots) {
      const auto& v = cd.at(slot);
      const bool gpu_row = slot == decide::Slot::kRequestsGpu && (tc.current_gpu || tc.gpu_limit);
      if (!v && !gpu_row) continue;
      ExplainResource r;
      r.container = cd.name;
      r.slot = decide::slot_name(slot);
      r.current = live_index ? current_text(live_resources, live_resources.targets[*live_index], slot)
                             : decide::kUnspecified;
      if (v) {
        const dp::MatchedPolicy& mp = match.policies[v->policy];
        r.desired = decide::is_gpu(slot) ? decide::format_gpu(v->gpu) : v->quantity.canonical();
        r.source = mp.ref;
        if (!api::is_static(mp.policy->kind)) {
          r.annotation = slot == decide::Slot::kLimitsGpu ? decide::desired_limits_key(mp.policy->kind)
                                                          : decide::desired_requests_key(mp.policy->kind);
        }
      }
      r.applied = current_text(template_resources, tc, slot);  // unchanged unless the decision changes it
      for (const auto& ch : d.summary.changes) {
        if (ch.container == cd.name && decide::slot_of(ch.resource, ch.usage) == slot) r.applied = ch.to;
      }
      for (const auto& en : entries)
        for (const auto& t : en.targets)
          if (targets_slot(t, cd.name, slot)) {
            r.constraints.push_back(explain_reason(en.reason));
            break;
          }
      e.resources.push_back(std::move(r));
    }
  }
  for (const auto& en : entries) {
    bool slotted = false;
    for (const auto& t : en.targets) slotted = slotted || !t.resource.empty();
    if (!slotted) e.pod_constraints.push_back(explain_reason(en.reason));
  }
  // Which pause-until, on which object, is said once: Explanation::pause (issue 34 item 8).
  if (live_pod) {
    auto meta = live_pod->find("metadata");
    auto a = meta != live_pod->end() && meta->is_object() ? meta->find("annotations") : live_pod->end();
    if (meta != live_pod->end() && meta->is_object() && a != meta->end() && a->is_object()) {
      if (auto it = a->find(api::keys::kAutomationConstraints); it != a->end() && it->is_string())
        e.notes.push_back("the pod's automation-constraints: " + it->get<std::string>());
    }
    for (const auto& raised : raised_by_harm_guard(*live_pod))  // ACT-10
      e.notes.push_back("this pod's GPU was raised to the harm-guard floor when it was admitted (" + raised +
                        "): a resize down had harmed the workload (ACT-10)");
  }
}

prom::Options explain_prometheus(const ExplainContext& ctx, const api::GlobalConfigSpec& global) {
  prom::Options po;
  po.url = ctx.options.prometheus_url.empty() ? global.prometheus_url : ctx.options.prometheus_url;
  po.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(global.prometheus_request_timeout);
  po.bearer_token_file = ctx.options.prometheus_bearer_token_file;
  po.ca_file = ctx.options.prometheus_ca_file;
  return po;
}

void explain_reactive(const ExplainContext& ctx, const api::WorkloadView& view, Explanation& e) {
  auto catalog = ctx.catalog.catalog();
  const api::GlobalConfigSpec& global = catalog->global();
  const dp::Match match = dp::match_policies(observe::decision_workload(view), catalog->candidates(),
                                             catalog->evaluation(), global.protected_namespace_patterns);
  if (match.on_hold || !match.reactive_winner) return;
  const dp::MatchedPolicy& winner = match.policies[*match.reactive_winner];
  const api::Policy& policy = *winner.policy;
  ExplainReactive r;
  r.policy = winner.ref;
  const std::string state_key = decide::reactive_state_key(policy.kind);
  const std::string requests_key = decide::desired_requests_key(policy.kind);
  std::optional<decide::reactive::State> state;
  if (const std::string text = annotation_or_empty(view, state_key); !text.empty()) {
    auto parsed = decide::reactive::parse_state(text);
    if (parsed) {
      state = *parsed;
      r.state_present = true;
      for (const auto& [c, v] : parsed->baseline) r.baseline[c] = decide::format_gpu(v);
      r.driver = parsed->driver;
      r.updated_at = parsed->updated_at;
    } else {
      r.state_error = "invalid, treated as absent: " + parsed.error().str();
    }
  }
  if (auto got = ctx.client.get(api::object_path(policy.kind, policy.meta.ns, policy.meta.name))) {
    const json* t = status_field(*got, "lastEvaluationTime");
    if (t && t->is_string()) r.last_evaluation = t->get<std::string>();
  }
  // When the next cycle runs (REA-1) and when each pod starts to count (REA-2), so a quiet policy says why.
  if (auto last = common::parse_rfc3339(r.last_evaluation)) {
    r.next_cycle = common::format_rfc3339(*last + global.gpu_reactive_check_interval);
  }
  r.min_pod_metrics_age = common::format_go_duration(policy.reactive.min_pod_metrics_age);
  for (const auto& p : observe::pods_of(ctx.caches, view)) {
    ExplainEligibility el;
    el.pod = p->name;
    if (p->started != common::TimePoint{}) {
      el.eligible_at = common::format_rfc3339(p->started + policy.reactive.min_pod_metrics_age);
    }
    decide::reactive::PodFacts facts;
    facts.phase = p->phase.str();
    facts.terminating = p->deleting;
    if (p->started != common::TimePoint{}) facts.start_time = p->started;
    el.eligible = decide::reactive::eligible(facts, policy.reactive.min_pod_metrics_age, ctx.now);
    r.eligibility.push_back(std::move(el));
  }
  std::sort(r.eligibility.begin(), r.eligibility.end(),
            [](const ExplainEligibility& a, const ExplainEligibility& b) { return a.pod < b.pod; });

  const prom::Options po = explain_prometheus(ctx, global);
  r.prometheus_url = po.url;
  std::vector<observe::WorkloadPods> pods{
      observe::eligible_pods(ctx.caches, view, policy.reactive.min_pod_metrics_age, ctx.now)};
  auto querier = prom::connect(po);
  if (!querier) {
    r.prometheus_error = querier.error().str();
  } else if (observe::SignalRead read = observe::read_signals(**querier, policy.reactive, pods); read.error) {
    r.prometheus_error = read.error->str();  // REA-10: the engine changes nothing either
  } else {
    r.queried = true;
    for (const auto& p : pods.front().pods)
      for (const auto& c : p.containers)
        r.samples.push_back({p.name, c.name, decide::format_gpu(c.allocation), c.samples.compute_upsize,
                             c.samples.compute_scale_back, c.samples.memory_upsize, c.samples.memory_scale_back});
    decide::reactive::Input in;
    in.spec = &policy.reactive;
    in.pods = pods.front().pods;
    in.now = ctx.now;
    in.state = state;
    if (auto existing = decide::reactive::parse_requests(annotation_or_empty(view, requests_key))) in.existing = *existing;
    for (const auto& [c, v] : in.existing) r.stored[c] = decide::format_gpu(v);
    const decide::reactive::Outcome out = decide::reactive::decide(in);
    r.result = decide::reactive::result_name(out.result);
    const bool recommended = out.result == decide::reactive::Result::kRecommended;
    for (const auto& c : out.candidates) {
      ExplainRule rule;
      rule.rule = c.oom ? "REA-11" : c.direction == "upsize" ? "REA-6" : "REA-7";
      rule.signal = c.signal;
      rule.direction = c.direction;
      rule.total = decide::format_gpu(c.total);
      rule.pod = c.pod;
      rule.won = c.signal == out.winner_signal && c.pod == out.selected_pod;
      r.rules.push_back(std::move(rule));
    }
    if (recommended)
      for (const auto& [c, v] : out.requests) r.would_write[c] = decide::format_gpu(v);
  }
  e.reactive = std::move(r);
}

ExplainRollback explain_rollback(const api::WorkloadView& view) {
  ExplainRollback r;
  const std::string text = annotation_or_empty(view, api::keys::kRollbackState);
  if (text.empty()) return r;
  auto parsed = da::parse_rollback_state(text);
  if (!parsed) {
    r.error = "invalid, rebuilt by the engine: " + parsed.error().str();
    return r;
  }
  r.present = true;
  r.phase = da::phase_name(parsed->phase);
  r.strategy = parsed->strategy;
  r.last_applied = parsed->last_applied;
  for (const auto& [c, oc] : parsed->original.containers) {
    const auto& v = oc.gpu_request ? oc.gpu_request : oc.gpu_limit;
    r.original[c] = v ? *v : decide::kUnspecified;
  }
  if (parsed->original.gpu_fraction) r.original["gpu-fraction"] = *parsed->original.gpu_fraction;
  const auto& h = parsed->history;
  for (std::size_t i = h.size() > 5 ? h.size() - 5 : 0; i < h.size(); ++i)
    r.history.push_back({h[i].at, h[i].container, h[i].from, h[i].to, h[i].source});
  return r;
}

}  // namespace kubex::engine
