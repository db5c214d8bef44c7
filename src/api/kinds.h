// The rightsizing.kubex.ai/v1alpha1 kinds (SPEC §1): names, plurals, scope, webhook paths.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace kubex::api {

inline constexpr const char* kGroup = "rightsizing.kubex.ai";
inline constexpr const char* kVersion = "v1alpha1";
inline constexpr const char* kApiVersion = "rightsizing.kubex.ai/v1alpha1";
inline constexpr const char* kGpuKaiContract = "v1alpha1-2026-07";

enum class Kind {
  kAutomationStrategy,
  kClusterAutomationStrategy,
  kProactivePolicy,
  kClusterProactivePolicy,
  kStaticPolicy,
  kClusterStaticPolicy,
  kGpuReactivePolicy,
  kClusterGpuReactivePolicy,
  kGpuConsolidationPolicy,
  kGlobalConfiguration,
  kPolicyEvaluation,
};

struct KindInfo {
  Kind kind;
  const char* name;      // "ClusterGpuReactivePolicy"
  const char* plural;    // "clustergpureactivepolicies"
  const char* singular;  // "clustergpureactivepolicy"
  bool namespaced;
  const char* singleton;  // "global-config" / "policy-evaluation", or nullptr
};

// Every kind, in the order of the enum.
const std::array<KindInfo, 11>& all_kinds();
const KindInfo& info(Kind k);
std::optional<Kind> kind_from_name(std::string_view kind_name);  // "StaticPolicy" -> kStaticPolicy
std::optional<Kind> kind_from_plural(std::string_view plural);

// HLM-2: "/validate-rightsizing-kubex-ai-v1alpha1-<kindlower>" and its webhook name "v<kindlower>-v1alpha1.kb.io".
std::string validating_webhook_path(Kind k);
std::string validating_webhook_name(Kind k);

// REST collection path of a kind: "/apis/rightsizing.kubex.ai/v1alpha1/[namespaces/<ns>/]<plural>".
std::string collection_path(Kind k, const std::string& ns = "");
std::string object_path(Kind k, const std::string& ns, const std::string& name);

// Families used by precedence and annotation prefixes.
bool is_strategy(Kind k);         // AutomationStrategy, ClusterAutomationStrategy
bool is_policy(Kind k);           // the six policy kinds that manage workloads
bool is_cluster_policy(Kind k);   // Cluster* policy kinds
bool is_static(Kind k);           // StaticPolicy, ClusterStaticPolicy
bool is_proactive(Kind k);        // ProactivePolicy, ClusterProactivePolicy
bool is_reactive(Kind k);         // GpuReactivePolicy, ClusterGpuReactivePolicy
// SPEC §2 annotation prefixes: static, cwstatic, proactive, cwproactive, gpureactive, cwgpureactive.
// Only for is_policy(k).
const char* annotation_prefix(Kind k);
// The strategy kind a policy references (API-3).
Kind strategy_kind_for(Kind policy_kind);

}  // namespace kubex::api
