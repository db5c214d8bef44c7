#include "webhook/pod_admission.h"

#include <nlohmann/json.hpp>
#include <thread>

#include "common/blocking.h"
#include "common/json_projection.h"
#include "decide/admission/exits.h"
#include "webhook/probe_witness.h"

namespace kubex::webhook {

using nlohmann::json;

namespace {

// VAL-9: the object must decode as a Pod.
bool decodes_as_pod(const json& pod) {
  return pod.is_object() && pod.contains("spec") && pod["spec"].is_object() &&
         (!pod.contains("metadata") || pod["metadata"].is_object());
}

}  // namespace

PodAdmission::PodAdmission(PodAdmissionDeps deps) : deps_(std::move(deps)) {
  if (!deps_.clock) deps_.clock = &common::RealClock::instance();
}

HandlerOptions PodAdmission::handler_options() {
  static const auto fields = std::make_shared<const common::JsonProjection>(decide::admission_pod_fields());
  HandlerOptions o;
  o.mutating = true;
  o.fail_open = true;  // ADM-2: pod creation is never blocked by the engine
  o.object_fields = fields;
  return o;
}

bool PodAdmission::conflict_event_due(const std::string& owner_key, common::TimePoint now) {
  std::lock_guard lk(mu_);
  auto [it, inserted] = last_conflict_event_.try_emplace(owner_key, now);
  if (inserted) return true;
  if (now - it->second < std::chrono::hours(1)) return false;
  it->second = now;
  return true;
}

AdmissionResponse PodAdmission::handle(const AdmissionRequest& req, decide::Pass pass) {
  // ADM-3 (2): only pod CREATE.
  if (req.kind.kind != "Pod" || req.operation != Operation::kCreate) return AdmissionResponse::allow();
  const json& pod = *req.object;
  if (!decodes_as_pod(pod)) {
    log_.warn("admission object does not decode as a Pod", {{"uid", req.uid}, {"namespace", req.ns}});
    AdmissionResponse r = AdmissionResponse::allow();
    r.internal_error = true;
    return r;
  }
  const PodAdmissionSource& source = *deps_.source;
  if (!source.synced()) {
    const common::BlockingScope waiting;  // the server lends another serving thread meanwhile
    auto until = std::chrono::steady_clock::now() + deps_.sync_wait;
    while (!source.synced() && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  auto catalog = source.catalog();
  const api::GlobalConfigSpec& global = catalog->global();
  common::TimePoint now = deps_.clock->now();

  decide::AdmissionInput in;
  in.pod = &pod;
  in.pass = pass;
  in.now = now;
  in.global = &global;
  in.evaluation = &catalog->evaluation();
  in.ns = req.ns.empty() && pod.contains("metadata") ? pod["metadata"].value("namespace", "") : req.ns;
  in.dry_run = deps_.dry_run || req.dry_run;
  PodOwner owner;
  // The owner and namespace are read only when the decision goes past the cheap exits (ADM-3 3-5): probe
  // pods, disabled automation and protected namespaces never wait for an owner lookup. The decision skips
  // on the same function's answer.
  const decide::EarlyExit exit = decide::early_exit(pod, in.ns, global);
  const bool probe = exit == decide::EarlyExit::kProbePod;
  if (probe && deps_.probe_witness && pod.contains("metadata") && pod["metadata"].is_object()) {
    deps_.probe_witness->saw_probe(pod["metadata"].value("name", ""), pass == decide::Pass::kEarly);
  }
  if (decide::needs_owner(exit)) {
    owner = source.owner(in.ns, pod, global.webhook_owner_resolution_retry_timeout);
    in.namespace_annotations = source.namespace_annotations(in.ns);
    in.owner_unknown = owner.unknown;
    if (owner.workload) in.workload = &*owner.workload;
    in.candidates = catalog->candidates();
  }

  decide::AdmissionDecision d = decide::decide_admission(in);

  // OBS-4: one line per decision. The health probe's own pods (WHH-2: only a marker is added, every interval and
  // pass) are no rightsizing decision a user made: their line is at debug, so an idle cluster stays quiet.
  const common::LogLevel level = probe ? common::LogLevel::kDebug : common::LogLevel::kInfo;
  if (log_.enabled(level)) {
    log_.log_members(level, "rightsizing summary", decide::summary_members(d.summary, d.ignored_sources));
  }

  bool emit_events = deps_.events && !req.dry_run && owner.workload.has_value();
  if (emit_events && d.strategy_conflict) {
    std::string key = owner.ref.ns + "/" + owner.ref.kind + "/" + owner.ref.name;
    if (conflict_event_due(key, now)) {
      deps_.events->event(owner.ref, kube::EventType::kWarning, "StrategyConflict",
                          "policies matching " + owner.workload->ref() +
                              " reference more than one strategy; the strategy of the policy providing "
                              "the GPU value governs (" +
                              d.summary.strategy + ")");
    }
  }
  AdmissionResponse r = AdmissionResponse::allow();
  r.probe = probe;  // OBS-5: result="probe", never "patched"
  if (!d.patched()) return r;
  // ADM-15: everything computed, nothing applied. The probe's marker (WHH-2) is not a change to anybody's
  // pod: a dry-run engine still reports its webhook health.
  if (deps_.dry_run && !probe) {
    log_.info("dry run: would mutate pod", {{"namespace", in.ns},
                                            {"pod", d.summary.pod},
                                            {"pass", decide::pass_name(pass)},
                                            {"patch", *d.patch}});
    if (emit_events) {
      deps_.events->event(owner.ref, kube::EventType::kNormal, "WouldMutate",
                          "dry run: pod " + in.ns + "/" + d.summary.pod + " would get: " + d.summary.text);
    }
    return r;
  }
  r.set_patch(*d.patch);
  return r;
}

}  // namespace kubex::webhook
