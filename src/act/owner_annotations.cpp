#include "act/owner_annotations.h"

#include <nlohmann/json.hpp>

#include "api/owner_kinds.h"
#include "api/views.h"

namespace kubex::act {

using nlohmann::json;

const char* owner_api_version(const std::string& kind) {
  const api::OwnerKind* k = api::owner_kind(kind);
  return k ? k->api_version.data() : "";
}

std::string owner_path(const OwnerRef& o) {
  auto slash = o.api_version.find('/');
  std::string group = slash == std::string::npos ? "" : o.api_version.substr(0, slash);
  std::string version = slash == std::string::npos ? o.api_version : o.api_version.substr(slash + 1);
  const api::OwnerKind* k = api::owner_kind(o.kind);
  return kube::resource_path(group, version, k ? std::string(k->plural) : std::string(), o.ns, o.name);
}

kube::KResult<void> patch_owner_annotations(kube::Client& client, const OwnerRef& owner,
                                            const std::map<std::string, std::string>& set,
                                            const std::vector<std::string>& remove) {
  if (set.empty() && remove.empty()) return {};
  json annotations = json::object();
  for (const auto& [k, v] : set) annotations[k] = v;
  for (const auto& k : remove) {
    if (!set.count(k)) annotations[k] = nullptr;
  }
  json patch = {{"metadata", {{"annotations", annotations}}}};
  if (!owner.resource_version.empty()) patch["metadata"]["resourceVersion"] = owner.resource_version;
  auto r = client.patch(owner_path(owner), kube::PatchKind::kMerge, patch);
  if (!r) return std::unexpected(r.error());
  return {};
}

namespace {

class ClientAnnotationWriter final : public AnnotationWriter {
 public:
  ClientAnnotationWriter(std::shared_ptr<kube::Client> client, bool dry_run, common::Logger log)
      : client_(std::move(client)), dry_run_(dry_run), log_(std::move(log)) {}

  std::expected<OwnerWrite, std::string> write(const api::WorkloadView& w,
                                               const std::map<std::string, std::string>& set,
                                               const std::vector<std::string>& remove,
                                               const std::string& what) override {
    if (set.empty() && remove.empty()) return OwnerWrite::kNothing;
    std::string owner = w.kind.str() + "/" + w.name;
    json fields = {{"owner", owner}, {"namespace", w.ns.str()}, {"set", set}, {"remove", remove}};
    if (dry_run_) {
      log_.info("dry run: would update " + what, fields);
      return OwnerWrite::kDryRun;
    }
    OwnerRef ref{owner_api_version(w.kind.str()), w.kind.str(), w.ns.str(), w.name, w.resource_version};
    auto r = patch_owner_annotations(*client_, ref, set, remove);
    if (!r) {
      if (r.error().not_found()) return OwnerWrite::kGone;
      if (r.error().conflict()) return OwnerWrite::kStale;
      return std::unexpected("patching " + what + " of " + owner + ": " + r.error().str());
    }
    log_.info("updated " + what, fields);
    return OwnerWrite::kWritten;
  }

 private:
  std::shared_ptr<kube::Client> client_;
  bool dry_run_;
  common::Logger log_;
};

}  // namespace

std::shared_ptr<AnnotationWriter> client_annotation_writer(std::shared_ptr<kube::Client> client, bool dry_run,
                                                           common::Logger log) {
  return std::make_shared<ClientAnnotationWriter>(std::move(client), dry_run, std::move(log));
}

}  // namespace kubex::act
