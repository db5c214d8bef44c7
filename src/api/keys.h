// Well-known keys (SPEC §2): annotations, labels, taints, finalizers and resource names.
#pragma once

namespace kubex::api::keys {

// KAI-Scheduler.
inline constexpr const char* kGpuFraction = "gpu-fraction";
// KAI ≥ 0.18.2 burst limit of a fraction (KAI-2): request = gpu-fraction, limit = what the pod may burst to.
inline constexpr const char* kGpuFractionLimit = "gpu-fraction.limit";
inline constexpr const char* kGpuFractionContainerName = "gpu-fraction-container-name";
inline constexpr const char* kGpuMemory = "gpu-memory";
inline constexpr const char* kGpuFractionNumDevices = "gpu-fraction-num-devices";
inline constexpr const char* kKaiQueueLabel = "kai.scheduler/queue";
inline constexpr const char* kGpuGroupLabel = "runai-gpu-group";
inline constexpr const char* kDefaultKaiQueue = "kubex-unlimited-gpu-queue";
inline constexpr const char* kParentKaiQueue = "kubex-parent-queue";
inline constexpr const char* kDefaultKaiScheduler = "kai-scheduler";
inline constexpr const char* kDefaultReservationNamespace = "kai-resource-reservation";

// KAI 0.18 compute modes (CON-5b): `time-slicing` (absent) or `sm-sharing`.
inline constexpr const char* kGpuComputeSharingMode = "kai.scheduler/gpu-compute-sharing-mode";
inline constexpr const char* kContainerComputeModePrefix = "nvidia.com/container.";
inline constexpr const char* kContainerComputeModeSuffix = ".gpu-compute.mode";

// Resources.
inline constexpr const char* kGpuResource = "nvidia.com/gpu";

// Owner (and mirrored pod) annotations: "<prefix>.rightsizing.kubex.ai/<suffix>".
inline constexpr const char* kDesiredRequestsSuffix = ".rightsizing.kubex.ai/desired-resource-requests";
inline constexpr const char* kDesiredLimitsSuffix = ".rightsizing.kubex.ai/desired-resource-limits";
inline constexpr const char* kReactiveStateSuffix = ".rightsizing.kubex.ai/reactive-state";
inline constexpr const char* kProactiveStateSuffix = ".rightsizing.kubex.ai/proactive-state";
inline constexpr const char* kRollbackState = "rightsizing.kubex.ai/rollback-state";
// ACT-9: the ACT-5 "do not retry" record and the ACT-7 back-off, kept on the owner across restarts.
inline constexpr const char* kActuationState = "rightsizing.kubex.ai/actuation-state";

// Pod annotations written by admission and actuation.
inline constexpr const char* kAutomationConstraints = "rightsizing.kubex.ai/automation-constraints";
inline constexpr const char* kPodRightsizingInfo = "automation-webhook.kubex.ai/pod-rightsizing-info";

// Pause and disruption.
inline constexpr const char* kPauseUntil = "rightsizing.kubex.ai/pause-until";
inline constexpr const char* kDoNotDisrupt = "rightsizing.kubex.ai/do-not-disrupt";
inline constexpr const char* kKarpenterDoNotDisrupt = "karpenter.sh/do-not-disrupt";

// Consolidation.
inline constexpr const char* kConsolidatingTaint = "rightsizing.kubex.ai/consolidating";
inline constexpr const char* kConsolidationFinalizer = "rightsizing.kubex.ai/consolidation-cleanup";

// Webhook health probe (WHH).
inline constexpr const char* kWebhookProbe = "rightsizing.kubex.ai/webhook-probe";
inline constexpr const char* kProbeEarly = "automation-webhook.kubex.ai/probe-early";
inline constexpr const char* kProbeLate = "automation-webhook.kubex.ai/probe-late";

// Nodes and workload selectors.
inline constexpr const char* kGpuPresent = "nvidia.com/gpu.present";
inline constexpr const char* kGpuMemoryLabel = "nvidia.com/gpu.memory";
inline constexpr const char* kGpuProduct = "nvidia.com/gpu.product";

// Engine identity.
inline constexpr const char* kManagedByLabel = "app.kubernetes.io/managed-by";
inline constexpr const char* kManagedByValue = "kubex-automation-engine";
inline constexpr const char* kLeaseName = "kubex-automation-engine-leader";

// Webhook configurations (ADM-1).
inline constexpr const char* kLateWebhookConfig = "zzz-kubex-mutating-webhook-configuration";
inline constexpr const char* kLateWebhookName = "zzz-mpod-rightsizing-recommendations.kubex.ai";
inline constexpr const char* kLatePath = "/mutate--v1-pod";
inline constexpr const char* kEarlyWebhookConfig = "000-kubex-mutating-webhook-configuration";
inline constexpr const char* kEarlyWebhookName = "000-mpod-rightsizing-recommendations.kubex.ai";
inline constexpr const char* kEarlyPath = "/mutate--v1-pod-early";
inline constexpr const char* kValidatingWebhookConfig = "kubex-validating-webhook-configuration";

}  // namespace kubex::api::keys
