#include "api/kinds.h"

#include <algorithm>

#include "api/objects.h"

namespace kubex::api {

namespace {

constexpr std::array<KindInfo, 11> kKinds = {{
    {Kind::kAutomationStrategy, "AutomationStrategy", "automationstrategies", "automationstrategy", true,
     nullptr},
    {Kind::kClusterAutomationStrategy, "ClusterAutomationStrategy", "clusterautomationstrategies",
     "clusterautomationstrategy", false, nullptr},
    {Kind::kProactivePolicy, "ProactivePolicy", "proactivepolicies", "proactivepolicy", true, nullptr},
    {Kind::kClusterProactivePolicy, "ClusterProactivePolicy", "clusterproactivepolicies",
     "clusterproactivepolicy", false, nullptr},
    {Kind::kStaticPolicy, "StaticPolicy", "staticpolicies", "staticpolicy", true, nullptr},
    {Kind::kClusterStaticPolicy, "ClusterStaticPolicy", "clusterstaticpolicies", "clusterstaticpolicy", false,
     nullptr},
    {Kind::kGpuReactivePolicy, "GpuReactivePolicy", "gpureactivepolicies", "gpureactivepolicy", true,
     nullptr},
    {Kind::kClusterGpuReactivePolicy, "ClusterGpuReactivePolicy", "clustergpureactivepolicies",
     "clustergpureactivepolicy", false, nullptr},
    {Kind::kGpuConsolidationPolicy, "GpuConsolidationPolicy", "gpuconsolidationpolicies",
     "gpuconsolidationpolicy", false, nullptr},
    {Kind::kGlobalConfiguration, "GlobalConfiguration", "globalconfigurations", "globalconfiguration", false,
     "global-config"},
    {Kind::kPolicyEvaluation, "PolicyEvaluation", "policyevaluations", "policyevaluation", false,
     "policy-evaluation"},
}};

}  // namespace

const std::array<KindInfo, 11>& all_kinds() {
  return kKinds;
}

const KindInfo& info(Kind k) {
  return kKinds[static_cast<std::size_t>(k)];
}

std::optional<Kind> kind_from_name(std::string_view kind_name) {
  for (const auto& k : kKinds) {
    if (kind_name == k.name) return k.kind;
  }
  return std::nullopt;
}

std::optional<Kind> kind_from_plural(std::string_view plural) {
  for (const auto& k : kKinds) {
    if (plural == k.plural) return k.kind;
  }
  return std::nullopt;
}

std::string validating_webhook_path(Kind k) {
  return std::string("/validate-rightsizing-kubex-ai-v1alpha1-") + info(k).singular;
}

std::string validating_webhook_name(Kind k) {
  return std::string("v") + info(k).singular + "-v1alpha1.kb.io";
}

std::string collection_path(Kind k, const std::string& ns) {
  std::string p = std::string("/apis/") + kApiVersion + "/";
  if (info(k).namespaced && !ns.empty()) p += "namespaces/" + ns + "/";
  return p + info(k).plural;
}

std::string object_path(Kind k, const std::string& ns, const std::string& name) {
  return collection_path(k, ns) + "/" + name;
}

bool is_strategy(Kind k) {
  return k == Kind::kAutomationStrategy || k == Kind::kClusterAutomationStrategy;
}
bool is_static(Kind k) {
  return k == Kind::kStaticPolicy || k == Kind::kClusterStaticPolicy;
}
bool is_proactive(Kind k) {
  return k == Kind::kProactivePolicy || k == Kind::kClusterProactivePolicy;
}
bool is_reactive(Kind k) {
  return k == Kind::kGpuReactivePolicy || k == Kind::kClusterGpuReactivePolicy;
}
bool is_policy(Kind k) {
  return is_static(k) || is_proactive(k) || is_reactive(k);
}
bool is_cluster_policy(Kind k) {
  return k == Kind::kClusterStaticPolicy || k == Kind::kClusterProactivePolicy ||
         k == Kind::kClusterGpuReactivePolicy;
}

const char* annotation_prefix(Kind k) {
  switch (k) {
    case Kind::kStaticPolicy:
      return "static";
    case Kind::kClusterStaticPolicy:
      return "cwstatic";
    case Kind::kProactivePolicy:
      return "proactive";
    case Kind::kClusterProactivePolicy:
      return "cwproactive";
    case Kind::kGpuReactivePolicy:
      return "gpureactive";
    case Kind::kClusterGpuReactivePolicy:
      return "cwgpureactive";
    default:
      return "";
  }
}

Kind strategy_kind_for(Kind policy_kind) {
  return is_cluster_policy(policy_kind) ? Kind::kClusterAutomationStrategy : Kind::kAutomationStrategy;
}

const PolicyCommon& Policy::common() const {
  if (is_static(kind)) return static_spec.common;
  if (is_reactive(kind)) return reactive.common;
  return proactive.common;
}

std::int32_t PolicyEvaluation::priority_of(Kind k) const {
  const char* name = info(k).name;
  auto it = std::find_if(precedence.begin(), precedence.end(),
                         [&](const PrecedenceEntry& e) { return e.type == name; });
  return it == precedence.end() ? 0 : it->priority;
}

}  // namespace kubex::api
