// Shared helpers of the src/api tests: YAML/JSON literals, the seed examples, base objects per kind.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/kinds.h"
#include "common/file_io.h"
#include "common/yaml.h"
#include "kubex_paths.h"

namespace kubex::api::test {

inline nlohmann::json yaml(const std::string& text) {
  auto j = common::yaml_to_json(text);
  EXPECT_TRUE(j.has_value()) << (j ? "" : j.error().str()) << "\n" << text;
  return j ? *j : nlohmann::json();
}

inline std::vector<nlohmann::json> load_documents(const std::string& relative_path) {
  auto text = common::read_file(std::string(kubex_paths::source_dir()) + "/" + relative_path);
  EXPECT_TRUE(text.has_value()) << relative_path;
  if (!text) return {};
  auto docs = common::yaml_to_json_documents(*text);
  EXPECT_TRUE(docs.has_value()) << relative_path << ": " << (docs ? "" : docs.error().str());
  return docs ? *docs : std::vector<nlohmann::json>{};
}

// The seed guide's starter example: [ClusterAutomationStrategy, ClusterProactivePolicy,
// ClusterGpuReactivePolicy].
inline const std::vector<nlohmann::json>& starter() {
  static const std::vector<nlohmann::json> docs = load_documents("examples/kai-gpu-sharing.yaml");
  return docs;
}
inline const nlohmann::json& consolidation_example() {
  static const nlohmann::json doc = load_documents("examples/gpu-consolidation.yaml").at(0);
  return doc;
}

// A small valid object of every kind (the seed's objects where the guide has one).
inline nlohmann::json base_object(Kind k) {
  using nlohmann::json;
  auto namespaced = [](json o) {
    o["metadata"]["namespace"] = "ml";
    return o;
  };
  auto strip_namespace_selector = [](json o) {
    o["spec"]["scope"].erase("namespaceSelector");
    return o;
  };
  auto with_kind = [](json o, Kind kind) {
    o["kind"] = info(kind).name;
    return o;
  };
  switch (k) {
    case Kind::kClusterAutomationStrategy:
      return starter().at(0);
    case Kind::kAutomationStrategy:
      return namespaced(with_kind(starter().at(0), k));
    case Kind::kClusterProactivePolicy:
      return starter().at(1);
    case Kind::kProactivePolicy:
      return namespaced(strip_namespace_selector(with_kind(starter().at(1), k)));
    case Kind::kClusterGpuReactivePolicy:
      return starter().at(2);
    case Kind::kGpuReactivePolicy:
      return namespaced(strip_namespace_selector(with_kind(starter().at(2), k)));
    case Kind::kStaticPolicy:
    case Kind::kClusterStaticPolicy: {
      json o = yaml(R"(
apiVersion: rightsizing.kubex.ai/v1alpha1
kind: StaticPolicy
metadata: {name: fixed}
spec:
  automationStrategyRef: {name: kai-gpu-sharing}
  resources:
    containers:
      "*":
        requests: {cpu: 250m, memory: 512Mi, gpu: "0.5"}
        limits: {cpu: 1, memory: 1Gi}
      app:
        requests: {gpu: "0.25"}
)");
      if (k == Kind::kStaticPolicy) return namespaced(o);
      o["kind"] = "ClusterStaticPolicy";
      o["spec"]["scope"] = {{"namespaceSelector", {{"operator", "In"}, {"values", {"team-*"}}}}};
      return o;
    }
    case Kind::kGpuConsolidationPolicy:
      return consolidation_example();
    case Kind::kGlobalConfiguration:
      return yaml(
          "{apiVersion: rightsizing.kubex.ai/v1alpha1, kind: GlobalConfiguration, metadata: {name: "
          "global-config}, spec: {}}");
    case Kind::kPolicyEvaluation:
      return yaml(
          "{apiVersion: rightsizing.kubex.ai/v1alpha1, kind: PolicyEvaluation, metadata: {name: "
          "policy-evaluation}}");
  }
  return {};
}

// base_object(k) with a JSON merge patch (RFC 7386: null removes a field) written as YAML.
inline nlohmann::json patched(Kind k, const std::string& merge_patch_yaml) {
  nlohmann::json o = base_object(k);
  if (!merge_patch_yaml.empty()) o.merge_patch(yaml(merge_patch_yaml));
  return o;
}

}  // namespace kubex::api::test
