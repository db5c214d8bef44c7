#include "kube/runtime/leader_election.h"

#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>

#include "common/time_format.h"
#include "kube/client/client.h"
#include "kube/runtime/metrics.h"

namespace kubex::kube {

using common::Duration;
using common::TimePoint;
using nlohmann::json;

namespace {

TimePoint time_field(const json& spec, const char* key) {
  if (!spec.contains(key) || !spec[key].is_string()) return {};
  auto t = common::parse_rfc3339(spec[key].get<std::string>());
  return t ? *t : TimePoint{};
}

}  // namespace

LeaseRecord lease_record_from(const json& lease) {
  LeaseRecord r;
  if (!lease.is_object() || !lease.contains("spec") || !lease["spec"].is_object()) return r;
  const json& spec = lease["spec"];
  if (spec.contains("holderIdentity") && spec["holderIdentity"].is_string())
    r.holder = spec["holderIdentity"];
  if (spec.contains("leaseDurationSeconds") && spec["leaseDurationSeconds"].is_number_integer()) {
    r.lease_duration_seconds = spec["leaseDurationSeconds"].get<int>();
  }
  if (spec.contains("leaseTransitions") && spec["leaseTransitions"].is_number_integer()) {
    r.transitions = spec["leaseTransitions"].get<int>();
  }
  r.acquire_time = time_field(spec, "acquireTime");
  r.renew_time = time_field(spec, "renewTime");
  return r;
}

void write_lease_record(json& lease, const LeaseRecord& r) {
  json& spec = lease["spec"];
  if (!spec.is_object()) spec = json::object();
  spec["holderIdentity"] = r.holder;
  spec["leaseDurationSeconds"] = r.lease_duration_seconds;
  spec["acquireTime"] = common::format_rfc3339_micro(r.acquire_time);
  spec["renewTime"] = common::format_rfc3339_micro(r.renew_time);
  spec["leaseTransitions"] = r.transitions;
}

const char* to_string(LeaseAction a) {
  switch (a) {
    case LeaseAction::kCreate:
      return "create";
    case LeaseAction::kAcquire:
      return "acquire";
    case LeaseAction::kRenew:
      return "renew";
    case LeaseAction::kWait:
      return "wait";
  }
  return "?";
}

LeaseDecision decide_lease(const std::optional<LeaseRecord>& current, TimePoint observed_at, TimePoint now,
                           const std::string& identity, Duration lease_duration) {
  int seconds = static_cast<int>(std::chrono::duration_cast<std::chrono::seconds>(lease_duration).count());
  if (!current) return {LeaseAction::kCreate, {identity, seconds, now, now, 0}};
  const LeaseRecord& cur = *current;
  if (cur.holder == identity) {
    LeaseRecord r = cur;
    r.renew_time = now;
    r.lease_duration_seconds = seconds;
    if (r.acquire_time == TimePoint{}) r.acquire_time = now;
    return {LeaseAction::kRenew, r};
  }
  if (!cur.holder.empty()) {
    Duration held = cur.lease_duration_seconds > 0
                        ? Duration(std::chrono::seconds(cur.lease_duration_seconds))
                        : lease_duration;
    if (observed_at + std::chrono::duration_cast<TimePoint::duration>(held) > now) {
      return {LeaseAction::kWait, cur};
    }
  }
  return {LeaseAction::kAcquire, {identity, seconds, now, now, cur.transitions + 1}};
}

std::string default_identity() {
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) != 0 || !host[0]) std::snprintf(host, sizeof(host), "kubex");
  std::random_device rd;
  char suffix[16];
  std::snprintf(suffix, sizeof(suffix), "%08x", static_cast<unsigned>(rd()));
  return std::string(host) + "_" + suffix;
}

LeaderElector::LeaderElector(std::shared_ptr<Client> client, LeaderElectionConfig config,
                             LeaderCallbacks callbacks, Metrics* metrics)
    : client_(std::move(client)),
      config_(std::move(config)),
      callbacks_(std::move(callbacks)),
      metrics_(metrics),
      clock_(config_.clock ? *config_.clock : common::RealClock::instance()) {
  if (config_.identity.empty()) config_.identity = default_identity();
  collection_ = resource_path("coordination.k8s.io", "v1", "leases", config_.lease_namespace);
  path_ = collection_ + "/" + config_.lease_name;
  if (metrics_) metrics_->set_leader_status(config_.lease_name, false);
}

