#include "decide/admission/exits.h"

#include <nlohmann/json.hpp>

#include "api/keys.h"
#include "decide/policy/scope.h"

namespace kubex::decide {

namespace {

// metadata.annotations["rightsizing.kubex.ai/webhook-probe"] == "true"; any other shape is no probe.
bool is_probe(const nlohmann::json& pod) {
  if (!pod.is_object()) return false;
  auto meta = pod.find("metadata");
  if (meta == pod.end() || !meta->is_object()) return false;
  auto annotations = meta->find("annotations");
  if (annotations == meta->end() || !annotations->is_object()) return false;
  auto it = annotations->find(api::keys::kWebhookProbe);
  return it != annotations->end() && it->is_string() && it->get_ref<const std::string&>() == "true";
}

}  // namespace

EarlyExit early_exit(const nlohmann::json& pod, std::string_view ns, const api::GlobalConfigSpec& global) {
  if (is_probe(pod)) return EarlyExit::kProbePod;                         // (3)
  if (!global.automation_enabled) return EarlyExit::kAutomationDisabled;  // (4)
  if (policy::namespace_protected(ns, global.protected_namespace_patterns)) {
    return EarlyExit::kProtectedNamespace;  // (5)
  }
  return EarlyExit::kNone;
}

const char* exit_check(EarlyExit e) {
  switch (e) {
    case EarlyExit::kProbePod:
      return "probe-pod";
    case EarlyExit::kAutomationDisabled:
      return "automation-disabled";
    case EarlyExit::kProtectedNamespace:
      return "protected-namespace";
    case EarlyExit::kNone:
      break;
  }
  return "";
}

}  // namespace kubex::decide
