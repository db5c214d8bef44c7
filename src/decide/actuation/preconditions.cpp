// ACT-2: the preconditions of one pod, each with its name and (for some) the constraint it writes.
#include <algorithm>

#include "api/keys.h"
#include "decide/actuation/steps.h"

namespace kubex::decide::actuation {

Settings settings_of(const api::StrategySpec& s) {
  Settings out;
  out.pause_check = s.safety.enable_pause_until_annotation_check;
  out.eviction_enabled = s.pod_eviction_enabled;
  out.retry_pdb = s.retry_pod_disruption_budget;
  out.in_place_resize = s.in_place_resize_enabled;
  out.min_ready_duration = s.safety.min_ready_duration;
  out.require_owner_pods_ready = s.safety.require_owner_pods_ready;
  out.respect_max_unavailable = s.safety.respect_workload_max_unavailable;
  out.resize_retry_interval = s.safety.resize_retry_interval;
  return out;
}

bool PodFacts::has_rightsizing_info() const {
  return annotations.find(api::keys::kPodRightsizingInfo) != annotations.end();
}

bool never_evicted(std::string_view kind) {
  return kind == "Job" || kind == "CronJob" || kind == "AnalysisRun";
}

bool paused(const PodFacts& pod, const WorkloadFacts& w, const Settings& s, common::TimePoint now) {
  if (!s.pause_check) return false;
  const PauseSources sources{&pod.annotations, &w.annotations, &w.template_annotations,
                             &w.namespace_annotations};
  return paused_by(sources, now).has_value();
}

namespace {

bool ready_long_enough(const PodFacts& pod, common::Duration min_ready, common::TimePoint now) {
  return pod.ready && now - pod.ready_since >= min_ready;
}

bool all_ready(const std::vector<PodFacts>& pods) {
  return std::all_of(pods.begin(), pods.end(), [](const PodFacts& p) { return p.finished() || p.ready; });
}

}  // namespace

std::vector<Check> preconditions(const PodFacts& pod, const WorkloadFacts& w, const Settings& s,
                                 common::TimePoint now) {
  std::vector<Check> out;
  auto fail = [&](const char* name, bool written) { out.push_back({name, written ? name : ""}); };
  if (!s.automation_enabled) fail(check::kAutomationDisabled, false);
  if (s.protected_namespace) fail(check::kProtectedNamespace, false);
  if (paused(pod, w, s, now)) fail(check::kPauseActive, true);
  if (!s.eviction_enabled) fail(check::kPodEvictionDisabled, true);
  if (!s.webhook_healthy) fail(check::kWebhookUnhealthy, true);
  if (!ready_long_enough(pod, s.min_ready_duration, now)) fail(check::kMinReadyDurationNotMet, false);
  if (pod.terminating) fail(check::kPodTerminating, false);
  if (s.require_owner_pods_ready && !all_ready(w.pods)) fail(check::kOwnerPodsNotReady, false);
  if (never_evicted(w.kind)) fail(check::kJobPodNotEvicted, true);
  return out;
}

}  // namespace kubex::decide::actuation
