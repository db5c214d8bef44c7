#include "controllers/global_config_status.h"

#include "act/status.h"
#include "api/kinds.h"
#include "api/kubex_views.h"

namespace kubex::controllers {

namespace {

class ClientGlobalConfigStatus final : public GlobalConfigStatus {
 public:
  ClientGlobalConfigStatus(std::shared_ptr<kube::Client> client, std::string name)
      : client_(std::move(client)),
        name_(std::move(name)),
        path_(api::object_path(api::Kind::kGlobalConfiguration, "", name_)) {}

  const std::string& name() const override { return name_; }

  kube::KResult<void> update(const act::StatusChange& change, common::TimePoint now) override {
    auto r = act::update_status(*client_, path_, change, now);
    if (!r) return std::unexpected(r.error());
    return {};
  }

 private:
  std::shared_ptr<kube::Client> client_;
  std::string name_, path_;
};

}  // namespace

kube::ObjectReference global_config_ref(const std::string& name, const api::GlobalConfigObject* cached) {
  kube::ObjectReference ref;
  ref.api_version = api::kApiVersion;
  ref.kind = api::info(api::Kind::kGlobalConfiguration).name;
  ref.name = name;
  if (cached) {
    ref.uid = cached->parsed.value.meta.uid;
    ref.resource_version = cached->resource_version;
  }
  return ref;
}

std::shared_ptr<GlobalConfigStatus> client_global_config_status(std::shared_ptr<kube::Client> client,
                                                                std::string name) {
  return std::make_shared<ClientGlobalConfigStatus>(std::move(client), std::move(name));
}

}  // namespace kubex::controllers
