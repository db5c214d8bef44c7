// What the engine's own webhook server saw of the webhook health probes (WHH-2), so that a failed probe can
// say why: the pod admission handler records each probe review it receives (per pass) and the TLS listener
// each handshake that failed. The probe controller asks about its probe pod once the dry-run CREATE returned.
#pragma once

#include <chrono>
#include <deque>
#include <mutex>
#include <string>

namespace kubex::webhook {

class ProbeWitness {
 public:
  using Clock = std::chrono::steady_clock;

  void saw_probe(const std::string& pod_name, bool early_pass);
  void saw_tls_failure(std::string error);

  struct Sighting {
    bool early = false, late = false;
    std::string tls_failure;  // the last failed handshake at or after `since`
  };
  Sighting sighting(const std::string& pod_name, Clock::time_point since) const;

 private:
  struct Seen {
    std::string pod;
    bool early = false, late = false;
  };
  static constexpr std::size_t kKept = 32;  // probes run one at a time; a few are plenty
  mutable std::mutex mu_;
  std::deque<Seen> seen_;
  std::string tls_failure_;
  Clock::time_point tls_failure_at_{};
};

}  // namespace kubex::webhook
