// The pod mutation handler (ADM-1..16, WHH-2, OBS-4) for both passes: decodes the pod, asks the engine for
// what the caches know (the catalog, the owner, the namespace), runs the pure decision
// (decide/admission/pod_mutation.h) and answers with its JSON Patch — or, with the engine's --dry-run, with
// none (ADM-15). Writes the one `rightsizing summary` line per decision and the owner events (WouldMutate,
// StrategyConflict at most once per hour per owner). Requests with dryRun never emit events. The server
// answers fail-open around it (ADM-2).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "common/clock.h"
#include "common/log.h"
#include "decide/admission/pod_mutation.h"
#include "decide/policy/catalog.h"
#include "kube/runtime/event_recorder.h"
#include "webhook/admission_review.h"
#include "webhook/server.h"

namespace kubex::webhook {

class ProbeWitness;

// The owner of a pod as the caches (or the API server) gave it (SEL-1, SEL-2).
struct PodOwner {
  bool unknown = false;
  std::optional<decide::policy::Workload> workload;
  kube::ObjectReference ref;  // the workload object, for events
};

// What the pod handler reads of the cluster: the engine's observe/ room in production, a fake in tests and
// benchmarks.
class PodAdmissionSource {
 public:
  virtual ~PodAdmissionSource() = default;
  virtual std::shared_ptr<const decide::policy::Catalog> catalog() const = 0;
  // Whether the caches have synced. Until they have, a request waits (at most PodAdmissionDeps::sync_wait)
  // rather than being decided on empty caches, which would admit a managed pod unconverted.
  virtual bool synced() const = 0;
  // SEL-1/2 for a pod; only asked when the decision needs it (not for probes, protected namespaces or while
  // automation is disabled). `retry_timeout`: webhookOwnerResolutionRetryTimeout.
  virtual PodOwner owner(const std::string& ns, const nlohmann::json& pod, common::Duration retry_timeout) const = 0;
  virtual std::map<std::string, std::string> namespace_annotations(const std::string& ns) const = 0;
};

struct PodAdmissionDeps {
  const PodAdmissionSource* source = nullptr;  // required; outlives the handler
  std::chrono::milliseconds sync_wait{5000};
  kube::EventRecorder* events = nullptr;  // may be null
  const common::Clock* clock = nullptr;   // default: the real clock
  bool dry_run = false;                   // engine --dry-run (ADM-15)
  ProbeWitness* probe_witness = nullptr;  // records the probe reviews received (WHH-2 messages); may be null
};

class PodAdmission {
 public:
  explicit PodAdmission(PodAdmissionDeps deps);
  AdmissionResponse handle(const AdmissionRequest& req, decide::Pass pass);

  // How the pod paths are served: mutating, fail-open (ADM-2), and only decide::admission_pod_fields() of
  // the pod decoded (what handle(), the decision and owner resolution read).
  static HandlerOptions handler_options();

 private:
  bool conflict_event_due(const std::string& owner_key, common::TimePoint now);

  PodAdmissionDeps deps_;
  common::Logger log_{"webhook.pod"};
  std::mutex mu_;
  std::unordered_map<std::string, common::TimePoint> last_conflict_event_;
};

}  // namespace kubex::webhook
