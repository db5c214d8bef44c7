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

// ACT-10: finds the pods a downsize harmed, raises the floors (a new one: ResizeHarmedWorkload, the metric), and
// tells decide() which pods are harmed and whether a floor is not on the owner yet (then nothing is evicted).
void guard_against_harm(const PlanRunner& run, da::Input& in, EvictionMemory& memory, const WorkloadContext& w) {
  std::vector<da::HistoryEntry> history;
  if (const common::IStr* rb = w.view->annotation(api::keys::kRollbackState)) {
    if (auto st = da::parse_rollback_state(rb->view())) history = std::move(st->history);
  }
  const std::vector<da::Harm> found = da::find_harm(in.workload.pods, history, memory.predecessor_crashing, in.now);
  const da::HarmFloors next = da::merge_floors(memory.harm_floors, found, in.now);
  for (const da::Harm& h : found) in.harmed.insert(h.pod);
  std::vector<const da::Harm*> raised;
  for (const da::Harm& h : found) {
    auto before = memory.harm_floors.find(h.container);
    if (before == memory.harm_floors.end() || before->second.until <= in.now || before->second.floor < h.from) {
      raised.push_back(&h);
    }
  }
  memory.harm_floors = next;
  // A floor the cached owner does not show yet: the desired value decide() sees does not hold it either. A dry run
  // writes no floor (ACT-8), so it has nothing to wait for.
  if (in.settings.dry_run) return;
  const common::IStr* on_owner = w.view->annotation(api::keys::kActuationState);
  for (const auto& [container, f] : next) {
    auto shown = on_owner ? da::floor_of(on_owner->view(), container, in.now) : std::nullopt;
    if (!shown || *shown < f.floor) in.harm_found_now = true;
  }
  if (raised.empty()) return;
  const da::Harm& h = *raised.front();
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
