#include "act/status_writer.h"

#include "kube/client/client.h"

namespace kubex::act {

namespace {

class ClientStatusWriter final : public StatusWriter {
 public:
  explicit ClientStatusWriter(std::shared_ptr<kube::Client> c) : client_(std::move(c)) {}
  kube::KResult<StatusResult> write(const std::string& object_path, const StatusChange& change,
                                         common::TimePoint now) override {
    return update_status(*client_, object_path, change, now);
  }

 private:
  std::shared_ptr<kube::Client> client_;
};

}  // namespace

std::unique_ptr<StatusWriter> client_status_writer(std::shared_ptr<kube::Client> client) {
  return std::make_unique<ClientStatusWriter>(std::move(client));
}

}  // namespace kubex::act
