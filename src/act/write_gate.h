// ENG-1/ACT-9: only the current Lease holder writes. A replica that lost its Lease may not know it yet (its renew
// deadline has not passed); every eviction, node taint and owner annotation write is therefore checked against
// the lease state right before it is sent. WriteGate is that check (the engine's: Manager::holds_lease(); tests and
// engines without leader election: always open); the gated_* decorators put it in front of the real writers. A
// refused write is not sent: it is counted in kubex_lease_refused_writes_total{write}, logged once per run of
// refusals, and comes back as an error, so the caller's reconcile is tried again later.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "act/evictor.h"
#include "act/finalizers.h"
#include "act/owner_annotations.h"
#include "act/tainter.h"
#include "common/log.h"

namespace kubex::kube {
class Metrics;
}

namespace kubex::act {

class WriteGate {
 public:
  virtual ~WriteGate() = default;
  // True while this replica may write (it holds the Lease and its last renewal is within the renew deadline).
  virtual bool may_write() const = 0;
};

// A gate asking `holds`; an empty function is always open.
std::shared_ptr<const WriteGate> write_gate(std::function<bool()> holds);

// The message of a refused write.
inline constexpr const char* kLeaseNotHeld = "not sent: this replica does not hold the leader Lease (ENG-1)";

// What the decorators share: the gate, the counter and the "logged once" state.
class LeaseGuard {
 public:
  LeaseGuard(std::shared_ptr<const WriteGate> gate, kube::Metrics* metrics, common::Logger log);
  // Checks the gate for a write of kind `write` ("eviction", "taint", "owner") on `target`: false (counted, and
  // logged when the previous check passed) when it may not be sent.
  bool allow(const char* write, const std::string& target);

 private:
  std::shared_ptr<const WriteGate> gate_;
  kube::Metrics* metrics_;
  common::Logger log_;
  std::atomic<bool> refusing_{false};
};

std::shared_ptr<Evictor> gated_evictor(std::shared_ptr<Evictor> inner, std::shared_ptr<LeaseGuard> guard);
std::shared_ptr<Tainter> gated_tainter(std::shared_ptr<Tainter> inner, std::shared_ptr<LeaseGuard> guard);
std::shared_ptr<AnnotationWriter> gated_annotation_writer(std::shared_ptr<AnnotationWriter> inner,
                                                          std::shared_ptr<LeaseGuard> guard);
// Finalizer adds and removes on kubex's own objects (write "finalizer"): a refused one is a KResult error.
std::shared_ptr<FinalizerWriter> gated_finalizer_writer(std::shared_ptr<FinalizerWriter> inner,
                                                        std::shared_ptr<LeaseGuard> guard);

}  // namespace kubex::act
