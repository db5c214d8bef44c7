// API-4 bootstrap: at start-up the leader creates `global-config` and `policy-evaluation` (the names of
// --global-config-name / --policy-evaluation-name) with their default spec when they are missing, and never
// touches an existing one. It retries with back-off only while it cannot tell (the CRDs are not installed
// yet, the API server fails). Once both exist it waits: a singleton deleted later (singleton_deleted(), from
// the informer) is created again with its defaults and the recreation is logged, so the engine never runs
// silently on a configuration nobody can see.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "api/kinds.h"
#include "common/log.h"
#include "kube/runtime/runnable.h"

namespace kubex::act {
class SingletonWriter;
}

namespace kubex::controllers {

struct SingletonOptions {
  std::string global_config_name = "global-config";
  std::string policy_evaluation_name = "policy-evaluation";
  std::chrono::milliseconds backoff_base{500};
  std::chrono::milliseconds backoff_cap{30000};
};

class SingletonBootstrap final : public kube::Runnable {
 public:
  SingletonBootstrap(std::shared_ptr<act::SingletonWriter> writer, SingletonOptions options);
  ~SingletonBootstrap() override;

  const std::string& name() const override { return name_; }
  void start() override;
  void stop() override;
  // Both singletons exist (or failed for good).
  bool done() const { return done_; }
  // A singleton was deleted: check both again now (a no-op for other names).
  void singleton_deleted(const std::string& name);

 private:
  void run();

  std::string name_ = "singletons";
  std::shared_ptr<act::SingletonWriter> writer_;
  SingletonOptions options_;
  std::atomic<bool> done_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool recheck_ = false;  // singleton_deleted() since the last check
  std::thread thread_;
  common::Logger log_{"singletons"};
};

}  // namespace kubex::controllers
