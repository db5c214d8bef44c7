// SEL-5 policy ordering: PolicyEvaluation priority of the kind (higher first), spec.weight (higher first),
// creationTimestamp (OLDER first), then name and namespace (lexicographically smaller first).
#pragma once

#include "api/objects.h"

namespace kubex::decide::policy {

// True when `a` comes before `b`. A strict weak ordering (ties only for the same kind/weight/time/name/ns).
bool precedes(const api::Policy& a, const api::Policy& b, const api::PolicyEvaluation& evaluation);

}  // namespace kubex::decide::policy
