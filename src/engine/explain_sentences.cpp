// The one sentence `kubex explain` (SPEC CLI-1) gives each constraint reason (OBS-3), actuation check (ACT-2, ACT-3,
// ACT-5, ACT-7, ACT-10) and admission exit (ADM-3, RBK-4): explain_report.h reason_sentence().
#include <map>
#include <string>

#include "engine/explain_report.h"

namespace kubex::engine {
namespace {

// One sentence per name: admission's constraint reasons (OBS-3), actuation's checks (ACT-2, ACT-3, ACT-5,
// ACT-7) and admission's exits (ADM-3, RBK-4).
const std::map<std::string, std::string>& sentences() {
  static const std::map<std::string, std::string> m = {
      // Admission constraints.
      {"pause-active",
       "a pause-until annotation on the pod, its owner, the owner's pod template or the namespace is in the future "
       "(or infinite), so kubex changes nothing and evicts nothing."},
      {"automation-strategy-disabled",
       "the strategy's enablement flag for this resource, usage and direction is false, so the change was "
       "dropped."},
      {"floor-clamped", "the desired value was below the strategy's floor for this resource and was raised to it."},
      {"ceiling-clamped",
       "the desired value was above the strategy's ceiling for this resource and was lowered to it."},
      {"requests-exceed-limits",
       "the new request would be above the container's limit, so both changes for this resource were dropped."},
      {"no-gpu-recommendation",
       "no matching policy provides a GPU value for this container, so its GPU, scheduler and queue are left "
       "as they are."},
      {"multiple-gpu-containers",
       "more than one container asks for a GPU and a KAI gpu-fraction applies to one container, so the GPU is "
       "left whole."},
      {"unsupported-gpu-request",
       "the pod's GPU request cannot be converted (gpu-memory, gpu-fraction-num-devices, a gpu-fraction beside "
       "nvidia.com/gpu, an invalid gpu-fraction or gpu-fraction.limit, or a gpu-fraction under a vanilla "
       "strategy), so it is left as it is."},
      {"strategy-conflict",
       "the matching policies reference more than one strategy; the strategy of the policy providing the GPU "
       "value governs."},
      {"queue-overridden-by-owner",
       "the owner carries kai.scheduler/queue, which KAI reads before the pod's label, and kubex never edits "
       "owner labels."},
      {"vllm-args-not-rewritable",
       "vLLM's --gpu-memory-utilization could not be rewritten in this container's command or args."},
      {"kai-gpu-sharing-disabled",
       "global-config's spec.kai.gpuSharingMode is Disabled: KAI refuses fractions, so a value below 1 is applied "
       "as a whole GPU (KAI-1)."},
      {"harm-guard",
       "a resize down harmed this workload (ACT-10: an out-of-memory exit or 2 restarts within 10 minutes of a pod's "
       "start), so the GPU was raised to the container's harm-guard floor, the allocation it had before, kept in the "
       "owner's actuation-state for 24h."},
      {"fraction-limit-removed",
       "the pod's gpu-fraction.limit was at or below its new gpu-fraction, which KAI refuses, so it was removed "
       "(KAI-2)."},
      // Actuation checks and constraints.
      {"automation-disabled", "global-config has automationEnabled: false."},
      {"protected-namespace", "the namespace matches a protectedNamespacePatterns entry of global-config."},
      {"pod-eviction-disabled",
       "the strategy has podEviction.enabled: false, so a new value reaches only pods created later."},
      {"webhook-unhealthy",
       "PodAdmissionWebhookHealthy is not True: a replacement could be admitted without the new value, so "
       "evictions wait."},
      {"min-ready-duration-not-met", "the pod has not been Ready for the strategy's minReadyDuration yet."},
      {"pod-terminating", "the pod is already terminating."},
      {"owner-pods-not-ready", "requireOwnerPodsReady is set and not every pod of the workload is Ready."},
      {"job-pod-not-evicted", "pods of Jobs and CronJobs are never evicted; the next run gets the new value."},
      {"max-unavailable-exceeded",
       "the workload already has as many pods being replaced as it allows (max(1, maxUnavailable)); this pod "
       "waits its turn."},
      {"pdb-blocked",
       "a PodDisruptionBudget refused the eviction and retryPodDisruptionBudget is false: kubex does not retry "
       "until the desired value or the pod changes."},
      {"kai-fraction-requires-restart",
       "a KAI gpu-fraction cannot be resized in place, so the pod is replaced to get the new fraction."},
      {"replacement-not-mutated",
       "a pod created after the last eviction did not get the new value (the webhook may have failed open); "
       "evictions back off."},
      {"replacement-does-not-fit",
       "the new size is larger and no Ready, schedulable node has room for the replacement now (ACT-2a): the pod "
       "keeps running at its current size and is checked again at the next reconcile."},
      {"resize-harmed-workload",
       "kubex's resize down harmed a pod of this workload just now (ACT-10): nothing is evicted until the harm-guard "
       "floor is on the owner; then the harmed pods are replaced and their replacements get the floor."},
      {"eviction-failed",
       "the last eviction failed with an unexpected answer from the API server; kubex retries after "
       "resizeRetryInterval."},
      // Admission exits (ADM-3) and the hold (RBK-4).
      {"probe-pod", "it is the engine's own webhook health probe pod (WHH-2)."},
      {"malformed-pod", "its spec cannot be read as a pod."},
      {"unknown-owner", "its owner could not be read from the API server (SEL-2), so admission leaves it alone."},
      {"no-workload",
       "it has no recognised workload owner (SEL-1: Deployment, StatefulSet, DaemonSet, Job, CronJob, Rollout, "
       "AnalysisRun, Model, StrimziPodSet)."},
      {"not-managed", "no policy matches its workload."},
      {"policies-on-hold",
       "every policy matching its workload is invalid or references a missing or invalid strategy (RBK-4), so "
       "nothing is applied and nothing is rolled back."},
  };
  return m;
}

}  // namespace

std::string reason_sentence(const std::string& name) {
  auto it = sentences().find(name);
  return it == sentences().end() ? "see docs/explain.md for this reason." : it->second;
}

ExplainReason explain_reason(const std::string& name) {
  return {name, reason_sentence(name)};
}

}  // namespace kubex::engine
