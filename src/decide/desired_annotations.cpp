#include "decide/desired_annotations.h"

#include <map>
#include <nlohmann/json.hpp>

#include "api/keys.h"
#include "api/kinds.h"

namespace kubex::decide {

namespace {

// The key of every kind with `suffix`, built once (admission reads them on every review).
std::map<api::Kind, std::string> keys_with(const char* suffix) {
  std::map<api::Kind, std::string> table;
  for (const auto& k : api::all_kinds()) table[k.kind] = std::string(api::annotation_prefix(k.kind)) + suffix;
  return table;
}

}  // namespace

const std::string& desired_requests_key(api::Kind policy_kind) {
  static const std::map<api::Kind, std::string> table = keys_with(api::keys::kDesiredRequestsSuffix);
  return table.at(policy_kind);
}

const std::string& desired_limits_key(api::Kind policy_kind) {
  static const std::map<api::Kind, std::string> table = keys_with(api::keys::kDesiredLimitsSuffix);
  return table.at(policy_kind);
}

std::string reactive_state_key(api::Kind policy_kind) {
  return std::string(api::annotation_prefix(policy_kind)) + api::keys::kReactiveStateSuffix;
}

std::string proactive_state_key(api::Kind policy_kind) {
  return std::string(api::annotation_prefix(policy_kind)) + api::keys::kProactiveStateSuffix;
}

bool is_desired_key(std::string_view key) {
  const std::string_view req = api::keys::kDesiredRequestsSuffix, lim = api::keys::kDesiredLimitsSuffix;
  return (key.size() > req.size() && key.ends_with(req)) || (key.size() > lim.size() && key.ends_with(lim));
}

std::optional<std::map<std::string, Hundredths>> parse_desired_gpu(std::string_view text) {
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return std::nullopt;
  std::map<std::string, Hundredths> out;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (!it.value().is_object()) continue;
    auto gpu = it.value().find("gpu");
    if (gpu == it.value().end()) continue;
    auto h = parse_gpu_json(*gpu);
    if (h) out[it.key()] = *h;
  }
  return out;
}

std::vector<std::string> gpu_recommendation_directions(const std::optional<std::string>& before,
                                                       std::string_view after) {
  std::vector<std::string> out;
  const auto now = parse_desired_gpu(after);
  if (!now) return out;
  const auto was = before ? parse_desired_gpu(*before) : std::nullopt;
  for (const auto& [container, value] : *now) {
    const Hundredths* old = nullptr;
    if (was) {
      if (auto it = was->find(container); it != was->end()) old = &it->second;
    }
    if (!old) {
      out.emplace_back("initial");
    } else if (value != *old) {
      out.emplace_back(value > *old ? "upsize" : "downsize");
    }
  }
  return out;
}

std::string format_desired(const DesiredValues& values) {
  nlohmann::json doc = nlohmann::json::object();
  for (const auto& [container, resources] : values) {
    nlohmann::json& c = doc[container];
    c = nlohmann::json::object();
    for (const auto& [resource, value] : resources) c[resource] = value;
  }
  return doc.dump();
}

}  // namespace kubex::decide
