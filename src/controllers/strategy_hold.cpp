#include "controllers/strategy_hold.h"

#include <algorithm>
#include <exception>
#include <vector>

#include "act/finalizers.h"
#include "act/status_writer.h"
#include "api/kubex_views.h"
#include "controllers/status_support.h"
#include "decide/policy/catalog.h"
#include "decide/status/strategy_hold.h"
#include "kube/cache/informer.h"
#include "observe/catalog_view.h"
#include "observe/kubex_meta.h"

namespace kubex::controllers {

namespace {

kube::ControllerOptions controller_options(const StrategyHoldDeps& d) {
  kube::ControllerOptions o;
  o.workers = 1;
  o.clock = d.clock;
  o.metrics = d.metrics;
  return o;
}

bool finalizers_or_deletion_changed(api::Kind k, const common::CachedObject* before,
                                    const common::CachedObject& after) {
  const api::ObjectMeta* a = observe::meta_of(k, after);
  const api::ObjectMeta* b = before ? observe::meta_of(k, *before) : nullptr;
  if (!a || !b) return true;
  return a->deleting != b->deleting || a->finalizers != b->finalizers || a->generation != b->generation;
}

}  // namespace

StrategyHoldController::StrategyHoldController(StrategyHoldDeps deps)
    : deps_(std::move(deps)),
      clock_(deps_.clock ? *deps_.clock : common::RealClock::instance()),
      controller_(std::make_unique<kube::Controller>(
          kName, [this](const std::string& key) { return reconcile(key); }, controller_options(deps_))) {}

StrategyHoldController::~StrategyHoldController() {
  controller_->stop();
}

void StrategyHoldController::watch_strategies(api::Kind k, kube::Informer& informer) {
  std::weak_ptr<StrategyHoldController> self = weak_from_this();
  kube::InformerHandlers h;
  h.on_add = [self, k](const common::ObjectPtr& o) {
    if (auto s = self.lock(); s && o) s->strategy_changed(k, o->ns.str(), o->name, false);
  };
  h.on_update = [self, k](const common::ObjectPtr& old_obj, const common::ObjectPtr& new_obj) {
    auto s = self.lock();
    if (!s || !new_obj) return;
    if (finalizers_or_deletion_changed(k, old_obj.get(), *new_obj)) {
      s->strategy_changed(k, new_obj->ns.str(), new_obj->name, false);
    }
  };
  h.on_delete = [self, k](const common::ObjectPtr& o) {
    if (auto s = self.lock(); s && o) s->strategy_changed(k, o->ns.str(), o->name, true);
  };
  informer.add_handlers(std::move(h));
}

void StrategyHoldController::strategy_changed(api::Kind k, const std::string& ns, const std::string& name,
                                              bool gone) {
  ObjectId id{k, ns, name};
  std::string key = id.key();
  {
    std::lock_guard lock(mu_);
    if (gone) {
      known_.erase(key);
      return;
    }
    known_.insert(key);
  }
  controller_->enqueue(key);
}

void StrategyHoldController::policies_changed() {
  std::vector<std::string> keys;
  {
    std::lock_guard lock(mu_);
    keys.assign(known_.begin(), known_.end());
  }
  for (const auto& k : keys) controller_->enqueue(k);
}

kube::ReconcileOutcome StrategyHoldController::reconcile(const std::string& key) {
  try {
    return reconcile_object(key);
  } catch (const std::exception& e) {
    return std::unexpected(std::string("reconcile of ") + key + " failed: " + e.what());
  } catch (...) {
    return std::unexpected("reconcile of " + key + " failed");
  }
}

kube::ReconcileOutcome StrategyHoldController::reconcile_object(const std::string& key) {
  auto id = parse_object_key(key);
  if (!id || !api::is_strategy(id->kind) || !deps_.objects || !deps_.catalog) return kube::ReconcileResult{};
  common::ObjectPtr obj = deps_.objects->object(id->kind, id->cache_key());
  if (!obj) return kube::ReconcileResult{};  // gone
  const api::ObjectMeta* meta = observe::meta_of(id->kind, *obj);
  if (!meta) return kube::ReconcileResult{};

  decide::StrategyHoldInput in;
  in.has_finalizer = std::find(meta->finalizers.begin(), meta->finalizers.end(),
                               decide::kReferencedFinalizer) != meta->finalizers.end();
  in.deleting = meta->deleting;
  in.referenced_by = deps_.catalog->catalog()->referencing(id->kind, id->ns, id->name);
  decide::StrategyHold hold = decide::strategy_hold(in);

  if (hold.terminating && deps_.writer) {
    act::StatusChange change;
    change.set.push_back(to_update(*hold.terminating));
    auto r = write_status(*deps_.writer, deps_.events, *id, *meta, std::move(change), clock_.now(),
                          common::Duration::zero());
    if (!r) return r;
  }
  if (hold.finalizer == decide::StrategyHold::Finalizer::kKeep || !deps_.finalizers) return kube::ReconcileResult{};
  const bool add = hold.finalizer == decide::StrategyHold::Finalizer::kAdd;
  auto r = add ? deps_.finalizers->add(id->path(), decide::kReferencedFinalizer)
               : deps_.finalizers->remove(id->path(), decide::kReferencedFinalizer);
  if (!r && !r.error().not_found()) {
    return std::unexpected(std::string("cannot ") + (add ? "add" : "remove") + " the finalizer " +
                           decide::kReferencedFinalizer + (add ? " to " : " of ") + key + ": " + r.error().message);
  }
  return kube::ReconcileResult{};
}

}  // namespace kubex::controllers
