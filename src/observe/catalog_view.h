// What readers of kubex's own objects need from observe::CatalogCache, as small named interfaces (instead of
// std::functions, so a reader's dependencies say what they are): the current decide::policy::Catalog, one
// cached object by kind and key, and the global-config singleton. CatalogCache implements all three in the
// engine; tests use small fakes.
#pragma once

#include <memory>
#include <string>

#include "api/kinds.h"
#include "common/cached_object.h"

namespace kubex::decide::policy {
class Catalog;
}
namespace kubex::api {
struct GlobalConfigObject;
}

namespace kubex::observe {

class CatalogView {
 public:
  virtual ~CatalogView() = default;
  // Cheap when nothing changed since the last call; shared immutably by every reader.
  virtual std::shared_ptr<const decide::policy::Catalog> catalog() const = 0;
};

// The cached objects of kubex's kinds (typed projections, api/kubex_views.h).
class KubexObjects {
 public:
  virtual ~KubexObjects() = default;
  // The cached object of kind `k` under its informer key ("ns/name" or "name"); nullptr when absent.
  virtual common::ObjectPtr object(api::Kind k, const std::string& key) const = 0;
};

// The engine's GlobalConfiguration singleton (--global-config-name) as the cache holds it.
class GlobalConfigView {
 public:
  virtual ~GlobalConfigView() = default;
  // nullptr while it does not exist.
  virtual std::shared_ptr<const api::GlobalConfigObject> global_config() const = 0;
};

}  // namespace kubex::observe
