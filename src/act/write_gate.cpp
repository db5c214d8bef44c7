#include "act/write_gate.h"

#include <prometheus/counter.h>
#include <nlohmann/json.hpp>
#include <prometheus/family.h>

#include "api/views.h"
#include "kube/runtime/metrics.h"

namespace kubex::act {

namespace {

class FunctionGate final : public WriteGate {
 public:
  explicit FunctionGate(std::function<bool()> holds) : holds_(std::move(holds)) {}
  bool may_write() const override { return !holds_ || holds_(); }

 private:
  std::function<bool()> holds_;
};

class GatedEvictor final : public Evictor {
 public:
  GatedEvictor(std::shared_ptr<Evictor> inner, std::shared_ptr<LeaseGuard> guard)
      : inner_(std::move(inner)), guard_(std::move(guard)) {}
  EvictionResult evict(const PodRef& pod, EvictionReason reason) override {
    if (!guard_->allow("eviction", pod.ns + "/" + pod.name)) {
      EvictionResult r;
      r.outcome = EvictionResult::Outcome::kError;
      r.message = kLeaseNotHeld;
      return r;
    }
    return inner_->evict(pod, reason);
  }

 private:
  std::shared_ptr<Evictor> inner_;
  std::shared_ptr<LeaseGuard> guard_;
};

class GatedTainter final : public Tainter {
 public:
  GatedTainter(std::shared_ptr<Tainter> inner, std::shared_ptr<LeaseGuard> guard)
      : inner_(std::move(inner)), guard_(std::move(guard)) {}
  TaintResult add(const std::string& node, const std::string& policy) override {
    if (!guard_->allow("taint", node)) return refused();
    return inner_->add(node, policy);
  }
  TaintResult remove(const std::string& node, const std::string& policy) override {
    if (!guard_->allow("taint", node)) return refused();
    return inner_->remove(node, policy);
  }

 private:
  static TaintResult refused() {
    TaintResult r;
    r.outcome = TaintResult::Outcome::kError;
    r.message = kLeaseNotHeld;
    return r;
  }
  std::shared_ptr<Tainter> inner_;
  std::shared_ptr<LeaseGuard> guard_;
};

class GatedAnnotationWriter final : public AnnotationWriter {
 public:
  GatedAnnotationWriter(std::shared_ptr<AnnotationWriter> inner, std::shared_ptr<LeaseGuard> guard)
      : inner_(std::move(inner)), guard_(std::move(guard)) {}
  std::expected<OwnerWrite, std::string> write(const api::WorkloadView& w, const std::map<std::string, std::string>& set,
                                               const std::vector<std::string>& remove,
                                               const std::string& what) override {
    if (set.empty() && remove.empty()) return OwnerWrite::kNothing;  // nothing would be sent
    if (!guard_->allow("owner", w.kind.str() + "/" + w.ns.str() + "/" + w.name)) {
      return std::unexpected(what + " " + kLeaseNotHeld);
    }
    return inner_->write(w, set, remove, what);
  }

 private:
  std::shared_ptr<AnnotationWriter> inner_;
  std::shared_ptr<LeaseGuard> guard_;
};

class GatedFinalizerWriter final : public FinalizerWriter {
 public:
  GatedFinalizerWriter(std::shared_ptr<FinalizerWriter> inner, std::shared_ptr<LeaseGuard> guard)
      : inner_(std::move(inner)), guard_(std::move(guard)) {}
  kube::KResult<void> add(const std::string& path, const std::string& finalizer) override {
    if (!guard_->allow("finalizer", path)) return std::unexpected(refused());
    return inner_->add(path, finalizer);
  }
  kube::KResult<void> remove(const std::string& path, const std::string& finalizer) override {
    if (!guard_->allow("finalizer", path)) return std::unexpected(refused());
    return inner_->remove(path, finalizer);
  }

 private:
  static kube::ApiStatus refused() {
    kube::ApiStatus e;
    e.reason = "LeaseNotHeld";
    e.message = kLeaseNotHeld;
    return e;
  }
  std::shared_ptr<FinalizerWriter> inner_;
  std::shared_ptr<LeaseGuard> guard_;
};

constexpr const char* kRefusedName = "kubex_lease_refused_writes_total";
constexpr const char* kRefusedHelp =
    "Evictions, node taints, owner annotation and finalizer writes not sent because this replica did not hold the leader Lease "
    "right before sending them (ENG-1, ACT-9), by write.";

}  // namespace

std::shared_ptr<const WriteGate> write_gate(std::function<bool()> holds) {
  return std::make_shared<FunctionGate>(std::move(holds));
}

LeaseGuard::LeaseGuard(std::shared_ptr<const WriteGate> gate, kube::Metrics* metrics, common::Logger log)
    : gate_(std::move(gate)), metrics_(metrics), log_(std::move(log)) {
  if (metrics_) {
    metrics_->counter_family(kRefusedName, kRefusedHelp);
  }
}

bool LeaseGuard::allow(const char* write, const std::string& target) {
  if (!gate_ || gate_->may_write()) {
    refusing_ = false;
    return true;
  }
  if (metrics_) {
    metrics_->counter_family(kRefusedName, kRefusedHelp).Add({{"write", write}}).Increment();
  }
  if (!refusing_.exchange(true)) {
    log_.warn("write not sent: this replica does not hold the leader Lease",
              {{"write", write}, {"target", target}});
  }
  return false;
}

std::shared_ptr<Evictor> gated_evictor(std::shared_ptr<Evictor> inner, std::shared_ptr<LeaseGuard> guard) {
  return std::make_shared<GatedEvictor>(std::move(inner), std::move(guard));
}

std::shared_ptr<Tainter> gated_tainter(std::shared_ptr<Tainter> inner, std::shared_ptr<LeaseGuard> guard) {
  return std::make_shared<GatedTainter>(std::move(inner), std::move(guard));
}

std::shared_ptr<AnnotationWriter> gated_annotation_writer(std::shared_ptr<AnnotationWriter> inner,
                                                          std::shared_ptr<LeaseGuard> guard) {
  return std::make_shared<GatedAnnotationWriter>(std::move(inner), std::move(guard));
}

std::shared_ptr<FinalizerWriter> gated_finalizer_writer(std::shared_ptr<FinalizerWriter> inner,
                                                        std::shared_ptr<LeaseGuard> guard) {
  return std::make_shared<GatedFinalizerWriter>(std::move(inner), std::move(guard));
}

}  // namespace kubex::act
