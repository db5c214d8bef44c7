#include "sim/cluster/sched_admission.h"

#include <nlohmann/json.hpp>

#include "sim/apiserver/api_server.h"
#include "sim/cluster/json_fields.h"
#include "sim/cluster/kai_modes.h"
#include "sim/cluster/model.h"

namespace kubex::sim::cluster::sched {

using nlohmann::json;

namespace {

const json* fraction_container(const json& pod) {
  if (!pod.contains("spec") || !pod["spec"].is_object()) return nullptr;
  const json& spec = pod["spec"];
  if (!spec.contains("containers") || !spec["containers"].is_array() || spec["containers"].empty()) return nullptr;
  const json& containers = spec["containers"];
  const json& meta = pod.contains("metadata") && pod["metadata"].is_object() ? pod["metadata"] : json::object();
  if (meta.contains("annotations") && meta["annotations"].is_object()) {
    auto it = meta["annotations"].find(api::keys::kGpuFractionContainerName);
    if (it != meta["annotations"].end() && it->is_string()) {
      for (const auto& c : containers) {
        if (json_str(c, "name") == it->get<std::string>()) return &c;
      }
    }
  }
  return containers[0].is_object() ? &containers[0] : nullptr;
}

bool has_gpu_resource(const json& container) {
  if (!container.contains("resources") || !container["resources"].is_object()) return false;
  for (const char* list : {"limits", "requests"}) {
    const json& res = container["resources"];
    if (res.contains(list) && res[list].is_object() && res[list].contains(api::keys::kGpuResource)) {
      return true;
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
  if (const json* c = fraction_container(pod); c && has_gpu_resource(*c)) return kKaiFractionAndWholeMessage;
  double f = 0;
  if (!go_parse_float(value, f) || f <= 0 || f >= 1) return kKaiFractionRangeMessage;
  return "";
}

void register_kai_admission(ApiServer& api) {
  api.add_validation_plugin(
      "kai-scheduler-gpu-sharing",
      [](const ResourceInfo& r, const std::string& subresource, const std::string& operation, const json& obj,
         const json*) -> std::expected<void, ApiError> {
        if (r.kind != "Pod" || !r.group.empty() || !subresource.empty()) return {};
        if (operation != "CREATE" && operation != "UPDATE") return {};
        std::string err = kai_gpu_request_error(obj);
        if (err.empty()) return {};
        return std::unexpected(bad_request(err));
      });
}

}  // namespace kubex::sim::cluster::sched
