// API-4 bootstrap: at start-up the leader creates `global-config` and `policy-evaluation` (the names of
// --global-config-name / --policy-evaluation-name) with their default spec when they are missing, and never
// touches an existing one. A one-shot task, not a controller: it retries with back-off only while it cannot
// tell (the CRDs are not installed yet, the API server fails) and ends once both objects exist.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <thread>

#include "api/kinds.h"
#include "common/log.h"
#include "kube/runtime/runnable.h"

namespace kubex::kube {
class Client;
}

namespace kubex::controllers {

// The object the engine creates for a missing singleton of kind `k` (GlobalConfiguration or
// PolicyEvaluation): its CRD defaults (api/defaults.h), labelled as created by the engine.
nlohmann::json default_singleton(api::Kind k, const std::string& name);

enum class EnsureOutcome {
  kCreated,  // it was missing and is created now
  kExists,   // someone else's object (Helm, a user, an earlier start): left as it is
  kRetry,    // cannot tell yet (CRD not installed, API error): try again later
  kFailed,   // refused for good (e.g. 422: the name is not allowed by the CRD)
};
const char* to_string(EnsureOutcome o);

// GET, and CREATE only on 404 (an AlreadyExists answer counts as kExists): nothing is ever overwritten.
// `detail` receives the API error, if any.
EnsureOutcome ensure_singleton(kube::Client& client, api::Kind k, const std::string& name,
                               std::string* detail);

struct SingletonOptions {
  std::string global_config_name = "global-config";
  std::string policy_evaluation_name = "policy-evaluation";
  std::chrono::milliseconds backoff_base{500};
  std::chrono::milliseconds backoff_cap{30000};
};

class SingletonBootstrap final : public kube::Runnable {
 public:
  SingletonBootstrap(std::shared_ptr<kube::Client> client, SingletonOptions options);
  ~SingletonBootstrap() override;

  const std::string& name() const override { return name_; }
  void start() override;
  void stop() override;
  // Both singletons exist (or failed for good).
  bool done() const { return done_; }

 private:
  void run();

  std::string name_ = "singletons";
  std::shared_ptr<kube::Client> client_;
  SingletonOptions options_;
  std::atomic<bool> done_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
  common::Logger log_{"singletons"};
};

}  // namespace kubex::controllers
