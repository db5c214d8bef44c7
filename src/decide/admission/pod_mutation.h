// The admission decision for one pod CREATE (SPEC §4, §5): ADM-3 exits 3-7 (3-5 in exits.h, shared with
// the webhook), ADM-4 pause, the GPU plan (gpu_plan.h), cpu/memory (resource_plan.h), ADM-13 KAI extras,
// VLM-2 vLLM rewriting, ADM-14 mirroring and automation-constraints, ADM-16 pod-rightsizing-info, and the
// OBS-4 summary. Pure: the caller has resolved the owner, the namespace, the policies and their strategies
// from its caches.
//
// The same function evaluates a pod TEMPLATE (ACT-1, "the GPU allocation a new pod would receive"): pass
// the template ({metadata, spec}) as `pod`; `allocation` in the result is what a new pod would get.
//
// Idempotent (ADM-2): deciding on the returned pod gives an empty patch, and an early pass followed by a
// late pass gives the same pod as one pass.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api/objects.h"
#include "common/clock.h"
#include "decide/admission/constraints.h"
#include "decide/admission/pod_resources.h"
#include "decide/admission/summary.h"
#include "decide/policy/candidate.h"

namespace kubex::common {
class JsonProjection;
}

namespace kubex::decide {

enum class Pass { kEarly, kLate };
const char* pass_name(Pass p);  // "early", "late"

struct AdmissionInput {
  const nlohmann::json* pod = nullptr;  // the Pod (request.object) or a pod template; required
  Pass pass = Pass::kLate;
  std::string phase = "admission";  // OBS-4 phase of the summary ("actuation" for ACT-1 evaluations)
  common::TimePoint now{};          // for pause-until (ADM-4)
  const api::GlobalConfigSpec* global = nullptr;             // nullptr: the defaults
  const api::PolicyEvaluation* evaluation = nullptr;         // nullptr: the default precedence
  std::string ns;                                            // the pod's namespace (request.namespace)
  std::map<std::string, std::string> namespace_annotations;  // the Namespace object's annotations
  bool owner_unknown = false;                                // SEL-2: the owner could not be read
  const policy::Workload* workload = nullptr;                // SEL-1: nullptr when the pod has no workload
  std::vector<policy::Candidate> candidates;  // every policy that might match (the caller's cache)
  bool dry_run = false;                       // copied to the summary
};

struct AdmissionDecision {
  // SKIPPED: an ADM-3 exit, a hold (RBK-4) or a pause (ADM-4). MUTATED: the pod's spec, labels or GPU
  // annotations changed. UNCHANGED: evaluated, and at most kubex's bookkeeping annotations
  // (automation-constraints, mirrored desired-resource-*, pod-rightsizing-info) changed. Whether a
  // patch is returned is `patched()` (the webhook's patched/unchanged metric).
  AdmissionResult result = AdmissionResult::kSkipped;
  std::shared_ptr<const nlohmann::json> pod;    // the pod after the decision
  std::shared_ptr<const nlohmann::json> patch;  // RFC 6902 operations from the input to `pod` (an array)
  Summary summary;
  Constraints constraints;  // the reasons written to automation-constraints
  bool strategy_conflict =
      false;  // SEL-10: the caller emits StrategyConflict (at most once per hour per owner)
  std::vector<std::string> stale_owner_annotations;  // SEL-7: owner keys a controller should remove
  std::vector<std::string> ignored_sources;          // VAL-7: owner annotations whose JSON did not parse
  std::vector<GpuAllocation> allocation;             // ACT-1: GPU allocation of `pod`

  bool patched() const;  // the patch is not empty
};

// Never throws on any pod JSON; a non-object `pod` is SKIPPED with an empty patch.
AdmissionDecision decide_admission(const AdmissionInput& in);

// The parts of a pod admission reads: what decide_admission reads and writes, and beside it what the
// webhook's handler reads (metadata.namespace, the probe annotation, the ownerReferences that owner
// resolution follows). A pod cut down to them (common::project) gets the same decision and the same patch
// as the whole pod; the webhook decodes only them, so volumes, env, probes and managedFields are never
// built. A new read of the pod must be added here: the decide table tests decide every case both ways.
const common::JsonProjection& admission_pod_fields();

}  // namespace kubex::decide
