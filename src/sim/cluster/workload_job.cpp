#include "sim/cluster/workload_job.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/time_format.h"

namespace kubex::sim::cluster {

using nlohmann::json;

JobDecision decide_job(const JobInput& in) {
  JobDecision d;
  d.succeeded = std::max(in.prev_succeeded, in.succeeded_pods);
  d.failed = std::max(in.prev_failed, in.failed_pods);
  if (d.failed > in.backoff_limit) {
    d.outcome = JobDecision::Outcome::kFailed;
    d.reason = "BackoffLimitExceeded";
    d.message = "Job has reached the specified backoff limit";
  } else if (in.active_deadline_seconds && in.start_time && !in.suspended) {
    auto deadline = *in.start_time + std::chrono::seconds(*in.active_deadline_seconds);
    if (in.now >= deadline) {
      d.outcome = JobDecision::Outcome::kFailed;
      d.reason = "DeadlineExceeded";
      d.message = "Job was active longer than specified deadline";
    } else {
      d.requeue = until(deadline, in.now);
    }
  }
  if (d.outcome == JobDecision::Outcome::kRunning) {
    bool done = in.completions ? d.succeeded >= *in.completions : d.succeeded > 0 && in.active == 0;
    if (done) {
      d.outcome = JobDecision::Outcome::kSucceeded;
      d.reason = "CompletionsReached";
      d.message = "Reached expected number of succeeded pods";
    }
  }
  if (d.outcome != JobDecision::Outcome::kRunning || in.suspended) {
    d.remove = in.active;
    return d;
  }
  std::int64_t parallelism = std::max<std::int64_t>(in.parallelism, 0);
  std::int64_t want = 0;
  if (in.completions) {
    want = std::min(parallelism, std::max<std::int64_t>(*in.completions - d.succeeded, 0));
  } else {
    want = d.succeeded > 0 ? std::min(in.active, parallelism) : parallelism;
  }
  d.create = std::max<std::int64_t>(want - in.active, 0);
  d.remove = std::max<std::int64_t>(in.active - want, 0);
  return d;
}

namespace {

constexpr const char* kComponent = "job-controller";

bool condition_true(const json& conditions, const char* type) {
  const json* c = find_condition(conditions, type);
  return c && json_str(*c, "status") == "True";
}

class JobController final : public WorkloadController {
 public:
  explicit JobController(WorkloadEnv& env) : WorkloadController(env, "job-controller", 2) {
    watch_primary("batch/jobs", uids_);
    watch_children("/pods", uids_);
  }

 protected:
  Requeue reconcile(const std::string& key) override;

