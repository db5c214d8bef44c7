// Kubex's own objects in the engine: one informer per rightsizing.kubex.ai kind (typed projections with their
// validation verdict, api/kubex_views.h) and the linked Catalog that decisions read
// (decide/policy/catalog.h). The Catalog is rebuilt after a change of a strategy, a policy, global-config or
// policy-evaluation, and shared immutably by every reader. CRDs that are not installed yet count as empty
// until they appear.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "api/kinds.h"
#include "common/cached_object.h"
#include "observe/catalog_view.h"

namespace kubex::kube {
class Client;
class Informer;
}  // namespace kubex::kube

namespace kubex::decide::policy {
class Catalog;
}

namespace kubex::observe {

struct CatalogOptions {
  std::string global_config_name = "global-config";          // --global-config-name
  std::string policy_evaluation_name = "policy-evaluation";  // --policy-evaluation-name
};

class CatalogCache final : public CatalogView, public KubexObjects, public GlobalConfigView {
 public:
  CatalogCache(const std::shared_ptr<kube::Client>& client, CatalogOptions options = {});
  ~CatalogCache();

  // (name, informer) for the manager, e.g. ("clusterstaticpolicies", ...).
  std::vector<std::pair<std::string, std::shared_ptr<kube::Informer>>> informers() const;
  std::shared_ptr<kube::Informer> informer(api::Kind k) const;

  // The current catalog. Cheap when nothing changed since the last call.
  std::shared_ptr<const decide::policy::Catalog> catalog() const override;
  // The cached object of kind `k` under its informer key (nullptr when absent).
  common::ObjectPtr object(api::Kind k, const std::string& key) const override;
  // The singletons' cached objects (nullptr when missing).
  std::shared_ptr<const api::GlobalConfigObject> global_config() const override;
  common::ObjectPtr policy_evaluation() const;

  // Called for every add and delete of kind `k`, and for updates that change metadata.generation (spec
  // changes; the engine's own status writes do not notify), after the catalog was invalidated. Register
  // before the informers start.
  using Listener = std::function<void(api::Kind k, const common::ObjectPtr& obj)>;
  void on_change(Listener listener);

  const CatalogOptions& options() const { return options_; }

 private:
  void changed(api::Kind k, const common::ObjectPtr& obj);

  CatalogOptions options_;
  std::map<api::Kind, std::shared_ptr<kube::Informer>> informers_;
  std::vector<Listener> listeners_;
  std::atomic<std::uint64_t> generation_{1};
  mutable std::mutex mu_;
  mutable std::uint64_t built_generation_ = 0;
  mutable std::shared_ptr<const decide::policy::Catalog> catalog_;
};

}  // namespace kubex::observe
