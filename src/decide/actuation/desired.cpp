// ACT-1: the allocation a new pod of the workload gets now, as actuation asks admission for it.
#include <nlohmann/json.hpp>

#include "api/keys.h"
#include "api/objects.h"
#include "decide/actuation/actuation.h"
#include "decide/admission/pod_mutation.h"
#include "decide/policy/match.h"

namespace kubex::decide::actuation {

AdmissionDecision desired_admission(const AdmissionInput& in) {
  const auto lift = [](std::map<std::string, std::string>& m) { m.erase(api::keys::kPauseUntil); };
  AdmissionInput unpaused = in;
  policy::Workload workload;
  if (in.workload) {
    workload = *in.workload;
    lift(workload.annotations);
    lift(workload.template_annotations);
    unpaused.workload = &workload;
  }
  lift(unpaused.namespace_annotations);
  nlohmann::json pod = in.pod ? *in.pod : nlohmann::json::object();
  if (pod.contains("metadata") && pod["metadata"].contains("annotations") &&
      pod["metadata"]["annotations"].is_object()) {
    pod["metadata"]["annotations"].erase(api::keys::kPauseUntil);
  }
  unpaused.pod = &pod;
  api::GlobalConfigSpec global = in.global ? *in.global : api::GlobalConfigSpec{};
  global.automation_enabled = true;
  unpaused.global = &global;
  return decide_admission(unpaused);
}

}  // namespace kubex::decide::actuation
