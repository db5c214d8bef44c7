// What the `actuation` and `rollback` controllers share (SPEC §8): reading one workload as ACT-1 sees it (its
// policies, the admission decision a new pod would get now, the settings of a strategy), the per-workload
// ACT-3 expectations and ACT-5/ACT-7 memory kept between reconciles, carrying a decide::actuation::Plan out through act/ (evictions,
// their events and metric, pod constraints), and the OBS-4 summary line of the reconcile.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "act/evictor.h"
#include "common/clock.h"
#include "common/log.h"
#include "decide/actuation/actuation.h"
#include "decide/actuation/harm_guard.h"
#include "decide/policy/match.h"

namespace kubex::api {
struct WorkloadView;
}
namespace kubex::decide {
struct AdmissionDecision;
struct Summary;
}  // namespace kubex::decide
namespace kubex::decide::policy {
class Catalog;
}
namespace kubex::kube {
class EventRecorder;
class Metrics;
}
namespace kubex::act {
class AnnotationWriter;
class PodAnnotationWriter;
}
namespace kubex::observe {
class ActuationFacts;
class CatalogView;
}  // namespace kubex::observe

namespace kubex::controllers {

// ACT-5 and ACT-7 memory of one workload between reconciles, and the ACT-3 expectations: the evictions sent
// whose pods the cache does not show terminating yet. The ACT-5 refusals and the ACT-7 back-off are also kept on
// the owner (ACT-9, actuation-state): this is a cache of them, seeded from the annotation when the workload has
// none (a restart, a new leader).
struct EvictionMemory {
  decide::actuation::GuardState guard;
  std::map<std::string, common::TimePoint> sent_evictions;  // pod uid → when the eviction was accepted
  std::optional<common::TimePoint> last_eviction;
  std::set<std::string> pdb_blocked;
  // ACT-5: after a refused (retried) or failed eviction, no eviction before this time.
  std::optional<common::TimePoint> retry_at;
  // ACT-10: the harm-guard floors (kept on the owner too), and whether the last pod evicted was crashing already
  // (then its replacement's crashes are not the resize's doing).
  decide::actuation::HarmFloors harm_floors;
  bool predecessor_crashing = false;
  // ACT-9: the actuation-state value the owner is known to carry (read when seeded, or last written; nullopt =
  // none), so a write is not repeated while the informer has not caught up with it.
  std::optional<std::string> state_on_owner;
};

class EvictionMemories {
 public:
  EvictionMemory get(const std::string& key);
  std::optional<EvictionMemory> find(const std::string& key);
  void put(const std::string& key, EvictionMemory m);
  void erase(const std::string& key);

 private:
  std::mutex mu_;
  std::map<std::string, EvictionMemory> memory_;
};

// One workload as the actuation and rollback reconciles read it.
struct WorkloadContext {
  std::shared_ptr<const api::WorkloadView> view;
  std::shared_ptr<const decide::policy::Catalog> catalog;
  std::string ns;
  decide::policy::Workload workload;  // SEL-3 input
  decide::policy::Match match;        // SEL-3…SEL-10, RBK-4
  std::map<std::string, std::string> namespace_annotations;
};
// nullopt when the workload is gone from the caches.
std::optional<WorkloadContext> read_workload(const observe::ActuationFacts& facts, const observe::CatalogView& catalog,
                                             const std::string& key);

// ACT-1: the admission decision (ADM-5…13) on `pod_template`, with pause-until and automationEnabled lifted
// (ACT-2 judges both itself: pause-active, automation-disabled).
decide::AdmissionDecision desired_decision(const WorkloadContext& w, const nlohmann::json& pod_template,
                                           common::TimePoint now, bool dry_run);

// The decision's settings: the strategy "<Kind>/<name>" (built-in defaults when "" or gone, RBK-2), the
// GlobalConfiguration, the namespace's protection, webhook health and --dry-run.
decide::actuation::Settings settings_for(const WorkloadContext& w, const std::string& strategy_ref,
                                         bool webhook_healthy, bool dry_run);

// The workload half of decide::actuation::Input.
decide::actuation::WorkloadFacts workload_facts(const WorkloadContext& w, std::vector<decide::actuation::PodFacts> pods);

// The resize decision's input (ACT-1…ACT-3, ACT-2a) of a workload: the desired allocation of `decided` (none when
// admission skipped it), the strategy's settings, the pods, and, when a candidate is an upsize, the cluster's GPU
// pool with GlobalConfiguration's memory reserve. The actuation controller and `kubex explain` read it alike.
decide::actuation::Input resize_input(const observe::ActuationFacts& facts, const WorkloadContext& w,
                                      const decide::AdmissionDecision& decided, bool webhook_healthy, bool dry_run,
                                      common::TimePoint now);

// "app=0.5 (fraction) side=1 (whole)", "none" for an empty allocation.
std::string allocation_text(const decide::actuation::Allocation& a);

// What carries a plan out.
struct PlanRunner {
  act::Evictor* evictor = nullptr;
  act::PodAnnotationWriter* pod_annotations = nullptr;
  // ACT-9: writes actuation-state on the owner; null keeps the memory in process only.
  act::AnnotationWriter* owner_annotations = nullptr;
  kube::EventRecorder* events = nullptr;  // may be null
  const common::Logger* log = nullptr;
  act::EvictionReason reason = act::EvictionReason::kResize;
  // The event on an evicted pod: PolicyEvaluationEvictResize (ACT-4) or PolicyEvaluationEvictRollback (RBK-2).
  std::string evicted_event;
  // ACT-10: kubex_resize_harm_total is counted here; null counts nothing. Set for resizes only.
  kube::Metrics* harm_metrics = nullptr;
  // What the evicted pod's replacement will get, for event messages ("app=0.5 (fraction)", "its original form").
  std::string target_text;
};

// Each eviction of plan.evict (ACT-4; the outcome folded back by decide::actuation::apply_outcome) with its
// events, the ACT-3 expectation of each accepted one, the WouldEvict events of a dry run (ACT-8),
// ReplacementNotMutated (ACT-7), the new memory, and the pods' automation-constraints where their set changed
// (OBS-3).
void carry_out(const PlanRunner& run, decide::actuation::Plan& plan, const decide::actuation::Input& in,
               EvictionMemory& memory, const WorkloadContext& w);

// decide::actuation::decide() on `in` with the workload's memory (ACT-3's expectations, ACT-5's retry time, last
// eviction and PDB refusals, and for a resize ACT-7's loop guard), then carry_out(), keeping the new memory under
// `key`. When `memories` has none for the workload, the ACT-5 refusals and ACT-7 back-off are read from the owner's
// actuation-state (ACT-9); when they change, the annotation is written (removed when empty) through
// run.owner_annotations, never in dry-run. Returns the plan as carried out (a failed or stale state write asks for
// an early requeue).
decide::actuation::Plan decide_and_carry_out(const PlanRunner& run, decide::actuation::Input& in,
                                             EvictionMemories& memories, const std::string& key,
                                             const WorkloadContext& w);

// OBS-4: the reconcile's `rightsizing summary` line (phase `actuation` or `rollback`), with the changes of the
// pod it names towards `in.desired`.
class SummaryLog;
void log_summary(const common::Logger& log, SummaryLog& summaries, const std::string& phase, const WorkloadContext& w,
                 const decide::Summary& decided, const decide::actuation::Plan& plan,
                 const decide::actuation::Input& in);

}  // namespace kubex::controllers
