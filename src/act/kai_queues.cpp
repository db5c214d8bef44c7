#include "act/kai_queues.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace kubex::act {

using nlohmann::json;

namespace {

constexpr const char* kGroupVersion = "scheduling.run.ai/v2";

std::string queues_path(const std::string& name = "") {
  return kube::resource_path("scheduling.run.ai", "v2", "queues", "", name);
}

class ClientQueueWriter final : public QueueWriter {
 public:
  explicit ClientQueueWriter(std::shared_ptr<kube::Client> client) : client_(std::move(client)) {}

  kube::KResult<bool> queues_served() override {
    auto r = client_->get(std::string("/apis/") + kGroupVersion);
    if (!r) {
      if (r.error().not_found()) return false;
      return std::unexpected(r.error());
    }
    const json& resources = r->contains("resources") ? (*r)["resources"] : json();
    if (!resources.is_array()) return false;
    return std::any_of(resources.begin(), resources.end(),
                       [](const json& res) { return res.is_object() && res.value("name", "") == "queues"; });
  }

  kube::KResult<bool> queue_exists(const std::string& name) override {
    auto r = client_->get(queues_path(name));
    if (r) return true;
    if (r.error().not_found()) return false;
    return std::unexpected(r.error());
  }

  kube::KResult<void> create_queue(const json& queue) override {
    auto r = client_->create(queues_path(), queue);
    if (!r) return std::unexpected(r.error());
    return {};
  }

 private:
  std::shared_ptr<kube::Client> client_;
};

}  // namespace

std::shared_ptr<QueueWriter> client_queue_writer(std::shared_ptr<kube::Client> client) {
  return std::make_shared<ClientQueueWriter>(std::move(client));
}

}  // namespace kubex::act
