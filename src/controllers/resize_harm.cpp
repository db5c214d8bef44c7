// ACT-10 in the actuation reconcile: the harm a downsize did, the floors kept for it, and what is said about it.
#include "controllers/resize_harm.h"

#include <nlohmann/json.hpp>
#include <prometheus/counter.h>
#include <prometheus/family.h>

#include "act/owner_annotations.h"
#include "api/keys.h"
#include "api/views.h"
#include "decide/actuation/rollback.h"
#include "kube/runtime/event_recorder.h"
#include "kube/runtime/metrics.h"

namespace kubex::controllers {

namespace da = decide::actuation;

// ACT-10: finds the pods a downsize harmed and takes decide::actuation::harm_step() on them: the floors to keep, the
// harmed pods and whether to wait for the owner go to decide(); a raised floor is announced (ResizeHarmedWorkload,
// the metric, a warn line).
void guard_against_harm(const PlanRunner& run, da::Input& in, EvictionMemory& memory, const WorkloadContext& w) {
  std::vector<da::HistoryEntry> history;
  if (const common::IStr* rb = w.view->annotation(api::keys::kRollbackState)) {
    if (auto st = da::parse_rollback_state(rb->view())) history = std::move(st->history);
  }
  const std::vector<da::Harm> found = da::find_harm(in.workload.pods, history, memory.predecessor_crashing, in.now);
  std::optional<std::string_view> on_owner;
  if (const common::IStr* st = w.view->annotation(api::keys::kActuationState)) on_owner = st->view();
  da::HarmStep step = da::harm_step(memory.harm_floors, found, on_owner, in.settings.dry_run, in.now);
  memory.harm_floors = std::move(step.floors);
  in.harmed.insert(step.harmed.begin(), step.harmed.end());
  in.harm_found_now = step.wait_for_owner;
  if (step.raised.empty() || in.settings.dry_run) return;
  const da::Harm& h = step.raised.front();
  const std::string text = "pod " + h.pod + " (container " + h.container + " resized from " +
                           decide::format_gpu(h.from) + " to " + decide::format_gpu(h.to) + " GPU) had " + h.signal +
                           " within 10 minutes of starting: kubex stopped evicting this workload, keeps " + h.container +
                           " at " + decide::format_gpu(h.from) + " GPU or more for 24h (harm-guard) and replaces the " +
                           "harmed pods";
  run.log->warn("a resize harmed the workload", {{"namespace", w.ns}, {"owner", w.workload.ref()}, {"pod", h.pod},
                                                  {"container", h.container}, {"signal", h.signal},
                                                  {"floor", decide::format_gpu(h.from)}});
  if (run.events) {
    const api::WorkloadView& v = *w.view;
    run.events->event({act::owner_api_version(v.kind.str()), v.kind.str(), w.ns, v.name, v.uid, "", ""},
                      kube::EventType::kWarning, "ResizeHarmedWorkload", text);
  }
  if (run.harm_metrics) {
    run.harm_metrics
        ->counter_family("kubex_resize_harm_total",
                         "Resizes that harmed a workload (ACT-10): a container kubex resized down was OOM-killed or "
                         "restarted twice within 10 minutes of starting; kubex put a harm-guard floor on it.")
        .Add({{"namespace", w.ns}, {"kind", w.view->kind.str()}})
        .Increment();
  }
}

}  // namespace kubex::controllers
