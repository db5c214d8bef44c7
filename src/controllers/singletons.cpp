#include "controllers/singletons.h"

#include <nlohmann/json.hpp>
#include <vector>

#include "act/singletons.h"


namespace kubex::controllers {

using nlohmann::json;

SingletonBootstrap::SingletonBootstrap(std::shared_ptr<act::SingletonWriter> writer, SingletonOptions options)
    : writer_(std::move(writer)), options_(std::move(options)) {}

SingletonBootstrap::~SingletonBootstrap() {
  stop();
}

void SingletonBootstrap::start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { run(); });
}

void SingletonBootstrap::stop() {
  {
    std::lock_guard lk(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void SingletonBootstrap::singleton_deleted(const std::string& name) {
  if (name != options_.global_config_name && name != options_.policy_evaluation_name) return;
  {
    std::lock_guard lk(mu_);
    recheck_ = true;
  }
  cv_.notify_all();
}

void SingletonBootstrap::run() {
  struct Pending {
    api::Kind kind;
    std::string name;
    std::string last_detail;
  };
  bool first = true;  // later rounds follow a deletion: only what they create is worth a line
  while (true) {
    std::vector<Pending> pending = {{api::Kind::kGlobalConfiguration, options_.global_config_name, ""},
                                    {api::Kind::kPolicyEvaluation, options_.policy_evaluation_name, ""}};
    auto delay = options_.backoff_base;
    while (true) {
      for (auto it = pending.begin(); it != pending.end();) {
        std::string detail;
        act::EnsureOutcome o = writer_->ensure(it->kind, it->name, &detail);
        json f = {{"kind", api::info(it->kind).name}, {"name", it->name}, {"result", act::to_string(o)}};
        if (!detail.empty()) f["error"] = detail;
        if (o == act::EnsureOutcome::kCreated) {
          log_.info(first ? "created singleton with its defaults"
                          : "singleton was deleted: created it again with its defaults",
                    f);
        } else if (o == act::EnsureOutcome::kExists) {
          if (first) log_.info("singleton exists; left as it is", f);
        } else if (o == act::EnsureOutcome::kFailed) {
          log_.error("cannot create singleton", f);
        } else if (detail != it->last_detail) {
          log_.warn("cannot create singleton yet; retrying", f);  // once per distinct error, not per attempt
          it->last_detail = detail;
        }
        it = o == act::EnsureOutcome::kRetry ? std::next(it) : pending.erase(it);
      }
      if (pending.empty()) break;
      std::unique_lock lk(mu_);
      if (cv_.wait_for(lk, delay, [this] { return stopping_; })) return;
      delay = std::min(delay * 2, options_.backoff_cap);
    }
    done_ = true;
    first = false;
    std::unique_lock lk(mu_);
    cv_.wait(lk, [this] { return stopping_ || recheck_; });
    if (stopping_) return;
    recheck_ = false;
  }
}

}  // namespace kubex::controllers