 private:
  UidIndex uids_;
};

JobController::Requeue JobController::reconcile(const std::string& key) {
  auto obj = env_.read("batch/jobs", key);
  if (!obj) return std::nullopt;
  const ObjectMetaView meta = parse_meta(*obj);
  if (meta.uid.empty()) return std::nullopt;
  const json& spec = json_object_at(*obj, "spec");
  const json& cur = json_object_at(*obj, "status");
  const ObjectRef ref{"batch/v1", "Job", meta.ns, meta.name, meta.uid};
  const auto now = ctx_.now();
  const std::string now_s = format_time(now);
  json conditions = json_array_at(cur, "conditions");
  const bool finished = condition_true(conditions, "Complete") || condition_true(conditions, "Failed");

  auto pending = env_.expectations.pending(meta.uid);
  auto pods = env_.owned_pods(meta.uid);
  std::vector<std::shared_ptr<const SimPod>> active;
  std::int64_t ready = 0, terminating = 0, succeeded = 0, failed = 0;
  std::set<std::string> seen;
  for (const auto& p : pods) {
    seen.insert(p->name);
    if (p->phase == "Succeeded") {
      ++succeeded;
    } else if (p->phase == "Failed") {
      ++failed;
    } else if (p->deleting || pending.deletes.count(p->uid)) {
      ++terminating;
    } else {
      active.push_back(p);
      if (p->ready) ++ready;
    }
  }
  std::int64_t in_flight = 0;
  for (const auto& name : pending.creates) in_flight += seen.count(name) ? 0 : 1;

  JobInput in;
  if (json_at(spec, "completions").is_number_integer()) in.completions = json_int(spec, "completions", 1);
  in.parallelism = json_int(spec, "parallelism", 1);
  in.backoff_limit = json_int(spec, "backoffLimit", 6);
  if (json_at(spec, "activeDeadlineSeconds").is_number_integer()) {
    in.active_deadline_seconds = json_int(spec, "activeDeadlineSeconds", 0);
  }
  in.suspended = json_bool(spec, "suspend", false);
  in.active = static_cast<std::int64_t>(active.size()) + in_flight;
  in.succeeded_pods = succeeded;
  in.failed_pods = failed;
  in.prev_succeeded = json_int(cur, "succeeded", 0);
  in.prev_failed = json_int(cur, "failed", 0);
  json start_time = json_at(cur, "startTime");
  if (!start_time.is_string() && !in.suspended && !finished) start_time = now_s;
  if (start_time.is_string()) {
    auto t = common::parse_rfc3339(start_time.get<std::string>());
    in.start_time = t ? *t : now;
  }
  in.now = now;

  Requeue requeue;
  json completion_time = json_at(cur, "completionTime");
  std::int64_t counted_succeeded = in.prev_succeeded, counted_failed = in.prev_failed;
  std::int64_t active_count = in.active;
  if (!finished && !meta.deleting) {
    JobDecision d = decide_job(in);
    requeue = d.requeue;
    counted_succeeded = d.succeeded;
    counted_failed = d.failed;
    // Newest first, as kube deletes surplus active pods.
    std::sort(active.begin(), active.end(),
              [](const auto& a, const auto& b) { return a->created > b->created; });
    for (std::int64_t i = 0; i < d.remove && i < static_cast<std::int64_t>(active.size()); ++i) {
      const SimPod& p = *active[static_cast<std::size_t>(i)];
      if (auto r = env_.delete_pod(meta.uid, p); !r) {
        requeue = std::chrono::milliseconds(5000);
        continue;
      }
      ++terminating;
      env_.event(ref, "Normal", "SuccessfulDelete", "Deleted pod: " + p.name, kComponent);
    }
    std::int64_t removed = std::min<std::int64_t>(d.remove, static_cast<std::int64_t>(active.size()));
    active_count -= removed;
    if (d.create > 0) {
      json pod = pod_from_template(json_object_at(spec, "template"), meta.ns, "", meta.name + "-",
                                   controller_ref("batch/v1", "Job", meta.name, meta.uid));
      json& labels = pod["metadata"]["labels"];
      labels[kJobNameLabel] = meta.name;
      labels["job-name"] = meta.name;
      labels[kJobControllerUidLabel] = meta.uid;
      labels["controller-uid"] = meta.uid;
      for (std::int64_t i = 0; i < d.create; ++i) {
        auto created = env_.create_pod(meta.uid, pod);
        if (!created) {
          env_.event(ref, "Warning", "FailedCreate", "Error creating: " + created.error().message,
                     kComponent);
          requeue = std::chrono::milliseconds(5000);
          break;
        }
        ++active_count;
        env_.event(ref, "Normal", "SuccessfulCreate", "Created pod: " + *created, kComponent);
      }
    }
    const bool still_running = active_count > 0 || terminating > 0;
    if (d.outcome == JobDecision::Outcome::kSucceeded) {
      set_condition(conditions, "SuccessCriteriaMet", "True", d.reason, d.message, now_s);
      if (!still_running) {
        set_condition(conditions, "Complete", "True", d.reason, d.message, now_s);
        completion_time = now_s;
        env_.event(ref, "Normal", "Completed", "Job completed", kComponent);
      }
    } else if (d.outcome == JobDecision::Outcome::kFailed) {
      if (!find_condition(conditions, "FailureTarget")) {
        env_.event(ref, "Warning", d.reason, d.message, kComponent);
      }
      set_condition(conditions, "FailureTarget", "True", d.reason, d.message, now_s);
      if (!still_running) set_condition(conditions, "Failed", "True", d.reason, d.message, now_s);
    } else if (in.suspended) {
      if (!condition_true(conditions, "Suspended"))
        env_.event(ref, "Normal", "Suspended", "Job suspended", kComponent);
      set_condition(conditions, "Suspended", "True", "JobSuspended", "Job suspended", now_s);
    } else if (condition_true(conditions, "Suspended")) {
      set_condition(conditions, "Suspended", "False", "JobResumed", "Job resumed", now_s);
      env_.event(ref, "Normal", "Resumed", "Job resumed", kComponent);
    }
  }

  json status = {{"ready", ready}, {"terminating", terminating}, {"uncountedTerminatedPods", json::object()}};
  if (active_count > 0) status["active"] = active_count;
  if (counted_succeeded) status["succeeded"] = counted_succeeded;
  if (counted_failed) status["failed"] = counted_failed;
  if (start_time.is_string()) status["startTime"] = start_time;
  if (completion_time.is_string()) status["completionTime"] = completion_time;
  if (!conditions.empty()) status["conditions"] = conditions;
  if (auto w = env_.write_status(group_path("batch/v1", "jobs", meta.ns, meta.name), cur, status); !w) {
    if (!requeue) requeue = std::chrono::milliseconds(1000);
  }
  return requeue;
}

}  // namespace

std::unique_ptr<Subsystem> make_job_controller(WorkloadEnv& env) {
  return std::make_unique<JobController>(env);
}

}  // namespace kubex::sim::cluster
