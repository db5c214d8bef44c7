// The operator commands' one read of the cluster (`kubex explain`, `kubex report`): the engine's informer caches and
// policy catalog, started together, waited for until each has listed once, stopped when the command is done.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "observe/caches.h"
#include "observe/catalog.h"

namespace kubex::kube {
class Client;
class Informer;
}  // namespace kubex::kube

namespace kubex::engine {

class SyncedInformers {
 public:
  explicit SyncedInformers(std::vector<std::shared_ptr<kube::Informer>> informers);
  ~SyncedInformers();
  SyncedInformers(const SyncedInformers&) = delete;
  SyncedInformers& operator=(const SyncedInformers&) = delete;
  // The path of the first informer that did not sync in time (60 s), "" when all did. One whose lists keep
  // failing (RBAC, a broken API) is given up on after 10 s rather than the whole minute.
  std::string wait() const;

 private:
  std::vector<std::shared_ptr<kube::Informer>> informers_;
};

// The caches and the catalog (with the singletons' names of the command's flags), their informers started.
struct CommandCaches {
  CommandCaches(const std::shared_ptr<kube::Client>& client, const std::string& global_config_name,
                const std::string& policy_evaluation_name);
  // "" once every informer listed, else "cannot read <path> from the API server".
  std::string sync() const;

  observe::Caches caches;
  observe::CatalogCache catalog;

 private:
  std::unique_ptr<SyncedInformers> synced_;
};

}  // namespace kubex::engine
