// Leader election on a coordination.k8s.io/v1 Lease (ENG-1), like client-go's leaderelection package:
// acquire by creating the Lease or taking over an expired or released one, renew every retry period, give
// up when no renewal succeeded within the renew deadline (or another holder shows up), release on
// shutdown (holderIdentity cleared, leaseDurationSeconds 1) so another replica takes over at once.
//
// Expiry is judged by the LOCAL time at which this replica last saw the lease change (client-go's
// observedTime), never by comparing the holder's timestamps with our clock, so clock skew between
// replicas cannot cause two leaders. The decision itself is the pure function decide_lease().
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/log.h"

namespace kubex::kube {

class Client;
class Metrics;

inline constexpr const char* kEngineLeaseName = "kubex-automation-engine-leader";

// The Lease spec fields leader election uses.
struct LeaseRecord {
  std::string holder;
  int lease_duration_seconds = 0;
  common::TimePoint acquire_time{}, renew_time{};
  int transitions = 0;
  bool operator==(const LeaseRecord&) const = default;
};

// Reads / writes `spec` of a Lease object (missing or malformed fields read as empty/zero).
LeaseRecord lease_record_from(const nlohmann::json& lease);
void write_lease_record(nlohmann::json& lease, const LeaseRecord& record);

enum class LeaseAction {
  kCreate,   // no Lease yet: create it holding it
  kAcquire,  // released or expired: take it over (transitions + 1)
  kRenew,    // we hold it: bump renewTime
  kWait,     // another replica holds a live lease
};
const char* to_string(LeaseAction a);

struct LeaseDecision {
  LeaseAction action = LeaseAction::kWait;
  LeaseRecord record;  // what to write (kCreate/kAcquire/kRenew); the current record for kWait
};

// Pure decision. `current` is the Lease's record (nullopt = no Lease), `observed_at` the local time at which
// this replica first saw `current` in its present form, `now` the local time, `lease_duration` this
// replica's configured duration (used when the record carries none).
LeaseDecision decide_lease(const std::optional<LeaseRecord>& current, common::TimePoint observed_at,
                           common::TimePoint now, const std::string& identity,
                           common::Duration lease_duration);

struct LeaderElectionConfig {
  std::string lease_name = kEngineLeaseName;
  std::string lease_namespace = "kubex";
  std::string identity;  // default_identity() when empty
  common::Duration lease_duration = std::chrono::seconds(15);
  common::Duration renew_deadline = std::chrono::seconds(10);
  common::Duration retry_period = std::chrono::seconds(2);
  const common::Clock* clock = nullptr;  // default: the real clock
};

struct LeaderCallbacks {
  std::function<void()> on_started_leading;  // called on the elector's thread
  std::function<void()> on_stopped_leading;  // lease lost (not called after a release on stop)
  std::function<void(const std::string& holder)> on_new_leader;  // another holder observed
};

// hostname + "_" + 8 random hex digits.
std::string default_identity();

class LeaderElector {
 public:
  // `client` should have a short request timeout and no retries, so a hung request cannot outlast the
  // renew deadline (see engine wiring).
  LeaderElector(std::shared_ptr<Client> client, LeaderElectionConfig config, LeaderCallbacks callbacks,
                Metrics* metrics = nullptr);
  ~LeaderElector();
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  // Runs the acquire/renew loop on a background thread. After losing the lease the loop ends (the process
  // is expected to exit, as with controller-runtime); it does not try to re-acquire.
  void start();
  // Ends the loop; when `release` and this replica leads, releases the lease. Idempotent.
  void stop(bool release);

  bool is_leader() const { return leading_; }
  // ACT-9, ENG-1: may this replica write now? True while the Lease names this replica as its holder and its
  // last successful create/acquire/renew began less than the renew deadline before `now` (and the lease was not
  // lost or released). A replica cut off from the API server stops writing when its renew deadline ends, before
  // any other replica can take the lease over (lease duration > renew deadline). Cheap: no request.
  bool holds_lease(common::TimePoint now) const;
  bool holds_lease() const { return holds_lease(clock_.now()); }
  // True once the lease has been read or written successfully (the replica is leading or standing by).
  bool observed() const { return observed_once_; }
  bool lost() const { return lost_; }
  std::string holder() const;
  std::string lease_uid() const;  // metadata.uid of the Lease once written by this replica
  const std::string& identity() const { return config_.identity; }
  const LeaderElectionConfig& config() const { return config_; }

  // One attempt (GET, decide, create/PUT). True when this replica holds the lease afterwards.
  bool try_acquire_or_renew();
  // Clears holderIdentity if this replica holds the lease. True on success or when there was nothing to do.
  bool release();

 private:
  void run();
  void set_leading(bool leading);
  void note_error(const std::string& what, const std::string& error);
  bool wait(common::Duration d);  // false when stopping

  std::shared_ptr<Client> client_;
  LeaderElectionConfig config_;
  LeaderCallbacks callbacks_;
  Metrics* metrics_;
  const common::Clock& clock_;
  std::string path_, collection_;

  mutable std::mutex mu_;
  std::optional<LeaseRecord> observed_;
  common::TimePoint observed_time_{};
  std::shared_ptr<nlohmann::json> last_written_;  // our last successful write (renew without a GET)
  std::string last_error_;
  std::string holder_;
  std::optional<common::TimePoint> renewed_at_;  // when the last successful write of the lease as holder began

  std::atomic<bool> leading_{false}, observed_once_{false}, lost_{false}, stopping_{false};
  std::mutex wait_mu_;
  std::condition_variable wait_cv_;
  std::thread thread_;
  common::Logger log_{"leader-election"};
};

}  // namespace kubex::kube
