#include "act/singletons.h"

#include <nlohmann/json.hpp>

#include "api/defaults.h"

namespace kubex::act {

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

EnsureOutcome ensure_singleton(kube::Client& client, api::Kind k, const std::string& name, std::string* detail) {
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

namespace {

class ClientSingletonWriter final : public SingletonWriter {
 public:
  explicit ClientSingletonWriter(std::shared_ptr<kube::Client> c) : client_(std::move(c)) {}
  EnsureOutcome ensure(api::Kind k, const std::string& name, std::string* detail) override {
    return ensure_singleton(*client_, k, name, detail);
  }

 private:
  std::shared_ptr<kube::Client> client_;
};

}  // namespace

std::shared_ptr<SingletonWriter> client_singleton_writer(std::shared_ptr<kube::Client> client) {
  return std::make_shared<ClientSingletonWriter>(std::move(client));
}

}  // namespace kubex::act
