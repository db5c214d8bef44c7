#include "decide/policy/ordering.h"

namespace kubex::decide::policy {

bool precedes(const api::Policy& a, const api::Policy& b, const api::PolicyEvaluation& evaluation) {
  const auto pa = evaluation.priority_of(a.kind), pb = evaluation.priority_of(b.kind);
  if (pa != pb) return pa > pb;
  const auto wa = a.common().weight, wb = b.common().weight;
  if (wa != wb) return wa > wb;
  if (a.meta.created != b.meta.created) return a.meta.created < b.meta.created;
  if (a.meta.name != b.meta.name) return a.meta.name < b.meta.name;
  if (a.meta.ns != b.meta.ns) return a.meta.ns < b.meta.ns;
  // Same priority, weight, age and identity but different kinds (equal priorities): keep it deterministic.
  return static_cast<int>(a.kind) < static_cast<int>(b.kind);
}

}  // namespace kubex::decide::policy
