// `kubex explain`'s actuation section (SPEC §8, CLI-1): ACT-1…ACT-3 now for the workload's pods, as the actuation
// controller decides them (controllers::resize_input, decide::actuation::decide), with what the controller keeps in
// its own process read back from the cluster where it can be: the last eviction from kubex's eviction events (ACT-3b)
// and the harm a downsize did (ACT-10, decide::actuation::find_harm).
#include <algorithm>
#include <nlohmann/json.hpp>

#include "api/keys.h"
#include "api/kinds.h"
#include "api/views.h"
#include "common/duration.h"
#include "common/time_format.h"
#include "controllers/workload_evictions.h"
#include "decide/actuation/harm_guard.h"
#include "decide/actuation/rollback.h"
#include "decide/actuation/steps.h"
#include "decide/admission/pod_mutation.h"
#include "engine/explain_build.h"
#include "engine/explain_report.h"
#include "kube/client/client.h"
#include "observe/actuation.h"
#include "observe/catalog.h"
#include "observe/workloads.h"
#include "prom/history_queries.h"

namespace kubex::engine {
namespace {

using nlohmann::json;
namespace da = decide::actuation;

// status.conditions of an object, nullptr when absent or not a list.
const json* status_conditions(const json& obj) {
  auto st = obj.find("status");
  if (st == obj.end() || !st->is_object()) return nullptr;
  auto c = st->find("conditions");
  return c == st->end() || !c->is_array() ? nullptr : &*c;
}

std::string event_time(const json& e) {
  for (const char* k : {"lastTimestamp", "eventTime"}) {
    if (e.contains(k) && e[k].is_string() && !e[k].get<std::string>().empty()) return e[k].get<std::string>();
  }
  return e.value("metadata", json::object()).value("creationTimestamp", "");
}

// ACT-3b: the workload's last kubex eviction, as its PolicyEvaluationEvictResize / PolicyEvaluationEvictRollback
// events show it (the engine keeps the exact time in its own process). Events carry whole seconds and a replacement
// is often created within the eviction's second, so the time is taken one second early. nullopt when none is seen
// (events live about an hour).
std::optional<common::TimePoint> last_eviction(kube::Client& client, const da::WorkloadFacts& w) {
  const std::vector<prom::HistoryWorkload> self = {{w.kind, w.ns, w.name, false}};
  std::optional<common::TimePoint> newest;
  (void)client.list("/api/v1/namespaces/" + w.ns + "/events", {}, [&](json&& e) {
    const std::string reason = e.value("reason", "");
    if (reason != "PolicyEvaluationEvictResize" && reason != "PolicyEvaluationEvictRollback") return;
    const json& obj = e.value("involvedObject", json::object());
    if (obj.value("kind", "") != "Pod" || !prom::history_owner(self, w.ns, obj.value("name", ""))) return;
    if (auto at = common::parse_rfc3339(event_time(e)); at && (!newest || *at > *newest)) newest = *at;
  });
  if (newest) *newest -= std::chrono::seconds(1);
  return newest;
}

// ACT-10 as the actuation controller finds it (controllers' guard_against_harm, without its events and metric): the
// harmed pods, and whether a floor is not on the owner yet. The controller also remembers whether the pod it evicted
// was crashing already (then nothing is harm); explain cannot see that and assumes it was not.
std::vector<da::Harm> find_harm(da::Input& in, const api::WorkloadView& view) {
  std::vector<da::HistoryEntry> history;
  if (const common::IStr* rb = view.annotation(api::keys::kRollbackState)) {
    if (auto st = da::parse_rollback_state(rb->view())) history = std::move(st->history);
  }
  std::vector<da::Harm> found = da::find_harm(in.workload.pods, history, false, in.now);
  const common::IStr* on_owner = view.annotation(api::keys::kActuationState);
  for (const da::Harm& h : found) {
    in.harmed.insert(h.pod);
    auto shown = on_owner ? da::floor_of(on_owner->view(), h.container, in.now) : std::nullopt;
    if (!shown || *shown < h.from) in.harm_found_now = true;
  }
  return found;
}

std::string harm_text(const da::Harm& h) {
  return "container " + h.container + ", resized from " + decide::format_gpu(h.from) + " to " +
         decide::format_gpu(h.to) + " GPU, had " + h.signal + " within 10 minutes of starting";
}

// ACT-3b: the replacements that are not stable yet.
std::vector<ExplainSettling> settling(const da::Input& in) {
  std::vector<ExplainSettling> out;
  for (const da::PodFacts& p : in.workload.pods) {
    if (p.terminating || !da::unsettled_replacement(p, in.last_eviction, in.settings.min_ready_duration, in.now))
      continue;
    ExplainSettling s;
    s.pod = p.name;
    s.ready = p.ready;
    if (p.ready && p.ready_since != common::TimePoint{}) s.ready_since = common::format_rfc3339(p.ready_since);
    if (p.last_restart != common::TimePoint{}) s.restarted_at = common::format_rfc3339(p.last_restart);
    if (auto at = da::settles_at(p, in.last_eviction, in.settings.min_ready_duration, in.now))
      s.stable_at = common::format_rfc3339(*at);
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const ExplainSettling& x, const ExplainSettling& y) { return x.pod < y.pod; });
  return out;
}

}  // namespace

