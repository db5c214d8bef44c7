#include "controllers/webhook_probe.h"

#include <nlohmann/json.hpp>

#include "api/keys.h"
#include "api/objects.h"

namespace kubex::controllers {

using nlohmann::json;

namespace {

// A sub-object of spec.webhookProbe kept as compact JSON text; nothing when absent or not an object.
std::optional<json> object_from(const std::string& text) {
  if (text.empty()) return std::nullopt;
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  return j;
}

bool is_marker(const std::string& key) {
  return key == api::keys::kProbeEarly || key == api::keys::kProbeLate;
}

}  // namespace

json build_probe_pod(const api::GlobalConfigSpec& spec, const std::string& ns, const std::string& suffix,
                     const std::string& default_image) {
  json meta = {{"name", kProbePodPrefix + suffix}, {"namespace", ns}};
  if (!spec.probe_labels.empty()) meta["labels"] = spec.probe_labels;
  json annotations = json::object();
  for (const auto& [k, v] : spec.probe_annotations) {
    if (!is_marker(k)) annotations[k] = v;
  }
  annotations[api::keys::kWebhookProbe] = "true";
  meta["annotations"] = std::move(annotations);

  json container = {{"name", "probe"},
                    {"image", spec.probe_image.empty() ? default_image : spec.probe_image}};
  if (auto r = object_from(spec.probe_resources_json)) container["resources"] = std::move(*r);
  if (auto sc = object_from(spec.probe_security_context_json)) container["securityContext"] = std::move(*sc);
  json pod_spec = {{"restartPolicy", "Never"}, {"containers", json::array({std::move(container)})}};
  if (auto psc = object_from(spec.probe_pod_security_context_json))
    pod_spec["securityContext"] = std::move(*psc);
  return {
      {"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", std::move(meta)}, {"spec", std::move(pod_spec)}};
}

MissingMarkers missing_probe_markers(const json& admitted, bool early_enabled) {
  const json* annotations = nullptr;
  if (admitted.is_object() && admitted.contains("metadata") && admitted["metadata"].is_object()) {
    const json& meta = admitted["metadata"];
    if (meta.contains("annotations") && meta["annotations"].is_object()) annotations = &meta["annotations"];
  }
  auto marked = [&](const char* key) {
    if (!annotations) return false;
    auto it = annotations->find(key);
    return it != annotations->end() && it->is_string() && it->get<std::string>() == "ok";
  };
  return {early_enabled && !marked(api::keys::kProbeEarly), !marked(api::keys::kProbeLate)};
}

}  // namespace kubex::controllers
