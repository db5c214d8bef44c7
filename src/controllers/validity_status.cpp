#include "controllers/validity_status.h"

#include <exception>

#include "api/kubex_views.h"
#include "api/validate.h"
#include "kube/runtime/event_recorder.h"
#include "controllers/status_support.h"
#include "act/status_writer.h"
#include "decide/status/object_status.h"
#include "kube/cache/informer.h"
#include "observe/catalog_view.h"
#include "observe/kubex_meta.h"

namespace kubex::controllers {

namespace {

kube::ControllerOptions controller_options(const ValidityStatusDeps& d) {
  kube::ControllerOptions o;
  o.workers = 1;
  o.clock = d.clock;
  o.metrics = d.metrics;
  return o;
}

}  // namespace

ValidityStatusController::ValidityStatusController(ValidityStatusDeps deps)
    : deps_(std::move(deps)),
      clock_(deps_.clock ? *deps_.clock : common::RealClock::instance()),
      controller_(std::make_unique<kube::Controller>(
          kName, [this](const std::string& key) { return reconcile(key); }, controller_options(deps_))) {}

ValidityStatusController::~ValidityStatusController() {
  controller_->stop();
}

bool ValidityStatusController::handles(api::Kind k) {
  return api::is_strategy(k) || k == api::Kind::kGpuConsolidationPolicy ||
         k == api::Kind::kGlobalConfiguration || k == api::Kind::kPolicyEvaluation;
}

void ValidityStatusController::enqueue(api::Kind k, const common::CachedObject& o) {
  controller_->enqueue(object_id(k, o).key());
}

void ValidityStatusController::watch(api::Kind k, kube::Informer& informer) {
  std::weak_ptr<ValidityStatusController> self = weak_from_this();
  kube::InformerHandlers h;
  h.on_add = [self, k](const common::ObjectPtr& o) {
    if (auto s = self.lock(); s && o) s->enqueue(k, *o);
  };
  h.on_update = [self, k](const common::ObjectPtr& old_obj, const common::ObjectPtr& new_obj) {
    auto s = self.lock();
    if (!s || !new_obj) return;
    // Status writes (ours or another controller's) leave metadata.generation alone: only spec changes count.
    if (observe::generation_changed(k, old_obj.get(), new_obj.get())) {
      s->enqueue(k, *new_obj);
    }
  };
  informer.add_handlers(std::move(h));
}

kube::ReconcileOutcome ValidityStatusController::reconcile(const std::string& key) {
  try {
    return reconcile_object(key);
  } catch (const std::exception& e) {
    return std::unexpected(std::string("reconcile of ") + key + " failed: " + e.what());
  } catch (...) {
    return std::unexpected("reconcile of " + key + " failed");
  }
}

// KAI-2a: a valid strategy that turns the burst limit off while the cluster runs NvFractions stays Valid, with a
// Warning event saying that every fraction it writes is a hard memory cap (the VAL-2 warning admission gives too).
void ValidityStatusController::warn_hard_caps(const ObjectId& id, const api::StrategyObject& strategy) {
  if (!deps_.events || !deps_.objects || strategy.parsed.value.spec.fraction_limit_enabled) return;
  if (!strategy.parsed.value.spec.kai_mode()) return;
  common::ObjectPtr g = deps_.objects->object(api::Kind::kGlobalConfiguration, deps_.global_config_name);
  const auto* global = dynamic_cast<const api::GlobalConfigObject*>(g.get());
  if (!global || api::gpu_sharing_mode(global->parsed.value.spec) != api::kSharingNvFractions) return;
  const api::ObjectMeta* meta = observe::meta_of(id.kind, strategy);
  kube::ObjectReference ref;
  ref.api_version = api::kApiVersion;
  ref.kind = api::info(id.kind).name;
  ref.ns = id.ns;
  ref.name = id.name;
  if (meta) ref.uid = meta->uid;
  deps_.events->event(ref, kube::EventType::kWarning, "FractionLimitDisabled", api::kFractionLimitOffWarning);
}

kube::ReconcileOutcome ValidityStatusController::reconcile_object(const std::string& key) {
  auto id = parse_object_key(key);
  if (!id || !handles(id->kind)) return kube::ReconcileResult{};  // not ours: dropped
  common::ObjectPtr obj = deps_.objects ? deps_.objects->object(id->kind, id->cache_key()) : nullptr;
  if (!obj) return kube::ReconcileResult{};  // deleted: nothing to report on
  const api::ObjectMeta* meta = observe::meta_of(id->kind, *obj);
  if (!meta) return kube::ReconcileResult{};

  decide::Verdict verdict;
  act::StatusChange change;
  if (api::is_strategy(id->kind)) {
    verdict = decide::verdict_of(dynamic_cast<const api::StrategyObject&>(*obj).parsed.report);
  } else if (id->kind == api::Kind::kGlobalConfiguration) {
    verdict = decide::singleton_verdict(dynamic_cast<const api::GlobalConfigObject&>(*obj).parsed.report,
                                        id->name, api::info(id->kind).singleton, deps_.global_config_name);
  } else if (id->kind == api::Kind::kPolicyEvaluation) {
    verdict =
        decide::singleton_verdict(dynamic_cast<const api::PolicyEvaluationObject&>(*obj).parsed.report,
                                  id->name, api::info(id->kind).singleton, deps_.policy_evaluation_name);
  } else {
    verdict = decide::verdict_of(dynamic_cast<const api::ConsolidationObject&>(*obj).parsed.report);
  }

  if (id->kind == api::Kind::kGpuConsolidationPolicy) {
    // A valid policy's Available belongs to the consolidation controller once it wrote one; until then (and
    // for an invalid policy) validation says what happens.
    bool controller_owned = false;
    for (const auto& c : cached_conditions(id->kind, *obj)) {
      controller_owned = controller_owned || (c.type == decide::kCondAvailable && !decide::is_validation_condition(c));
    }
    if (verdict.valid && controller_owned) return kube::ReconcileResult{};
    change.set.push_back(to_update(decide::consolidation_condition(verdict)));
    // The cache may not show the consolidation controller's first write yet: the write itself keeps any
    // reason of that controller for a valid policy (only InvalidSpec/InvalidContract override them).
    if (verdict.valid) {
      change.keep_reasons[decide::kCondAvailable] = {"NoCandidate", "Draining",  "Drained",
                                                     "DrainBlocked", "WouldDrain", "NoMatchingNodeSelector"};
    }
  } else {
    change.set.push_back(to_update(decide::valid_condition(verdict)));
  }
  if (api::is_strategy(id->kind) && verdict.valid) warn_hard_caps(*id, dynamic_cast<const api::StrategyObject&>(*obj));
  common::Duration requeue =
      verdict.valid ? common::Duration::zero() : common::Duration(decide::kInvalidRequeue);
  return write_status(*deps_.writer, deps_.events, *id, *meta, std::move(change), clock_.now(), requeue);
}

}  // namespace kubex::controllers