void explain_actuation(const ExplainContext& ctx, const api::WorkloadView& view, const std::string& pod,
                       Explanation& e) {
  ExplainActuation a;
  auto facts = observe::cached_actuation_facts(ctx.caches);
  auto w = controllers::read_workload(*facts, ctx.catalog, observe::workload_key(view));
  auto tmpl = w ? facts->pod_template(*w->view) : std::nullopt;
  if (!w || !w->match.managed || w->match.on_hold) {
    a.note = "no evictions: the workload is not managed (or its policies are on hold)";
  } else if (!tmpl) {
    a.note = "no evictions: there is no pod template or live pod to compute the desired allocation from";
  } else {
    // PodAdmissionWebhookHealthy as the engine last wrote it on global-config (ACT-2).
    auto gc = ctx.client.get(api::object_path(api::Kind::kGlobalConfiguration, "", ctx.options.global_config_name));
    const json* conditions = gc ? status_conditions(*gc) : nullptr;
    if (conditions) {
      for (const auto& c : *conditions)
        if (c.is_object() && c.value("type", json()) == "PodAdmissionWebhookHealthy")
          a.webhook_healthy = c.value("status", json()) == "True";
    }
    const decide::AdmissionDecision d = controllers::desired_decision(*w, *tmpl, ctx.now, false);  // ACT-1
    da::Input in = controllers::resize_input(*facts, *w, d, a.webhook_healthy, false, ctx.now);
    in.last_eviction = last_eviction(ctx.client, in.workload);  // ACT-3b
    const std::vector<da::Harm> harm = find_harm(in, *w->view);  // ACT-10
    const da::Plan plan = da::decide(in);
    a.desired = in.desired ? controllers::allocation_text(*in.desired) : "none (admission would not convert it)";
    a.result = da::result_name(plan.result);
    a.budget = plan.budget;
    a.in_flight = plan.in_flight;
    a.min_ready_duration = common::format_go_duration(in.settings.min_ready_duration);
    if (in.last_eviction) a.last_eviction = common::format_rfc3339(*in.last_eviction + std::chrono::seconds(1));
    a.settling = settling(in);
    for (const da::PodPlan& pp : plan.pods) {
      if (!pod.empty() && pp.name != pod) continue;
      ExplainPodActuation p;
      p.pod = pp.name;
      p.in_sync = !pp.candidate;
      p.desired = a.desired;
      const da::PodFacts* f = nullptr;
      for (const auto& x : in.workload.pods)
        if (x.name == pp.name) f = &x;
      if (f) p.live = controllers::allocation_text(f->live);
      for (const auto& h : harm)
        if (h.pod == pp.name && p.harm.empty()) p.harm = harm_text(h);
      p.evict_now = std::find(plan.evict.begin(), plan.evict.end(), pp.name) != plan.evict.end();
      for (const auto& c : pp.failed) {
        p.blocked_by.push_back(explain_reason(c.name));
        if (c.name == da::check::kReplacementDoesNotFit && !pp.fit_reason.empty())  // ACT-2a: the best node's reason
          p.blocked_by.back().sentence += " Best try: " + pp.fit_reason + ".";
        if (c.name == da::check::kMinReadyDurationNotMet) {  // a crash-looping pod is never Ready long enough
          auto live = ctx.client.get("/api/v1/namespaces/" + in.workload.ns + "/pods/" + pp.name);
          if (const std::string ev = live ? crash_loop_evidence(*live) : ""; !ev.empty())
            p.blocked_by.back() = crash_looping_reason(ev, f && da::resized_down(*f));  // ACT-10
        }
        if (c.name == da::check::kPauseActive && f) {  // ACT-2: which pause-until, on which object
          const da::WorkloadFacts& wf = in.workload;
          p.pause = pause_of(&f->annotations, f->name, wf.annotations, wf.template_annotations,
                             wf.namespace_annotations, wf.kind + "/" + wf.name, wf.ns, ctx.now, true);
        }
      }
      a.pods.push_back(std::move(p));
    }
    if (!pod.empty() && a.pods.empty())
      a.note = "the pod is not evaluated for eviction: it is finished, or not owned by a controller (ACT-1)";
    a.notes.push_back(
        "the engine also remembers, in its own process, PodDisruptionBudget refusals (ACT-5) and the loop guard's "
        "back-off (ACT-7); they show here as pdb-blocked and replacement-not-mutated in the pod's "
        "automation-constraints");
  }
  e.actuation = std::move(a);
}

}  // namespace kubex::engine
