// The operator commands' one read of the cluster (`kubex explain`, `kubex report`): informers started together,
// waited for until each has listed once, stopped when the command is done.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace kubex::kube {
class Informer;
}

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

}  // namespace kubex::engine
