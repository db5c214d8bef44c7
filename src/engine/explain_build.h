// The sections of `kubex explain` (explain_cmd.h), each computed by the engine's own code over caches synced
// once: the policies and resources (decide::policy, decide::decide_admission), the reactive cycle
// (observe::read_signals, decide::reactive), actuation (controllers' read_workload, decide::actuation) and the
// rollback state (RBK-1). Internal to src/engine.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "common/clock.h"
#include "decide/admission/pause.h"
#include "engine/explain_cmd.h"
#include "engine/explain_model.h"

namespace kubex::api {
struct WorkloadView;
struct GlobalConfigSpec;
}  // namespace kubex::api
namespace kubex::prom {
struct Options;
}
namespace kubex::kube {
class Client;
}
namespace kubex::observe {
struct Caches;
class CatalogCache;
}  // namespace kubex::observe

namespace kubex::engine {

struct ExplainContext {
  const observe::Caches& caches;
  const observe::CatalogCache& catalog;
  kube::Client& client;
  const ExplainOptions& options;
  common::TimePoint now;
};

// The Prometheus `kubex explain` reads: --prometheus-url when given, else global-config's, with its timeout and the
// token and CA flags.
prom::Options explain_prometheus(const ExplainContext& ctx, const api::GlobalConfigSpec& global);

// Policies (SEL-4…SEL-7), strategy and mode, and per container and slot what a pod created now gets: the
// admission decision on `new_pod` (the workload's pod template, or a live pod for owners without one).
// `live_pod` (the explained pod, or null for a workload) gives the current values. Sets e.not_managed for
// ADM-3 exits (4), (5) and (7).
void explain_admission(const ExplainContext& ctx, const api::WorkloadView& workload, const nlohmann::json& new_pod,
                       const nlohmann::json* live_pod, Explanation& e);

// The proactive section when a proactive policy wins the workload (SEL-7): its history read now with the engine's
// batched queries, the ConfigMap entry and what the owner would hold (explain_proactive.cpp).
void explain_proactive(const ExplainContext& ctx, const api::WorkloadView& workload, Explanation& e);

// The reactive section when a reactive policy wins the workload (SEL-7); nothing otherwise.
void explain_reactive(const ExplainContext& ctx, const api::WorkloadView& workload, Explanation& e);

// ACT-1…ACT-3 now for the workload's pods (only `pod` when not empty), as the actuation controller decides.
void explain_actuation(const ExplainContext& ctx, const api::WorkloadView& workload, const std::string& pod,
                       Explanation& e);

// ADM-4 / ACT-2: the pause-until that pauses a pod, in decide::paused_by's order (the pod, its owner, the owner's pod
// template, the namespace), and the object that carries it; nullopt when none is in force. `pod` is null when there
// is no live pod.
std::optional<ExplainPause> pause_of(const decide::AnnotationMap* pod, const std::string& pod_name,
                                     const decide::AnnotationMap& owner, const decide::AnnotationMap& owner_template,
                                     const decide::AnnotationMap& ns_annotations, const std::string& owner_ref,
                                     const std::string& ns, common::TimePoint now, bool checked);

// RBK-1: the owner's rollback-state.
ExplainRollback explain_rollback(const api::WorkloadView& workload);

}  // namespace kubex::engine
