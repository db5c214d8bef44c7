// Job controller of the simulated cluster (kube-controller-manager's job controller, NonIndexed completion
// mode): runs up to `parallelism` pods while fewer than `completions` succeeded, counts succeeded/failed
// pods, fails the Job past `backoffLimit` or `activeDeadlineSeconds`, honours `suspend`, and reports the
// SuccessCriteriaMet/Complete or FailureTarget/Failed conditions once its pods have stopped.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/clock.h"
#include "sim/cluster/workload_common.h"

namespace kubex::sim::cluster {

inline constexpr const char* kJobNameLabel = "batch.kubernetes.io/job-name";
inline constexpr const char* kJobControllerUidLabel = "batch.kubernetes.io/controller-uid";

struct JobInput {
  std::optional<std::int64_t> completions;  // unset: a work queue, done when any pod succeeded and none runs
  std::int64_t parallelism = 1;
  std::int64_t backoff_limit = 6;
  std::optional<std::int64_t> active_deadline_seconds;
  bool suspended = false;
  std::int64_t active = 0;                           // pods neither finished nor being deleted
  std::int64_t succeeded_pods = 0, failed_pods = 0;  // finished pods that exist now
  std::int64_t prev_succeeded = 0, prev_failed = 0;  // status counts (pods may have been deleted since)
  std::optional<common::TimePoint> start_time;
  common::TimePoint now{};
};

struct JobDecision {
  enum class Outcome { kRunning, kSucceeded, kFailed };
  Outcome outcome = Outcome::kRunning;
  std::string reason, message;  // of the outcome (CompletionsReached, BackoffLimitExceeded, DeadlineExceeded)
  std::int64_t succeeded = 0, failed = 0;
  std::int64_t create = 0;                           // pods to create
  std::int64_t remove = 0;                           // active pods to delete (newest first)
  std::optional<std::chrono::milliseconds> requeue;  // for activeDeadlineSeconds
};

// The decision of one reconcile of an unfinished Job.
JobDecision decide_job(const JobInput& in);

std::unique_ptr<Subsystem> make_job_controller(WorkloadEnv& env);

}  // namespace kubex::sim::cluster
