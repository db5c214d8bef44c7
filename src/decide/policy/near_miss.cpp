#include "decide/policy/near_miss.h"

#include <algorithm>
#include <tuple>

#include "decide/policy/scope.h"

namespace kubex::decide::policy {

namespace {

std::string list_text(const std::vector<std::string>& values) {
  std::string s;
  for (const auto& v : values) s += (s.empty() ? "" : ", ") + v;
  return "[" + s + "]";
}

// "the Deployment has no such label" / "the Deployment has app=web".
std::string has_text(const Workload& w, const std::string& key) {
  auto it = w.labels.find(key);
  if (it == w.labels.end()) return "the " + w.kind + " has no label " + key;
  return "the " + w.kind + " has " + key + "=" + it->second;
}

// SEL-3: one miss per label requirement the workload's labels fail (scope label selectors are literal).
void label_misses(const api::LabelSelector& selector, const Workload& w, std::vector<ScopeMiss>& out) {
  auto add = [&](const std::string& key, const std::string& needs) {
    out.push_back({ScopeCheck::kLabelSelector, key, "its labelSelector needs " + needs + "; " + has_text(w, key)});
  };
  for (const auto& [key, value] : selector.match_labels) {
    api::LabelSelector one;
    one.match_labels.emplace(key, value);
    if (!selector_matches(one, w.labels)) add(key, key + "=" + value);
  }
  for (const auto& req : selector.match_expressions) {
    api::LabelSelector one;
    one.match_expressions.push_back(req);
    if (selector_matches(one, w.labels)) continue;
    if (req.op == "In") {
      add(req.key, req.key + " in " + list_text(req.values));
    } else if (req.op == "NotIn") {
      add(req.key, req.key + " not in " + list_text(req.values));
    } else if (req.op == "Exists") {
      add(req.key, "a label " + req.key);
    } else if (req.op == "DoesNotExist") {
      add(req.key, "no label " + req.key);
    } else {
      out.push_back({ScopeCheck::kLabelSelector, req.key,
                     "its labelSelector's operator \"" + req.op + "\" on " + req.key + " matches nothing"});
    }
  }
}

}  // namespace

const char* scope_check_name(ScopeCheck c) {
  switch (c) {
    case ScopeCheck::kWorkloadType: return "workloadTypes";
    case ScopeCheck::kNamespace: return "namespace";
    case ScopeCheck::kNamespaceSelector: return "namespaceSelector";
    case ScopeCheck::kLabelSelector: return "labelSelector";
    case ScopeCheck::kProtectedNamespace: return "protectedNamespace";
    case ScopeCheck::kScope: return "scope";
  }
  return "scope";
}

std::vector<ScopeMiss> scope_misses(const api::Policy& policy, const Workload& workload,
                                    const std::vector<std::string>& protected_patterns) {
  std::vector<ScopeMiss> out;
  const api::Scope& scope = policy.common().scope;
  const auto& types = scope.workload_types;
  if (std::find(types.begin(), types.end(), workload.kind) == types.end()) {
    out.push_back({ScopeCheck::kWorkloadType, "",
                   "its workloadTypes " + list_text(types) + " do not include " + workload.kind});
  }
  if (api::is_cluster_policy(policy.kind)) {
    if (!scope.has_namespace_selector) {
      out.push_back({ScopeCheck::kNamespaceSelector, "",
                     "it has no namespaceSelector, and a cluster policy without one matches nothing"});
    } else if (!namespace_selector_matches(scope.namespace_operator, scope.namespace_values, workload.ns)) {
      out.push_back({ScopeCheck::kNamespaceSelector, "",
                     "its namespaceSelector " + scope.namespace_operator + " " + list_text(scope.namespace_values) +
                         " does not match namespace " + workload.ns});
    }
  } else if (policy.meta.ns != workload.ns) {
    out.push_back({ScopeCheck::kNamespace, "",
                   "it is in namespace " + policy.meta.ns + " and matches only workloads there; the " + workload.kind +
                       " is in " + workload.ns});
  }
  label_misses(scope.label_selector, workload, out);
  if (namespace_protected(workload.ns, protected_patterns)) {
    out.push_back({ScopeCheck::kProtectedNamespace, "",
                   "namespace " + workload.ns + " is protected (global-config spec.protectedNamespacePatterns)"});
  }
  return out;
}

std::optional<NearMiss> nearest_miss(const Workload& workload, std::span<const Candidate> candidates,
                                     const std::vector<std::string>& protected_patterns) {
  std::vector<NearMiss> all;
  for (const Candidate& c : candidates) {
    if (c.policy == nullptr || !api::is_policy(c.policy->kind)) continue;
    NearMiss m;
    m.candidate = &c;
    m.ref = ref_of(*c.policy);
    m.misses = scope_misses(*c.policy, workload, protected_patterns);
    if (!c.scope_evaluates) {
      m.misses.push_back({ScopeCheck::kScope, "", "its scope cannot be evaluated (the policy is invalid), so it "
                                                  "matches nothing"});
    }
    if (!m.misses.empty()) all.push_back(std::move(m));
  }
  if (all.empty()) return std::nullopt;
  auto before = [](const NearMiss& a, const NearMiss& b) {
    const api::Policy& x = *a.candidate->policy;
    const api::Policy& y = *b.candidate->policy;
    return std::forward_as_tuple(a.misses.size(), x.meta.name, a.ref, x.meta.ns) <
           std::forward_as_tuple(b.misses.size(), y.meta.name, b.ref, y.meta.ns);
  };
  auto best = std::min_element(all.begin(), all.end(), before);
  NearMiss out = *best;
  out.more = static_cast<std::size_t>(std::count_if(all.begin(), all.end(), [&](const NearMiss& m) {
               return m.misses.size() == out.misses.size();
             })) - 1;
  return out;
}

}  // namespace kubex::decide::policy