LeaderElector::~LeaderElector() {
  stop(false);
}

std::string LeaderElector::holder() const {
  std::lock_guard lk(mu_);
  return holder_;
}

std::string LeaderElector::lease_uid() const {
  std::lock_guard lk(mu_);
  if (!last_written_ || !last_written_->contains("metadata")) return "";
  return (*last_written_)["metadata"].value("uid", "");
}

void LeaderElector::note_error(const std::string& what, const std::string& error) {
  std::string msg = what + ": " + error;
  {
    std::lock_guard lk(mu_);
    if (msg == last_error_) return;  // one line per distinct failure, not one per retry
    last_error_ = msg;
  }
  log_.warn(what, {{"lease", config_.lease_namespace + "/" + config_.lease_name}, {"error", error}});
}

bool LeaderElector::try_acquire_or_renew() {
  TimePoint now = clock_.now();
  // Fast path while this replica holds the lease: PUT our last written object with a new renewTime (no GET).
  std::shared_ptr<json> cached;
  {
    std::lock_guard lk(mu_);
    cached = holder_ == config_.identity ? last_written_ : nullptr;
  }
  if (cached) {
    json obj = *cached;
    LeaseRecord r = lease_record_from(obj);
    if (r.holder == config_.identity) {
      r.renew_time = now;
      write_lease_record(obj, r);
      auto res = client_->update(path_, obj);
      if (res) {
        std::lock_guard lk(mu_);
        last_written_ = std::make_shared<json>(std::move(*res));
        observed_ = r;
        observed_time_ = now;
        renewed_at_ = now;
        last_error_.clear();
        return true;
      }
      if (!res.error().conflict()) {
        // A 5xx, a 429 or a timeout: the next round PUTs the same object again, one request as here. Had the server
        // applied this one after all, that PUT conflicts and the round reads the lease (below). Reading it now
        // instead would make each later round two requests, each of which may fail the same way.
        note_error("cannot renew lease", res.error().str());
        return false;
      }
      {
        std::lock_guard lk(mu_);
        last_written_.reset();
      }
      // Someone else wrote the lease: read it and decide.
    }
  }

  auto cur = client_->get(path_);
  std::optional<LeaseRecord> record;
  if (cur) {
    record = lease_record_from(*cur);
  } else if (!cur.error().not_found()) {
    note_error("cannot read lease", cur.error().str());
    return false;
  }
  observed_once_ = true;
  std::string previous_holder;
  TimePoint observed_at;
  {
    std::lock_guard lk(mu_);
    if (observed_ != record) {
      observed_ = record;
      observed_time_ = now;
    }
    observed_at = observed_time_;
    previous_holder = holder_;
    holder_ = record ? record->holder : "";
  }
  LeaseDecision d = decide_lease(record, observed_at, now, config_.identity, config_.lease_duration);
  if (d.action == LeaseAction::kWait) {
    if (d.record.holder != previous_holder) {
      log_.info("new leader observed", {{"lease", config_.lease_namespace + "/" + config_.lease_name},
                                        {"holder", d.record.holder},
                                        {"identity", config_.identity}});
      if (callbacks_.on_new_leader) callbacks_.on_new_leader(d.record.holder);
    }
    return false;
  }
  KResult<json> res;
  if (d.action == LeaseAction::kCreate) {
    json obj = {{"apiVersion", "coordination.k8s.io/v1"},
                {"kind", "Lease"},
                {"metadata", {{"name", config_.lease_name}, {"namespace", config_.lease_namespace}}}};
    write_lease_record(obj, d.record);
    res = client_->create(collection_, obj);
  } else {
    json obj = std::move(*cur);
    write_lease_record(obj, d.record);
    res = client_->update(path_, obj);
  }
  if (!res) {
    if (!res.error().conflict() && !res.error().already_exists()) {
      note_error(std::string("cannot ") + to_string(d.action) + " lease", res.error().str());
    }
    return false;  // lost a race with another replica, or a transient failure: try again next round
  }
  std::lock_guard lk(mu_);
  last_written_ = std::make_shared<json>(std::move(*res));
  observed_ = d.record;
  observed_time_ = now;
  holder_ = config_.identity;
  renewed_at_ = now;
  last_error_.clear();
  return true;
}

