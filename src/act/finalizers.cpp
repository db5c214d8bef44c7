#include "act/finalizers.h"

#include <nlohmann/json.hpp>

namespace kubex::act {

using nlohmann::json;

namespace {

class ClientFinalizerWriter final : public FinalizerWriter {
 public:
  explicit ClientFinalizerWriter(std::shared_ptr<kube::Client> client) : client_(std::move(client)) {}

  kube::KResult<void> add(const std::string& path, const std::string& finalizer) override {
    auto r = kube::retry_on_conflict(*client_, path, [&](json& obj) {
      json& f = obj["metadata"]["finalizers"];
      if (!f.is_array()) f = json::array();
      for (const auto& x : f) {
        if (x == finalizer) return false;
      }
      f.push_back(finalizer);
      return true;
    });
    if (!r) return std::unexpected(r.error());
    return {};
  }

  kube::KResult<void> remove(const std::string& path, const std::string& finalizer) override {
    auto r = kube::retry_on_conflict(*client_, path, [&](json& obj) {
      if (!obj.contains("metadata") || !obj["metadata"].contains("finalizers")) return false;
      json& f = obj["metadata"]["finalizers"];
      if (!f.is_array()) return false;
      json kept = json::array();
      for (auto& x : f) {
        if (x != finalizer) kept.push_back(std::move(x));
      }
      if (kept.size() == f.size()) return false;
      f = std::move(kept);
      return true;
    });
    if (!r && !r.error().not_found()) return std::unexpected(r.error());
    return {};
  }

 private:
  std::shared_ptr<kube::Client> client_;
};

}  // namespace

std::shared_ptr<FinalizerWriter> client_finalizer_writer(std::shared_ptr<kube::Client> client) {
  return std::make_shared<ClientFinalizerWriter>(std::move(client));
}

}  // namespace kubex::act
