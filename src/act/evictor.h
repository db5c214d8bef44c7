// The evictor (DESIGN §3 act/): asks the API server to evict one pod through the policy/v1 Eviction
// subresource (SPEC §1.8), so PodDisruptionBudgets are honoured by the server (ACT-4, ACT-5, RBK-2, CON).
// The request carries the pod's uid as a delete precondition: a replacement pod that took the same name
// (StatefulSet) is never evicted in its place.
#pragma once

#include <memory>
#include <string>

#include "common/log.h"

namespace kubex::kube {
class Client;
class Metrics;
}  // namespace kubex::kube

namespace kubex::act {

// The pod to evict, as the informer cache last saw it. An empty uid sends no precondition.
struct PodRef {
  std::string ns, name, uid;
};

// Why the pod goes: the `reason` label of kubex_evictions_total (OBS-5).
enum class EvictionReason { kResize, kRollback, kConsolidation };

struct EvictionResult {
  enum class Outcome {
    kEvicted,     // 200/201: the server accepted the eviction (the pod is now terminating)
    kGone,        // 404, or 409 on the uid precondition: the pod we meant no longer exists (a success)
    kPdbBlocked,  // 429: a PodDisruptionBudget refused it (ACT-5)
    kError,       // anything else, a transport failure or a throttling 429 (retryAfterSeconds and no
                  // DisruptionBudget cause, ENG-4) included (http_code 0 when nothing came back); retried later
    kDryRun,      // --dry-run: nothing was sent (ACT-8)
  };
  Outcome outcome = Outcome::kError;
  // The API server's message ("Cannot evict pod as it would violate the pod's disruption budget.", the
  // transport error), "" when accepted.
  std::string message;
  // For a PDB refusal, the server's DisruptionBudget cause ("The disruption budget web needs 3 healthy pods
  // and has 3 currently", or "... is still being processed by the server."), "" when it gave none.
  std::string cause;
  int http_code = 0;  // 0 when nothing came back (transport failure, dry run)

  bool succeeded() const { return outcome == Outcome::kEvicted || outcome == Outcome::kGone; }
};

// "resize", "rollback", "consolidation".
const char* reason_label(EvictionReason reason);
// "evicted", "gone", "pdb_blocked", "error", "dry_run".
const char* outcome_name(EvictionResult::Outcome outcome);

class Evictor {
 public:
  virtual ~Evictor() = default;
  virtual EvictionResult evict(const PodRef& pod, EvictionReason reason) = 0;
};

// Evicts through `client`, counting kubex_evictions_total{reason, result} in `metrics` (result success for
// kEvicted and kGone, pdb_blocked, error; the family exists from construction; nullptr counts nothing) and
// logging each eviction with `log`. With `dry_run` nothing is sent or counted: it logs "would evict" and
// answers kDryRun (ACT-8).
//
// kube::Client retries 429 and 5xx answers itself (ClientOptions::max_retries, honouring Retry-After): on a
// client with retries, a PDB refusal comes back only after those retries. A client built for evictions with
// max_retries = 0 reports it at once and leaves the retry to the caller (ACT-5, resizeRetryInterval).
std::shared_ptr<Evictor> client_evictor(std::shared_ptr<kube::Client> client, kube::Metrics* metrics,
                                        bool dry_run, common::Logger log);

}  // namespace kubex::act