bool LeaderElector::holds_lease(TimePoint now) const {
  if (lost_) return false;
  std::lock_guard lk(mu_);
  return holder_ == config_.identity && renewed_at_ && now < *renewed_at_ + config_.renew_deadline;
}

bool LeaderElector::release() {
  if (!leading_) {  // nothing to hand over; and nothing more is written by this replica (holds_lease())
    std::lock_guard lk(mu_);
    renewed_at_.reset();
    return true;
  }
  TimePoint now = clock_.now();
  std::shared_ptr<json> cached;
  {
    std::lock_guard lk(mu_);
    cached = last_written_;
  }
  for (int attempt = 0; attempt < 2; ++attempt) {
    json obj;
    if (attempt == 0 && cached) {
      obj = *cached;
    } else {
      auto cur = client_->get(path_);
      if (!cur) {
        log_.warn("cannot release lease", {{"error", cur.error().str()}});
        return false;
      }
      obj = std::move(*cur);
    }
    LeaseRecord r = lease_record_from(obj);
    if (r.holder != config_.identity) {
      {
        std::lock_guard lk(mu_);
        renewed_at_.reset();
      }
      set_leading(false);
      return true;
    }
    // As client-go: no holder, a 1 s duration, so any replica may take over at once.
    write_lease_record(obj, {"", 1, now, now, r.transitions});
    auto res = client_->update(path_, obj);
    if (res) {
      {
        std::lock_guard lk(mu_);
        holder_.clear();
        renewed_at_.reset();
      }
      set_leading(false);
      log_.info("released lease", {{"lease", config_.lease_namespace + "/" + config_.lease_name},
                                   {"identity", config_.identity}});
      return true;
    }
    if (!res.error().conflict()) {
      log_.warn("cannot release lease", {{"error", res.error().str()}});
      return false;
    }
  }
  return false;
}

void LeaderElector::set_leading(bool leading) {
  leading_ = leading;
  if (metrics_) metrics_->set_leader_status(config_.lease_name, leading);
}

bool LeaderElector::wait(Duration d) {
  std::unique_lock lk(wait_mu_);
  return !wait_cv_.wait_for(lk, d, [&] { return stopping_.load(); });
}

void LeaderElector::start() {
  stopping_ = false;
  thread_ = std::thread([this] { run(); });
}

void LeaderElector::run() {
  const std::string lease = config_.lease_namespace + "/" + config_.lease_name;
  log_.info("attempting to acquire leader lease", {{"lease", lease}, {"identity", config_.identity}});
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<double> jitter(0.0, 0.2);
  // Acquire.
  while (!stopping_) {
    if (try_acquire_or_renew()) break;
    if (!wait(std::chrono::duration_cast<Duration>(config_.retry_period * (1.0 + jitter(rng))))) return;
  }
  if (stopping_) return;
  set_leading(true);
  log_.info("successfully acquired lease", {{"lease", lease}, {"identity", config_.identity}});
  if (callbacks_.on_started_leading) callbacks_.on_started_leading();
  // Renew.
  TimePoint last_renew = clock_.now();
  while (wait(config_.retry_period)) {
    if (try_acquire_or_renew()) {
      last_renew = clock_.now();
      continue;
    }
    if (stopping_) return;
    std::string h = holder();
    bool taken = !h.empty() && h != config_.identity;
    bool expired = clock_.now() - last_renew >= config_.renew_deadline;
    if (taken || expired) {
      lost_ = true;
      set_leading(false);
      log_.error("leader election lost",
                 {{"lease", lease},
                  {"identity", config_.identity},
                  {"reason", taken ? "lease taken by " + h : "renew deadline exceeded"}});
      if (callbacks_.on_stopped_leading) callbacks_.on_stopped_leading();
      return;
    }
  }
}

void LeaderElector::stop(bool release_lease) {
  {
    std::lock_guard lk(wait_mu_);
    stopping_ = true;
  }
  wait_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (release_lease && leading_) release();
}

}  // namespace kubex::kube
