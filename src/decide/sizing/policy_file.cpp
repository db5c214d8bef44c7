#include "decide/sizing/policy_file.h"

#include <nlohmann/json.hpp>

#include "api/parse.h"

namespace kubex::decide::sizing {

api::StrategySpec starter_strategy() {
  // examples/kai-gpu-sharing.yaml's ClusterAutomationStrategy, as the guide writes it.
  static const api::StrategySpec spec = api::parse_strategy(nlohmann::json::parse(R"({
    "apiVersion": "rightsizing.kubex.ai/v1alpha1", "kind": "ClusterAutomationStrategy",
    "metadata": {"name": "kai-gpu-sharing"},
    "spec": {"experimental": {"gpuKaiContract": "v1alpha1-2026-07"},
             "enablement": {"overrideScheduler": "kai",
                            "gpu": {"requests": {"downsize": true, "upsize": true, "ceiling": "1",
                                                 "setFromUnspecified": false}}},
             "kai": {"vllm": {"gpuMemoryUtilizationBufferPercent": 10}},
             "inPlaceResize": {"enabled": false}, "podEviction": {"enabled": true}}})"))
                                               .value.spec;
  return spec;
}

namespace {

std::string where(std::size_t index, const nlohmann::json& doc) {
  std::string kind = doc.is_object() && doc.contains("kind") && doc["kind"].is_string() ? doc["kind"].get<std::string>() : "";
  std::string name;
  if (doc.is_object() && doc.contains("metadata") && doc["metadata"].is_object() && doc["metadata"].contains("name") &&
      doc["metadata"]["name"].is_string()) {
    name = doc["metadata"]["name"].get<std::string>();
  }
  std::string out = "document " + std::to_string(index + 1);
  if (!kind.empty()) out += " (" + kind + (name.empty() ? "" : " " + name) + ")";
  return out;
}

std::optional<api::Kind> kind_of(const nlohmann::json& doc) {
  if (!doc.is_object() || !doc.contains("kind") || !doc["kind"].is_string()) return std::nullopt;
  return api::kind_from_name(doc["kind"].get<std::string>());
}

}  // namespace

common::Result<ReplayPolicies> replay_policies(const std::vector<nlohmann::json>& docs, const std::string& name) {
  std::string errors;  // every invalid document's errors, "; "-joined (VAL-1)
  std::vector<std::pair<std::size_t, api::Policy>> reactive, statics, proactive;
  std::vector<std::pair<std::size_t, api::Strategy>> strategies;
  std::optional<std::int32_t> headroom;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    const auto kind = kind_of(docs[i]);
    if (!kind) continue;  // not a kubex kind: another object of the same manifest
    const auto invalid = [&](const api::ValidationReport& report) {
      for (const common::Error& e : report.errors.items()) {
        errors += (errors.empty() ? "" : "; ") + where(i, docs[i]) + ": " + e.str();
      }
    };
    if (api::is_strategy(*kind)) {
      auto parsed = api::parse_strategy(docs[i]);
      if (!parsed.valid()) invalid(parsed.report);
      strategies.emplace_back(i, std::move(parsed.value));
    } else if (api::is_policy(*kind)) {
      auto parsed = api::parse_policy(docs[i]);
      if (!parsed.valid()) invalid(parsed.report);
      auto& list = api::is_reactive(*kind) ? reactive : api::is_static(*kind) ? statics : proactive;
      list.emplace_back(i, std::move(parsed.value));
    } else if (*kind == api::Kind::kGlobalConfiguration) {
      auto parsed = api::parse_global_config(docs[i]);
      if (!parsed.valid()) invalid(parsed.report);
      headroom = parsed.value.spec.proactive_headroom_percent;
    }
  }
  if (!errors.empty()) return common::fail(errors);

  std::erase_if(reactive, [&](const auto& p) { return !name.empty() && p.second.meta.name != name; });
  if (reactive.empty()) {
    return common::fail(name.empty() ? "no GpuReactivePolicy or ClusterGpuReactivePolicy in the policy documents"
                                     : "no GpuReactivePolicy or ClusterGpuReactivePolicy named \"" + name + "\"");
  }
  if (reactive.size() > 1) {
    return common::fail("several reactive policies (" + reactive[0].second.meta.name + ", " +
                         reactive[1].second.meta.name + ", ...): name the one to replay");
  }
  ReplayPolicies out;
  out.reactive_name = reactive[0].second.meta.name;
  out.reactive = reactive[0].second.reactive;
  out.strategy = starter_strategy();
  for (const auto& [i, s] : strategies) {
    if (s.meta.name == out.reactive.common.strategy_ref) {
      out.strategy_name = s.meta.name;
      out.strategy = s.spec;
    }
  }
  for (const auto& [i, p] : statics) {
    for (const auto& [container, resources] : p.static_spec.containers) {
      if (resources.gpu_request) out.static_gpu[container] = desired_value(hundredths_of(*resources.gpu_request));
    }
  }
  if (!proactive.empty()) out.proactive = proactive.front().second.proactive;
  if (headroom) out.proactive_headroom_percent = *headroom;
  return out;
}

}  // namespace kubex::decide::sizing
