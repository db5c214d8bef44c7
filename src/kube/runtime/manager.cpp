#include "kube/runtime/manager.h"

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <thread>

#include "kube/cache/informer.h"
#include "kube/client/client.h"

namespace kubex::kube {

using nlohmann::json;
using SteadyTime = std::chrono::steady_clock::time_point;

Manager::Manager(std::shared_ptr<Client> client, ManagerOptions options)
    : client_(std::move(client)), options_(std::move(options)), metrics_(std::make_unique<Metrics>()) {
  if (options_.leader_election.identity.empty()) options_.leader_election.identity = default_identity();
  if (options_.events.instance.empty()) options_.events.instance = options_.leader_election.identity;
  if (!options_.events.metrics) options_.events.metrics = metrics_.get();
  if (!options_.lease_client) options_.lease_client = client_;
  events_ = std::make_unique<EventRecorder>(client_event_sink(client_), options_.events);
  client_->set_observer(metrics_->request_observer());
  if (options_.lease_client != client_) options_.lease_client->set_observer(metrics_->request_observer());
  pending_ready_.emplace_back("informers", [this] { return informers_check(); });
  if (options_.leader_elect) {
    pending_ready_.emplace_back("leader-election", [this] { return leader_check(); });
    metrics_->set_leader_status(options_.leader_election.lease_name, false);
  }
}

Manager::~Manager() {
  for (auto& r : leader_only_) r->stop();
  for (auto& r : always_) r->stop();
  if (elector_) elector_->stop(false);
  for (auto& [name, inf] : informers_) inf->stop();
  if (events_) events_->stop(std::chrono::milliseconds(0));
  if (endpoints_) endpoints_->stop();
}

void Manager::add_informer(const std::string& name, std::shared_ptr<Informer> informer) {
  informers_.emplace_back(name, std::move(informer));
}

std::shared_ptr<Informer> Manager::informer(const std::string& name) const {
  for (const auto& [n, inf] : informers_) {
    if (n == name) return inf;
  }
  return nullptr;
}

void Manager::add_runnable(std::shared_ptr<Runnable> runnable, bool leader_only) {
  (leader_only ? leader_only_ : always_).push_back(std::move(runnable));
}

void Manager::add_readiness_check(const std::string& name, Check check) {
  if (endpoints_) {
    endpoints_->add_readiness_check(name, std::move(check));
  } else {
    pending_ready_.emplace_back(name, std::move(check));
  }
}

void Manager::add_health_check(const std::string& name, Check check) {
  if (endpoints_) {
    endpoints_->add_health_check(name, std::move(check));
  } else {
    pending_health_.emplace_back(name, std::move(check));
  }
}

common::Result<void> Manager::start_endpoints() {
  if (endpoints_) return {};
  HttpEndpoints::Options o;
  o.metrics_bind = options_.metrics_bind;
  o.health_bind = options_.health_bind;
  o.render_metrics = [m = metrics_.get()] { return m->render(); };
  auto ep = HttpEndpoints::start(std::move(o));
  if (!ep) return std::unexpected(ep.error());
  endpoints_ = std::move(*ep);
  for (auto& [n, c] : pending_ready_) endpoints_->add_readiness_check(n, std::move(c));
  for (auto& [n, c] : pending_health_) endpoints_->add_health_check(n, std::move(c));
  pending_ready_.clear();
  pending_health_.clear();
  return {};
}

bool Manager::holds_lease() const {
  if (LeaderElector* e = elector_ptr_) return e->holds_lease();
  return !options_.leader_elect;
}

bool Manager::is_leader() const {
  if (LeaderElector* e = elector_ptr_) return e->is_leader();
  return !options_.leader_elect && leader_started_;
}

std::string Manager::informers_check() const {
  if (synced_) return "";
  std::string waiting;
  for (const auto& [name, inf] : informers_) {
    if (inf->synced()) continue;
    waiting += (waiting.empty() ? "" : ", ") + name;
  }
  return waiting.empty() ? "caches are syncing" : "caches not synced: " + waiting;
}

std::string Manager::leader_check() const {
  LeaderElector* e = elector_ptr_;
  if (!e) return "leader election has not started";
  if (e->lost()) return "leader election lost";
  if (e->is_leader() || e->observed()) return "";
  return "lease " + options_.leader_election.lease_namespace + "/" + options_.leader_election.lease_name +
         " not observed yet";
}

bool Manager::wait_for_sync() {
  auto t0 = std::chrono::steady_clock::now();
  for (auto& [name, inf] : informers_) inf->start();
  for (auto& [name, inf] : informers_) {
    while (!inf->wait_synced(std::chrono::milliseconds(100))) {
      std::lock_guard lk(mu_);
      if (stop_requested_) return false;
    }
  }
  json counts = json::object();
  for (const auto& [name, inf] : informers_) counts[name] = inf->size();
  auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  log_.info("caches synced", {{"objects", counts}, {"duration_ms", ms}});
  synced_ = true;  // after the log line: /readyz never reports ready before it
  return true;
}

void Manager::start_leader_runnables() {
  std::lock_guard lk(mu_);
  if (stop_requested_ || lease_lost_ || leader_started_) return;
  leader_started_ = true;
  for (auto& r : leader_only_) r->start();
}

void Manager::stop_runnables(std::vector<std::shared_ptr<Runnable>>& list) {
  for (auto& r : list) r->stop();
}

// Ends the process if the graceful shutdown has not finished by `deadline` (a reconcile that never returns
// must not keep a replica that no longer leads alive).
void Manager::shutdown_watchdog(SteadyTime deadline) {
  std::thread([log = log_, timeout = options_.graceful_shutdown_timeout.count(), deadline] {
    std::this_thread::sleep_until(deadline);
    log.error("graceful shutdown timed out; exiting", {{"timeout_ms", timeout}});
    std::_Exit(1);
  }).detach();
}

int Manager::run() {
  if (auto ep = start_endpoints(); !ep) {
    log_.error("cannot start HTTP endpoints", {{"error", ep.error().str()}});
    return 1;
  }
  events_->start();
  bool synced = wait_for_sync();
  if (synced) {
    for (auto& r : always_) r->start();
    if (options_.leader_elect) {
      LeaderCallbacks cb;
      cb.on_started_leading = [this] {
        log_.info("leadership acquired, starting leader-only runnables",
                  {{"identity", identity()}, {"runnables", leader_only_.size()}});
        start_leader_runnables();
        // As client-go's resource lock does: a Normal event on the Lease for humans.
        const auto& le = options_.leader_election;
        events_->event({"coordination.k8s.io/v1", "Lease", le.lease_namespace, le.lease_name,
                        elector_ptr_.load()->lease_uid(), "", ""},
                       EventType::kNormal, "LeaderElection", identity() + " became leader");
      };
      cb.on_stopped_leading = [this] {
        std::lock_guard lk(mu_);
        lease_lost_ = true;
        cv_.notify_all();
      };
      elector_ = std::make_unique<LeaderElector>(options_.lease_client, options_.leader_election, cb,
                                                 metrics_.get());
      elector_ptr_ = elector_.get();
      elector_->start();
    } else {
      log_.info("leader election disabled, starting leader-only runnables",
                {{"runnables", leader_only_.size()}});
      start_leader_runnables();
    }
  }
  bool lost = false;
  {
    std::unique_lock lk(mu_);
    cv_.wait(lk, [&] { return stop_requested_ || lease_lost_; });
    lost = lease_lost_ && !stop_requested_;
    stop_requested_ = true;  // no leader-only runnable starts from now on
  }
  auto deadline = std::chrono::steady_clock::now() + options_.graceful_shutdown_timeout;
  shutdown_watchdog(deadline);
  stop_runnables(leader_only_);  // stop acting first
  if (lost) {
    log_.error("leader election lost, leader-only runnables stopped; exiting", {{"identity", identity()}});
  }
  if (elector_) elector_->stop(!lost);  // release the lease so another replica takes over at once
  stop_runnables(always_);
  for (auto& [name, inf] : informers_) inf->stop();
  events_->stop(std::chrono::duration_cast<std::chrono::milliseconds>(std::max(
      SteadyTime::duration::zero(),
      std::min<SteadyTime::duration>(deadline - std::chrono::steady_clock::now(), std::chrono::seconds(2)))));
  if (endpoints_) endpoints_->stop();
  leader_only_.clear();
  always_.clear();
  if (lost) return 1;
  log_.info("stopped");
  return 0;
}

void Manager::stop() {
  std::lock_guard lk(mu_);
  stop_requested_ = true;
  cv_.notify_all();
}

}  // namespace kubex::kube
