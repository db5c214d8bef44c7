// API fault injection for tests (SPEC SIM-8): `kubex-sim serve --faults FILE` answers a seeded fraction of
// matching requests with 429 TooManyRequests (Retry-After), 500/503/504 Status errors, added latency, WATCH
// streams cut after some events or seconds (cleanly or abruptly), and 410 Gone for WATCHes, the way
// kube-apiserver sends each of them. Off unless a file is given; the HTTPS front end (http_server.cpp) asks
// `decide()` once per authenticated resource request, before the request reaches ApiServer::handle, so the
// simulated cluster's own in-process controllers are never faulted. The file format is in docs/kubex-sim.md
// ("Fault injection").
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/result.h"

namespace kubex::sim {

// One entry of `resources`: `pods`, `pods/eviction`, `pods/*`, `deployments.apps`, `queues.scheduling.run.ai`,
// `*`, `*/status`. `group` unset = any group; `subresource` "" = the resource itself, "*" = any subresource.
struct FaultResource {
  std::string resource;  // plural or "*"
  std::optional<std::string> group;
  std::string subresource;
};

struct FaultRule {
  std::string name;  // optional; reported by /simz/faults
  std::vector<std::string> verbs;  // empty = all
  std::vector<FaultResource> resources;  // empty = all
  std::vector<std::string> namespaces;  // empty = all (cluster-scoped and all-namespace requests too)
  std::vector<std::string> user_agents;  // prefixes; empty = all
  std::vector<std::string> except_user_agents;  // prefixes
  std::chrono::milliseconds after{0};
  std::optional<std::chrono::milliseconds> until;
  std::optional<std::uint64_t> max_faults;  // the rule stops after injecting this many faults (latency included)
  bool watch_only = false;  // only watchCut/watchGone: matches WATCH requests only

  // The error answers share one draw: [0, too_many) → 429, then server errors, then 410 (watch only).
  double too_many_rate = 0;
  int retry_after_seconds = 1;
  double server_error_rate = 0;
  std::vector<int> server_error_codes;  // 500, 503, 504
  int server_error_retry_after_seconds = 0;
  double watch_gone_rate = 0;

  double latency_rate = 0;
  std::chrono::milliseconds latency_min{0}, latency_max{0};

  double cut_rate = 0;
  std::uint64_t cut_events_min = 0, cut_events_max = 0;  // 0 = no event limit
  std::chrono::milliseconds cut_time_min{0}, cut_time_max{0};  // 0 = no time limit
  double cut_abrupt_rate = 0;
};

struct FaultConfig {
  std::optional<std::uint64_t> seed;  // unset: a random seed, reported by /simz/faults and the start log line
  std::vector<FaultRule> rules;

  // The document (a YAML file's or the `faults` key of the --config file's). `path` prefixes error paths.
  static common::Result<FaultConfig> parse(const nlohmann::json& doc, const std::string& path = "");
  // Reads and parses FILE; errors are "FILE: field.path: problem".
  static common::Result<FaultConfig> load(const std::string& file);
};

// What a request matches on.
struct FaultRequest {
  std::string verb;  // get list watch create update patch delete deletecollection
  std::string group, resource, subresource, ns, name;
  std::string user_agent;
  bool has_resource_version = false;  // resourceVersion given and not "0" (a WATCH only gets 410 then)
};

// What to do with one request. Latency is added to whatever the answer is.
struct FaultDecision {
  std::chrono::milliseconds latency{0};
  int status = 0;  // 0: serve it; 429, 500, 503, 504: that error; 410: a WATCH answered with one ERROR event
  int retry_after_seconds = 0;
  int rule = -1;  // the rule of `status` (or of the cut)
  // WATCH cut: the stream ends after this many events or this long, whichever comes first.
  bool cut = false;
  std::uint64_t cut_after_events = 0;  // 0 = no event limit
  std::chrono::milliseconds cut_after{0};  // 0 = no time limit
  bool cut_abrupt = false;
  int cut_rule = -1;

  bool none() const { return latency.count() == 0 && status == 0 && !cut; }
};

class FaultInjector {
 public:
  explicit FaultInjector(FaultConfig config);
  FaultInjector(const FaultInjector&) = delete;
  FaultInjector& operator=(const FaultInjector&) = delete;

  std::uint64_t seed() const { return seed_; }
  const FaultConfig& config() const { return config_; }

  // The faults for one request, `since_start` after the injector started. Deterministic: the n-th request of a
  // given verb, resource, namespace, name and user agent gets the same answer from a rule in every run with the
  // same seed, whatever other requests interleave. Counts the faults it returns (but not cuts: see cut_done).
  FaultDecision decide(const FaultRequest& req, std::chrono::milliseconds since_start);
  // Counts a WATCH cut that happened (its event or time limit was reached; not a client that left first).
  void cut_done(int rule, bool abrupt);

  // The metav1.Status body kube-apiserver sends for `status` (429, 500, 503, 504, 410).
  static nlohmann::json status_body(int status, int retry_after_seconds, const std::string& detail);

  // {"enabled":true,"seed":N,"rules":[{"index":0,"name":..,"matched":..,"tooManyRequests":..,"serverError":{"500":..},
  //  "latency":{"count":..,"totalMs":..},"watchGone":..,"watchCut":{"clean":..,"abrupt":..},"faults":..}],
  //  "total":{...same counters...}}
  nlohmann::json counts() const;
  // {"enabled":false} for a server without --faults.
  static nlohmann::json disabled_counts();

 private:
  struct Counters {
    std::uint64_t matched = 0, too_many = 0, gone = 0, latency = 0, latency_ms = 0, cut_clean = 0,
                  cut_abrupt = 0, faults = 0;
    std::map<int, std::uint64_t> server_errors;
  };
  FaultConfig config_;
  std::uint64_t seed_;
  mutable std::mutex mu_;
  std::vector<Counters> counters_;
  // (rule, request kind) -> requests seen, for the per-kind deterministic streams.
  std::unordered_map<std::uint64_t, std::uint64_t> sequence_;
};

}  // namespace kubex::sim
