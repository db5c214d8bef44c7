// SEL-3 scope match and the protected-namespace rule (GlobalConfiguration spec.protectedNamespacePatterns).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "api/objects.h"
#include "decide/policy/candidate.h"

namespace kubex::decide::policy {

// True when `ns` matches one of the `*` wildcard patterns (default "kube-*", "openshift-*", "gmp-*").
bool namespace_protected(std::string_view ns, const std::vector<std::string>& patterns);

// A metav1.LabelSelector (typed) against a label map. An absent or empty selector matches everything.
// matchExpressions operators In, NotIn, Exists, DoesNotExist; an unknown operator matches nothing. With
// `wildcard_values`, In/NotIn values are `*` wildcards (SEL-3 rules, used by CON-1); scope label
// selectors are literal.
bool selector_matches(const api::LabelSelector& selector, const std::map<std::string, std::string>& labels,
                      bool wildcard_values = false);

// A cluster policy's namespaceSelector: `In` needs some value to match `ns`, `NotIn` needs none to match,
// with `*` wildcards. Any other operator matches nothing.
bool namespace_selector_matches(std::string_view op, const std::vector<std::string>& values,
                                std::string_view ns);

// SEL-3: the workload kind is in workloadTypes; a namespaced policy matches only workloads in its own
// namespace; a cluster policy's namespaceSelector matches the namespace (a cluster policy without one
// matches nothing); labelSelector matches the WORKLOAD's labels; the namespace is not protected.
bool scope_matches(const api::Policy& policy, const Workload& workload,
                   const std::vector<std::string>& protected_patterns);

}  // namespace kubex::decide::policy
