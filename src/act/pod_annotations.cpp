#include "act/pod_annotations.h"

#include <nlohmann/json.hpp>

namespace kubex::act {

namespace {

class ClientPodAnnotationWriter final : public PodAnnotationWriter {
 public:
  ClientPodAnnotationWriter(std::shared_ptr<kube::Client> client, common::Logger log)
      : client_(std::move(client)), log_(std::move(log)) {}

  kube::KResult<void> write(const std::string& ns, const std::string& pod,
                            const std::map<std::string, std::optional<std::string>>& set) override {
    if (set.empty()) return {};
    nlohmann::json annotations = nlohmann::json::object();
    for (const auto& [k, v] : set) annotations[k] = v ? nlohmann::json(*v) : nlohmann::json(nullptr);
    auto r = client_->patch(kube::resource_path("", "v1", "pods", ns) + "/" + pod, kube::PatchKind::kMerge,
                            {{"metadata", {{"annotations", annotations}}}});
    if (!r) {
      if (r.error().not_found()) return {};
      return std::unexpected(r.error());
    }
    log_.info("updated pod annotations", {{"namespace", ns}, {"pod", pod}, {"set", annotations}});
    return {};
  }

 private:
  std::shared_ptr<kube::Client> client_;
  common::Logger log_;
};

}  // namespace

std::shared_ptr<PodAnnotationWriter> client_pod_annotation_writer(std::shared_ptr<kube::Client> client,
                                                                  common::Logger log) {
  return std::make_shared<ClientPodAnnotationWriter>(std::move(client), std::move(log));
}

}  // namespace kubex::act
