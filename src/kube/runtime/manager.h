// The manager (controller-runtime's Manager, ENG-1): owns the client, informers, runnables, the leader
// elector, the event recorder, metrics and the HTTP endpoints, and runs them in order:
//   endpoints -> informers -> (all synced: "caches synced", ready) -> always-on runnables ->
//   leader election -> leader-only runnables while leading.
// Losing the lease stops the leader-only runnables at once and run() returns 1 (the process exits
// non-zero and restarts, as with controller-runtime). stop() (SIGTERM) stops the leader-only runnables,
// releases the lease, then stops the rest; run() returns 0. A shutdown that exceeds the graceful deadline
// ends the process with exit code 1.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/log.h"
#include "common/result.h"
#include "kube/runtime/event_recorder.h"
#include "kube/runtime/http_endpoints.h"
#include "kube/runtime/leader_election.h"
#include "kube/runtime/metrics.h"
#include "kube/runtime/runnable.h"

namespace kubex::kube {

class Client;
class Informer;

struct ManagerOptions {
  std::string metrics_bind = ":8080";
  std::string health_bind = ":8081";
  bool leader_elect = true;
  LeaderElectionConfig leader_election;  // lease namespace/name, identity, 15s/10s/2s
  std::shared_ptr<Client>
      lease_client;  // leader election's client (short timeout, no retries); default: client
  std::chrono::milliseconds graceful_shutdown_timeout{10000};
  EventRecorderOptions events;  // component / instance default to the engine's and the identity
};

class Manager {
 public:
  Manager(std::shared_ptr<Client> client, ManagerOptions options);
  ~Manager();
  Manager(const Manager&) = delete;
  Manager& operator=(const Manager&) = delete;

  const std::shared_ptr<Client>& client() const { return client_; }
  Metrics& metrics() { return *metrics_; }
  EventRecorder& events() { return *events_; }
  const std::string& identity() const { return options_.leader_election.identity; }

  // Registration happens before run(). Informers are started by run(); readiness waits for all of them.
  void add_informer(const std::string& name, std::shared_ptr<Informer> informer);
  std::shared_ptr<Informer> informer(const std::string& name) const;
  void add_runnable(std::shared_ptr<Runnable> runnable, bool leader_only);
  void add_readiness_check(const std::string& name, Check check);
  void add_health_check(const std::string& name, Check check);

  // Binds and serves /metrics, /healthz, /readyz (run() calls it when not done yet). Lets a caller serve the
  // probes (not ready) while it still checks the API server.
  common::Result<void> start_endpoints();
  HttpEndpoints* endpoints() { return endpoints_.get(); }

  // Blocks until stop() or a lost lease; returns the process exit code.
  int run();
  // Asks run() to shut down gracefully. Thread-safe; returns at once.
  void stop();

  bool caches_synced() const { return synced_; }
  bool is_leader() const;
  // ENG-1, ACT-9: may this replica send an eviction, a taint or an owner write now (LeaderElector::holds_lease();
  // always true without leader election). Checked right before each such write (act/write_gate.h).
  bool holds_lease() const;

 private:
  std::string informers_check() const;
  std::string leader_check() const;
  bool wait_for_sync();
  void start_leader_runnables();
  void stop_runnables(std::vector<std::shared_ptr<Runnable>>& list);
  void shutdown_watchdog(std::chrono::steady_clock::time_point deadline);

  std::shared_ptr<Client> client_;
  ManagerOptions options_;
  std::unique_ptr<Metrics> metrics_;
  std::unique_ptr<EventRecorder> events_;
  std::unique_ptr<HttpEndpoints> endpoints_;
  std::unique_ptr<LeaderElector> elector_;
  std::atomic<LeaderElector*> elector_ptr_{nullptr};  // what probe threads read (set once in run())
  std::vector<std::pair<std::string, std::shared_ptr<Informer>>> informers_;
  std::vector<std::shared_ptr<Runnable>> always_, leader_only_;
  std::vector<std::pair<std::string, Check>> pending_ready_, pending_health_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_requested_ = false, lease_lost_ = false;
  std::atomic<bool> leader_started_{false};
  std::atomic<bool> synced_{false};
  common::Logger log_{"manager"};
};

}  // namespace kubex::kube
