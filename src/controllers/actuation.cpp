#include "controllers/actuation.h"

#include <nlohmann/json.hpp>

#include "act/evictor.h"
#include "act/owner_annotations.h"
#include "act/pod_annotations.h"
#include "api/keys.h"
#include "decide/actuation/rollback.h"
#include "controllers/workload_evictions.h"
#include "controllers/webhook_health_signal.h"
#include "decide/admission/pod_mutation.h"
#include "observe/workloads.h"

namespace kubex::controllers {

namespace {

namespace da = decide::actuation;

}  // namespace

ActuationController::ActuationController(ActuationDeps deps, ActuationOptions options)
    : WorkloadController(kName, std::move(deps.facts), options.clock, options.metrics),
      deps_(std::move(deps)),
      options_(options),
      gpus_(options.metrics) {}

void ActuationController::publish_gpus(const std::string& key, const WorkloadContext& w,
                                       const std::vector<da::PodFacts>& pods) {
  std::optional<da::Original> original;
  if (const common::IStr* rb = w.view->annotation(api::keys::kRollbackState)) {  // RBK-1 `original`
    if (auto st = da::parse_rollback_state(rb->view())) original = st->original;
  }
  if (!original) {
    if (auto tmpl = facts().original(*w.view)) original = da::original_from_template(*tmpl);
  }
  gpus_.set(key, w.ns, w.view->kind.str(), w.view->name, decide::report::workload_gpus(original ? &*original : nullptr, pods));
}

ActuationController::~ActuationController() {
  stop();
}

kube::ReconcileOutcome ActuationController::reconcile_workload(const std::string& key) {
  std::optional<WorkloadContext> w = read_workload(facts(), *deps_.catalog, key);
  if (!w || !w->match.managed || w->match.on_hold) {  // gone; RBK-4 hold; leaving management is RBK-2's
    memory_.erase(key);
    gpus_.drop(key);
    return kube::ReconcileResult{};
  }
  auto tmpl = facts().pod_template(*w->view);
  if (!tmpl) return kube::ReconcileResult{false, std::chrono::minutes(1)};

  const common::TimePoint now = this->now();
  decide::AdmissionDecision d = desired_decision(*w, *tmpl, now, options_.dry_run);  // ACT-1
  da::Input in = resize_input(facts(), *w, d, !deps_.webhook || deps_.webhook->healthy(), options_.dry_run, now);
  PlanRunner run;
  run.evictor = deps_.evictor.get();
  run.pod_annotations = deps_.pod_annotations.get();
  run.owner_annotations = deps_.owner_annotations.get();
  run.events = deps_.events;
  run.log = &log_;
  run.reason = act::EvictionReason::kResize;
  run.harm_metrics = options_.metrics;
  run.evicted_event = "PolicyEvaluationEvictResize";
  run.target_text = "the GPU allocation " + (in.desired ? allocation_text(*in.desired) : std::string("none"));
  publish_gpus(key, *w, in.workload.pods);  // RPT-5
  const da::Plan plan = decide_and_carry_out(run, in, memory_, key, *w);
  log_summary(log_, summaries_, "actuation", *w, d.summary, plan, in);  // OBS-4: one line per reconcile
  return kube::ReconcileResult{false, plan.requeue_after};
}

}  // namespace kubex::controllers
