#include "controllers/singletons.h"

#include <nlohmann/json.hpp>
#include <vector>

#include "api/defaults.h"
#include "kube/client/client.h"

namespace kubex::controllers {

using nlohmann::json;

json default_singleton(api::Kind k, const std::string& name) {
  json obj = {{"apiVersion", api::kApiVersion},
              {"kind", api::info(k).name},
              {"metadata",
               {{"name", name}, {"labels", {{"app.kubernetes.io/managed-by", "kubex-automation-engine"}}}}},
              {"spec", json::object()}};
  api::apply_defaults(k, obj);
  return obj;
}

const char* to_string(EnsureOutcome o) {
  switch (o) {
    case EnsureOutcome::kCreated:
      return "created";
    case EnsureOutcome::kExists:
      return "exists";
    case EnsureOutcome::kRetry:
      return "retry";
    case EnsureOutcome::kFailed:
      return "failed";
  }
  return "retry";
}

EnsureOutcome ensure_singleton(kube::Client& client, api::Kind k, const std::string& name,
                               std::string* detail) {
  auto got = client.get(api::object_path(k, "", name));
  if (got) return EnsureOutcome::kExists;
  if (!got.error().not_found()) {
    if (detail) *detail = got.error().str();
    return EnsureOutcome::kRetry;
  }
  auto made = client.create(api::collection_path(k), default_singleton(k, name));
  if (made) return EnsureOutcome::kCreated;
  const kube::ApiStatus& e = made.error();
  if (detail) *detail = e.str();
  if (e.already_exists()) return EnsureOutcome::kExists;  // created meanwhile by someone else: theirs
  // 404: the CRD is not served (yet). 422/400: the API server refuses this object, e.g. a name the CRD's
  // singleton rule does not allow; asking again would not change the answer.
  if (e.invalid() || e.code == 400) return EnsureOutcome::kFailed;
  return EnsureOutcome::kRetry;
}

SingletonBootstrap::SingletonBootstrap(std::shared_ptr<kube::Client> client, SingletonOptions options)
    : client_(std::move(client)), options_(std::move(options)) {}

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
        EnsureOutcome o = ensure_singleton(*client_, it->kind, it->name, &detail);
        json f = {{"kind", api::info(it->kind).name}, {"name", it->name}, {"result", to_string(o)}};
        if (!detail.empty()) f["error"] = detail;
        if (o == EnsureOutcome::kCreated) {
          log_.info(first ? "created singleton with its defaults"
                          : "singleton was deleted: created it again with its defaults",
                    f);
        } else if (o == EnsureOutcome::kExists) {
          if (first) log_.info("singleton exists; left as it is", f);
        } else if (o == EnsureOutcome::kFailed) {
          log_.error("cannot create singleton", f);
        } else if (detail != it->last_detail) {
          log_.warn("cannot create singleton yet; retrying", f);  // once per distinct error, not per attempt
          it->last_detail = detail;
        }
        it = o == EnsureOutcome::kRetry ? std::next(it) : pending.erase(it);
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
