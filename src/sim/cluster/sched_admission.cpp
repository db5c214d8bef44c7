#include "sim/cluster/sched_admission.h"

#include <nlohmann/json.hpp>

#include "sim/apiserver/api_server.h"
#include "sim/cluster/json_fields.h"
#include "sim/cluster/kai_modes.h"
#include "sim/cluster/model.h"

namespace kubex::sim::cluster::sched {

using nlohmann::json;

namespace {

// KAI's getFirstGPULimit: any container or init container with an nvidia.com/gpu limit (requests are not looked at:
// the API server already refuses a GPU request without a limit).
bool has_gpu_limit(const json& pod) {
  if (!pod.contains("spec") || !pod["spec"].is_object()) return false;
  for (const char* list : {"containers", "initContainers"}) {
    const json& spec = pod["spec"];
    if (!spec.contains(list) || !spec[list].is_array()) continue;
    for (const auto& c : spec[list]) {
      if (!c.is_object() || !c.contains("resources") || !c["resources"].is_object()) continue;
      const json& res = c["resources"];
      if (res.contains("limits") && res["limits"].is_object() && res["limits"].contains(api::keys::kGpuResource)) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace

std::string kai_gpu_request_error(const json& pod) {
  if (!pod.is_object()) return "";
  if (!pod.contains("spec") || !pod["spec"].is_object() ||
      json_str(pod["spec"], "schedulerName") != api::keys::kDefaultKaiScheduler) {
    return "";
  }
  if (!pod.contains("metadata") || !pod["metadata"].is_object()) return "";
  const json& meta = pod["metadata"];
  if (!meta.contains("annotations") || !meta["annotations"].is_object()) return "";
  auto it = meta["annotations"].find(api::keys::kGpuFraction);
  if (it == meta["annotations"].end()) return "";
  std::string value = it->is_string() ? it->get<std::string>() : it->dump();
  // KAI checks the combination first, then the value.
  if (has_gpu_limit(pod)) return kKaiFractionAndWholeMessage;
  double f = 0;
  if (!go_parse_float(value, f) || f <= 0 || f >= 1) return kKaiFractionRangeMessage;
  return "";
}

std::optional<ApiError> kai_admission_denial(const json& pod) {
  std::string err = kai_gpu_request_error(pod);
  if (err.empty()) return std::nullopt;
  // What kube-apiserver answers for a webhook's controller-runtime Denied (403 Forbidden, the text prefixed).
  return forbidden(std::string("admission webhook \"") + kKaiAdmissionWebhook + "\" denied the request: " + err);
}

void register_kai_admission(ApiServer& api) {
  api.add_validation_plugin(
      "kai-scheduler-gpu-sharing",
      [](const ResourceInfo& r, const std::string& subresource, const std::string& operation, const json& obj,
         const json*) -> std::expected<void, ApiError> {
        if (r.kind != "Pod" || !r.group.empty() || !subresource.empty()) return {};
        if (operation != "CREATE" && operation != "UPDATE") return {};
        if (auto denied = kai_admission_denial(obj)) return std::unexpected(*denied);
        return {};
      });
}

}  // namespace kubex::sim::cluster::sched
