// OBS-3: actuation's share of the pod annotation `automation-constraints`, patched only when its set of
// reasons changes.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "decide/actuation/steps.h"
#include "decide/admission/constraints.h"

namespace kubex::decide::actuation {

namespace {

constexpr const char* kOwned[] = {
    reason::kPauseActive,    reason::kPodEvictionDisabled,        reason::kWebhookUnhealthy,
    reason::kPdbBlocked,     reason::kKaiFractionRequiresRestart, reason::kReplacementNotMutated,
    check::kJobPodNotEvicted, reason::kReplacementDoesNotFit};

std::string text(const nlohmann::json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The annotation as Constraints; anything unreadable is dropped.
Constraints parse(std::string_view current) {
  Constraints out;
  const nlohmann::json doc = nlohmann::json::parse(current, nullptr, false);
  if (!doc.is_array()) return out;
  for (const nlohmann::json& e : doc) {
    if (!e.is_object()) continue;
    const std::string r = text(e, "reason");
    if (r.empty()) continue;
    auto targets = e.find("targets");
    if (targets == e.end() || !targets->is_array() || targets->empty()) {
      out.add_pod(r);
      continue;
    }
    for (const nlohmann::json& t : *targets) {
      if (!t.is_object()) continue;
      out.add(r, {text(t, "container"), text(t, "resource"), text(t, "usage"), text(t, "direction")});
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> constraint_reasons(std::string_view current) {
  return parse(current).reasons();
}

bool actuation_reason(std::string_view reason) {
  return std::any_of(std::begin(kOwned), std::end(kOwned), [&](const char* r) { return reason == r; });
}

std::optional<std::string> updated_constraints(std::string_view current,
                                               const std::vector<std::string>& mine) {
  const Constraints before = parse(current);
  Constraints after;
  for (const Constraint& e : before.entries()) {
    if (actuation_reason(e.reason)) continue;
    if (e.targets.empty()) after.add_pod(e.reason);
    for (const ConstraintTarget& t : e.targets) after.add(e.reason, t);
  }
  for (const std::string& r : mine) after.add_pod(r);
  if (after.reasons() == before.reasons()) return std::nullopt;
  return after.empty() ? std::string() : after.to_json();
}

}  // namespace kubex::decide::actuation
