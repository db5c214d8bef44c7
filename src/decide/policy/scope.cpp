#include "decide/policy/scope.h"

#include <algorithm>

#include "common/wildcard.h"

namespace kubex::decide::policy {

namespace {

bool value_in(const std::vector<std::string>& values, std::string_view v, bool wildcard_values) {
  return std::any_of(values.begin(), values.end(), [&](const std::string& candidate) {
    return wildcard_values ? common::wildcard_match(candidate, v) : candidate == v;
  });
}

}  // namespace

std::string ref_of(const api::Policy& p) {
  return std::string(api::info(p.kind).name) + "/" + p.meta.name;
}
std::string ref_of(const api::Strategy& s) {
  return std::string(api::info(s.kind).name) + "/" + s.meta.name;
}

bool namespace_protected(std::string_view ns, const std::vector<std::string>& patterns) {
  return std::any_of(patterns.begin(), patterns.end(),
                     [&](const std::string& p) { return common::wildcard_match(p, ns); });
}

bool selector_matches(const api::LabelSelector& selector, const std::map<std::string, std::string>& labels,
                      bool wildcard_values) {
  for (const auto& [key, value] : selector.match_labels) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value) return false;
  }
  for (const auto& req : selector.match_expressions) {
    auto it = labels.find(req.key);
    const bool present = it != labels.end();
    if (req.op == "In") {
      if (!present || !value_in(req.values, it->second, wildcard_values)) return false;
    } else if (req.op == "NotIn") {
      if (present && value_in(req.values, it->second, wildcard_values)) return false;
    } else if (req.op == "Exists") {
      if (!present) return false;
    } else if (req.op == "DoesNotExist") {
      if (present) return false;
    } else {
      return false;
    }
  }
  return true;
}

bool namespace_selector_matches(std::string_view op, const std::vector<std::string>& values,
                                std::string_view ns) {
  if (op == "In") return value_in(values, ns, true);
  if (op == "NotIn") return !value_in(values, ns, true);
  return false;
}

bool scope_matches(const api::Policy& policy, const Workload& workload,
                   const std::vector<std::string>& protected_patterns) {
  const api::Scope& scope = policy.common().scope;
  const auto& types = scope.workload_types;
  if (std::find(types.begin(), types.end(), workload.kind) == types.end()) return false;
  if (api::is_cluster_policy(policy.kind)) {
    if (!scope.has_namespace_selector) return false;
    if (!namespace_selector_matches(scope.namespace_operator, scope.namespace_values, workload.ns))
      return false;
  } else if (policy.meta.ns != workload.ns) {
    return false;
  }
  if (!selector_matches(scope.label_selector, workload.labels)) return false;
  return !namespace_protected(workload.ns, protected_patterns);
}

}  // namespace kubex::decide::policy
