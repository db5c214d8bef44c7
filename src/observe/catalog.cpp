#include "observe/catalog.h"

#include <nlohmann/json.hpp>

#include "api/kubex_views.h"
#include "decide/policy/catalog.h"
#include "kube/cache/discovery.h"
#include "kube/cache/informer.h"
#include "kube/client/client.h"
#include "observe/kubex_meta.h"

namespace kubex::observe {

namespace {

bool in_catalog(api::Kind k) {
  return api::is_strategy(k) || api::is_policy(k) || k == api::Kind::kGlobalConfiguration ||
         k == api::Kind::kPolicyEvaluation;
}

}  // namespace

CatalogCache::CatalogCache(const std::shared_ptr<kube::Client>& client, CatalogOptions options)
    : options_(std::move(options)) {
  auto discovery = std::make_shared<kube::ApiDiscovery>(client);
  for (const auto& ki : api::all_kinds()) {
    api::Kind k = ki.kind;
    kube::InformerOptions io;
    io.absent_ok = true;  // the CRDs may be installed after the engine
    io.discovery = discovery;  // then found through API discovery, not by listing each kind again
    auto inf = std::make_shared<kube::Informer>(
        client, api::collection_path(k),
        [k](const nlohmann::json& o) -> kube::ObjectPtr { return api::project_kubex_object(k, o); }, io);
    kube::InformerHandlers h;
    h.on_add = [this, k](const kube::ObjectPtr& o) { changed(k, o); };
    // Status-only writes (the engine's own conditions) do not change what decisions read: no notification,
    // or every status write would trigger the controllers that write status again.
    h.on_update = [this, k](const kube::ObjectPtr& old, const kube::ObjectPtr& o) {
      if (generation_changed(k, old.get(), o.get())) changed(k, o);
    };
    h.on_delete = [this, k](const kube::ObjectPtr& o) { changed(k, o); };
    inf->add_handlers(std::move(h));
    informers_[k] = std::move(inf);
  }
}

CatalogCache::~CatalogCache() = default;

std::vector<std::pair<std::string, std::shared_ptr<kube::Informer>>> CatalogCache::informers() const {
  std::vector<std::pair<std::string, std::shared_ptr<kube::Informer>>> out;
  for (const auto& [k, inf] : informers_) out.emplace_back(api::info(k).plural, inf);
  return out;
}

std::shared_ptr<kube::Informer> CatalogCache::informer(api::Kind k) const {
  auto it = informers_.find(k);
  return it == informers_.end() ? nullptr : it->second;
}

void CatalogCache::on_change(Listener listener) {
  listeners_.push_back(std::move(listener));
}

void CatalogCache::changed(api::Kind k, const common::ObjectPtr& obj) {
  if (in_catalog(k)) generation_.fetch_add(1);
  for (const auto& l : listeners_) l(k, obj);
}

common::ObjectPtr CatalogCache::object(api::Kind k, const std::string& key) const {
  auto inf = informer(k);
  return inf ? inf->get(key) : nullptr;
}

std::shared_ptr<const api::GlobalConfigObject> CatalogCache::global_config() const {
  auto o = informer(api::Kind::kGlobalConfiguration)->get(options_.global_config_name);
  return kube::as<api::GlobalConfigObject>(o);
}

common::ObjectPtr CatalogCache::policy_evaluation() const {
  return informer(api::Kind::kPolicyEvaluation)->get(options_.policy_evaluation_name);
}

std::shared_ptr<const decide::policy::Catalog> CatalogCache::catalog() const {
  std::lock_guard lk(mu_);
  std::uint64_t gen = generation_.load();
  if (catalog_ && built_generation_ == gen) return catalog_;
  std::vector<decide::policy::PolicyInput> policies;
  std::vector<decide::policy::StrategyInput> strategies;
  for (const auto& [k, inf] : informers_) {
    if (api::is_strategy(k)) {
      for (const auto& o : inf->list())
        strategies.push_back(decide::policy::strategy_input(kube::as<api::StrategyObject>(o)));
    } else if (api::is_policy(k)) {
      for (const auto& o : inf->list())
        policies.push_back(decide::policy::policy_input(kube::as<api::PolicyObject>(o)));
    }
  }
  // Invalid singletons still give their best-effort values: a partly wrong global-config must not silently
  // turn automation back on (VAL-6 reports it on the object).
  api::GlobalConfigSpec global;
  if (auto g = global_config()) global = g->parsed.value.spec;
  api::PolicyEvaluation evaluation;
  if (auto e = policy_evaluation()) evaluation = kube::as<api::PolicyEvaluationObject>(e)->parsed.value;
  catalog_ = std::make_shared<const decide::policy::Catalog>(std::move(policies), std::move(strategies),
                                                             std::move(global), std::move(evaluation));
  built_generation_ = gen;
  return catalog_;
}

}  // namespace kubex::observe
