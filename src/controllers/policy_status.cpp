#include "controllers/policy_status.h"

#include <exception>
#include <nlohmann/json.hpp>

#include "api/kubex_views.h"
#include "common/time_format.h"
#include "controllers/status_support.h"
#include "act/status_writer.h"
#include "decide/policy/catalog.h"
#include "decide/policy/scope.h"
#include "decide/status/policy_status.h"
#include "kube/cache/informer.h"
#include "kube/runtime/predicates.h"
#include "observe/catalog_view.h"
#include "observe/kubex_meta.h"
#include "observe/workloads.h"

namespace kubex::controllers {

namespace {

kube::ControllerOptions controller_options(const PolicyStatusDeps& d) {
  kube::ControllerOptions o;
  o.workers = 1;
  o.clock = d.clock;
  o.metrics = d.metrics;
  return o;
}

std::string policy_key(const api::Policy& p) {
  return ObjectId{p.kind, p.meta.ns, p.meta.name}.key();
}

// Status writes leave metadata.generation alone: our own writes do not come back as work.
bool spec_changed(api::Kind k, const common::ObjectPtr& old_obj, const common::CachedObject& new_obj) {
  return observe::generation_changed(k, old_obj.get(), &new_obj);
}

}  // namespace

PolicyStatusController::PolicyStatusController(PolicyStatusDeps deps)
    : deps_(std::move(deps)),
      clock_(deps_.clock ? *deps_.clock : common::RealClock::instance()),
      controller_(std::make_unique<kube::Controller>(
          kName, [this](const std::string& key) { return reconcile(key); }, controller_options(deps_))) {}

PolicyStatusController::~PolicyStatusController() {
  controller_->stop();
}

void PolicyStatusController::watch_policies(api::Kind k, kube::Informer& informer) {
  std::weak_ptr<PolicyStatusController> self = weak_from_this();
  kube::InformerHandlers h;
  h.on_add = [self, k](const common::ObjectPtr& o) {
    if (auto s = self.lock(); s && o) s->policy_changed(k, o->ns.str(), o->name);
  };
  h.on_update = [self, k](const common::ObjectPtr& old_obj, const common::ObjectPtr& new_obj) {
    auto s = self.lock();
    if (!s || !new_obj) return;
    if (spec_changed(k, old_obj, *new_obj)) s->policy_changed(k, new_obj->ns.str(), new_obj->name);
  };
  informer.add_handlers(std::move(h));
}

void PolicyStatusController::watch_strategies(api::Kind k, kube::Informer& informer) {
  std::weak_ptr<PolicyStatusController> self = weak_from_this();
  kube::InformerHandlers h;
  h.on_add = [self, k](const common::ObjectPtr& o) {
    if (auto s = self.lock(); s && o) s->strategy_changed(k, o->ns.str(), o->name);
  };
  h.on_update = [self, k](const common::ObjectPtr& old_obj, const common::ObjectPtr& new_obj) {
    auto s = self.lock();
    if (!s || !new_obj) return;
    if (spec_changed(k, old_obj, *new_obj)) s->strategy_changed(k, new_obj->ns.str(), new_obj->name);
  };
  h.on_delete = [self, k](const common::ObjectPtr& o) {
    if (auto s = self.lock(); s && o) s->strategy_changed(k, o->ns.str(), o->name);
  };
  informer.add_handlers(std::move(h));
}

void PolicyStatusController::watch_global_config(kube::Informer& informer) {
  std::weak_ptr<PolicyStatusController> self = weak_from_this();
  const std::string name = deps_.global_config_name;
  constexpr api::Kind k = api::Kind::kGlobalConfiguration;
  kube::InformerHandlers h;
  h.on_add = [self, name](const common::ObjectPtr& o) {
    if (auto s = self.lock(); s && o && o->name == name) s->all_changed();
  };
  h.on_update = [self, name](const common::ObjectPtr& old_obj, const common::ObjectPtr& new_obj) {
    auto s = self.lock();
    if (!s || !new_obj || new_obj->name != name) return;
    if (spec_changed(k, old_obj, *new_obj)) s->all_changed();
  };
  h.on_delete = [self, name](const common::ObjectPtr& o) {
    if (auto s = self.lock(); s && o && o->name == name) s->all_changed();
  };
  informer.add_handlers(std::move(h));
}

void PolicyStatusController::watch_workloads(kube::Informer& informer) {
  std::weak_ptr<PolicyStatusController> self = weak_from_this();
  auto view = [](const common::ObjectPtr& o) { return dynamic_cast<const api::WorkloadView*>(o.get()); };
  kube::InformerHandlers h;
  h.on_add = [self, view](const common::ObjectPtr& o) {
    if (auto s = self.lock()) s->workload_changed(nullptr, view(o));
  };
  h.on_update = [self, view](const common::ObjectPtr& old_obj, const common::ObjectPtr& new_obj) {
    auto s = self.lock();
    const api::WorkloadView* a = view(old_obj);
    const api::WorkloadView* b = view(new_obj);
    if (!s || !b) return;
    // Status and spec churn of workloads (replica counts, rollouts) does not change what a scope matches.
    if (a && !kube::labels_changed(a, b) && !kube::controller_changed(a->owners, b->owners)) return;
    s->workload_changed(a, b);
  };
  h.on_delete = [self, view](const common::ObjectPtr& o) {
    if (auto s = self.lock()) s->workload_changed(view(o), nullptr);
  };
  informer.add_handlers(std::move(h));
}

void PolicyStatusController::policy_changed(api::Kind k, const std::string& ns, const std::string& name) {
  controller_->enqueue(ObjectId{k, ns, name}.key());
}

void PolicyStatusController::strategy_changed(api::Kind strategy_kind, const std::string& ns,
                                              const std::string& name) {
  auto cat = deps_.catalog ? deps_.catalog->catalog() : nullptr;
  if (!cat) return;
  for (const auto& lp : cat->policies()) {
    if (!lp.input.policy) continue;
    const api::Policy& p = *lp.input.policy;
    if (api::strategy_kind_for(p.kind) != strategy_kind || p.common().strategy_ref != name) continue;
    if (strategy_kind == api::Kind::kAutomationStrategy && p.meta.ns != ns) continue;
    controller_->enqueue(policy_key(p));
  }
}

void PolicyStatusController::all_changed() {
  auto cat = deps_.catalog ? deps_.catalog->catalog() : nullptr;
  if (!cat) return;
  for (const auto& lp : cat->policies()) {
    if (lp.input.policy) controller_->enqueue(policy_key(*lp.input.policy));
  }
}

void PolicyStatusController::workload_changed(const api::WorkloadView* before,
                                              const api::WorkloadView* after) {
  if (!before && !after) return;
  auto cat = deps_.catalog ? deps_.catalog->catalog() : nullptr;
  if (!cat) return;
  const auto& patterns = cat->global().protected_namespace_patterns;
  auto matches = [&](const api::Policy& p, const api::WorkloadView* v) {
    return v && decide::is_workload_root(*v) &&
           decide::policy::scope_matches(p, decide::scope_workload(*v), patterns);
  };
  for (const auto& lp : cat->policies()) {
    if (!lp.input.policy || !lp.input.scope_evaluates) continue;
    const api::Policy& p = *lp.input.policy;
    if (matches(p, before) || matches(p, after))
      controller_->queue().add_after(policy_key(p), kWorkloadCoalesce);
  }
}

kube::ReconcileOutcome PolicyStatusController::reconcile(const std::string& key) {
  try {
    return reconcile_policy(key);
  } catch (const std::exception& e) {
    return std::unexpected(std::string("reconcile of ") + key + " failed: " + e.what());
  } catch (...) {
    return std::unexpected("reconcile of " + key + " failed");
  }
}

kube::ReconcileOutcome PolicyStatusController::reconcile_policy(const std::string& key) {
  auto id = parse_object_key(key);
  if (!id || !api::is_policy(id->kind)) return kube::ReconcileResult{};  // not ours: dropped
  auto cat = deps_.catalog ? deps_.catalog->catalog() : nullptr;
  if (!cat) return kube::ReconcileResult{};
  const decide::policy::LinkedPolicy* linked = nullptr;
  for (const auto& lp : cat->policies()) {
    if (!lp.input.policy) continue;
    const api::Policy& p = *lp.input.policy;
    if (p.kind == id->kind && p.meta.ns == id->ns && p.meta.name == id->name) {
      linked = &lp;
      break;
    }
  }
  if (!linked) return kube::ReconcileResult{};  // deleted: nothing to report on
  const api::Policy& p = *linked->input.policy;

  decide::PolicyStatusInput in;
  in.kind = p.kind;
  in.ns = p.meta.ns;
  in.strategy_ref = p.common().strategy_ref;
  in.spec.valid = linked->input.spec_valid;
  in.spec.contract = !linked->input.spec_valid && linked->input.contract;
  in.spec.message = linked->input.message;
  in.resolution = linked->resolution;
  if (linked->strategy) in.strategy_message = linked->strategy->message;
  decide::PolicyConditions conds = decide::policy_conditions(in);

  std::vector<std::shared_ptr<const api::WorkloadView>> views;
  if (deps_.workloads) views = deps_.workloads->list();
  std::int64_t matched = decide::count_matched_workloads(p, linked->input.scope_evaluates, views,
                                                         cat->global().protected_namespace_patterns);

  const common::TimePoint now = clock_.now();
  act::StatusChange change;
  change.set = {to_update(conds.resolved), to_update(conds.ready)};
  if (conds.valid) change.keep_reasons[decide::kCondReady] = decide::recommender_ready_reasons();
  change.fields = {{"matchedWorkloads", matched}};
  // PRO-8, REA-1: a proactive policy's lastEvaluationTime is its history evaluation's (controllers/proactive_history.h),
  // a valid reactive policy's its last cycle's (controllers/reactive.h).
  if (conds.stamps_evaluation) change.fields["lastEvaluationTime"] = common::format_rfc3339(now);
  common::Duration requeue =
      conds.valid ? common::Duration::zero() : common::Duration(decide::kInvalidRequeue);
  return write_status(*deps_.writer, deps_.events, *id, p.meta, std::move(change), now, requeue);
}

}  // namespace kubex::controllers
