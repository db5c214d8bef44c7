#include "act/probe_pods.h"

#include <nlohmann/json.hpp>

namespace kubex::act {

using nlohmann::json;

namespace {

class ClientProbeRunner final : public ProbeRunner {
 public:
  explicit ClientProbeRunner(std::shared_ptr<kube::Client> client) : client_(std::move(client)) {}

  kube::KResult<json> dry_run_create_pod(const std::string& ns, const json& pod) override {
    kube::WriteOptions wo;
    wo.dry_run = true;
    return client_->create(kube::resource_path("", "v1", "pods", ns), pod, wo);
  }

 private:
  std::shared_ptr<kube::Client> client_;
};

}  // namespace

std::shared_ptr<ProbeRunner> client_probe_runner(std::shared_ptr<kube::Client> client) {
  return std::make_shared<ClientProbeRunner>(std::move(client));
}

}  // namespace kubex::act
