// Which optional APIs the API server serves, from API discovery (issue 34 item 9): an informer of an API that is not
// installed (Argo Rollouts, Strimzi, KubeAI, kubex's own CRDs before they are applied) does not LIST it again and
// again (a 404 each time); it waits here. All waiting informers share one look at discovery per `interval`: one
// GET /apis, plus GET /apis/<group>/<version> for a group-version the server lists.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

namespace kubex::kube {

class Client;

class ApiDiscovery {
 public:
  explicit ApiDiscovery(std::shared_ptr<Client> client,
                        std::chrono::milliseconds interval = std::chrono::seconds(30));

  // Whether the collection at `list_path` ("/apis/<group>/<version>/<plural>"; "/api/v1/..." always is) is served,
  // from discovery at most `interval` old. A discovery error counts as served (the informer's LIST then says).
  bool served(const std::string& list_path);
  // Returns once served(list_path), or when `stop` is set.
  void wait_served(const std::string& list_path, const std::atomic<bool>& stop);

  std::chrono::milliseconds interval() const { return interval_; }

 private:
  using Clock = std::chrono::steady_clock;
  struct Resources {
    Clock::time_point fetched{};
    std::optional<std::set<std::string>> names;  // nullopt: the lookup failed (counts as served)
  };

  std::shared_ptr<Client> client_;
  std::chrono::milliseconds interval_;
  std::mutex mu_;
  Clock::time_point groups_fetched_{};
  bool groups_known_ = false;
  std::optional<std::set<std::string>> group_versions_;  // nullopt: the last GET /apis failed
  std::map<std::string, Resources> resources_;           // by group-version
};

}  // namespace kubex::kube
