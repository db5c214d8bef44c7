#include "webhook/probe_witness.h"

#include <iterator>

namespace kubex::webhook {

void ProbeWitness::saw_probe(const std::string& pod_name, bool early_pass) {
  std::lock_guard lk(mu_);
  auto it = seen_.begin();
  while (it != seen_.end() && it->pod != pod_name) ++it;
  if (it == seen_.end()) {
    if (seen_.size() >= kKept) seen_.pop_front();
    seen_.push_back({pod_name});
    it = std::prev(seen_.end());
  }
  (early_pass ? it->early : it->late) = true;
}

void ProbeWitness::saw_tls_failure(std::string error) {
  std::lock_guard lk(mu_);
  tls_failure_ = std::move(error);
  tls_failure_at_ = Clock::now();
}

ProbeWitness::Sighting ProbeWitness::sighting(const std::string& pod_name, Clock::time_point since) const {
  std::lock_guard lk(mu_);
  Sighting s;
  for (const auto& e : seen_) {
    if (e.pod == pod_name) {
      s.early = e.early;
      s.late = e.late;
    }
  }
  if (!tls_failure_.empty() && tls_failure_at_ >= since) s.tls_failure = tls_failure_;
  return s;
}

}  // namespace kubex::webhook
