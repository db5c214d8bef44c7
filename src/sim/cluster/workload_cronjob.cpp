#include "sim/cluster/workload_cronjob.h"

#include <algorithm>
#include <ctime>
#include <nlohmann/json.hpp>

#include "sim/cluster/workload_cron.h"

namespace kubex::sim::cluster {

using nlohmann::json;

std::string cronjob_job_name(const std::string& cronjob, common::TimePoint scheduled) {
  auto minutes = std::chrono::duration_cast<std::chrono::minutes>(scheduled.time_since_epoch()).count();
  return cronjob + "-" + std::to_string(minutes);
}

namespace {

constexpr const char* kComponent = "cronjob-controller";

// RFC 1123 with a numeric zone, as Go's time.RFC1123Z ("Mon, 02 Jan 2006 15:04:05 -0700"), UTC.
std::string rfc1123z(common::TimePoint t) {
  std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S +0000", &tm);
  return buf;
}

struct JobView {
  std::string name, uid, rv;
  bool finished = false, succeeded = false;
  common::TimePoint started{}, completed{};
};

class CronJobController final : public WorkloadController {
 public:
  explicit CronJobController(WorkloadEnv& env) : WorkloadController(env, "cronjob-controller", 1) {
    watch_primary("batch/cronjobs", uids_);
    watch_children("batch/jobs", uids_);
    ctx_.feed("batch/jobs").add_handler([this](EventType type, const StoreEvent& ev) {
      if (!ev.index) return;
      if (type == EventType::kDeleted) {
        jobs_.remove(event_key(ev));
      } else {
        jobs_.update(event_key(ev), ev.index->owner_uids);
      }
    });
  }

 protected:
  Requeue reconcile(const std::string& key) override;

 private:
  UidIndex uids_;
  ChildIndex jobs_;
};

CronJobController::Requeue CronJobController::reconcile(const std::string& key) {
  auto obj = env_.read("batch/cronjobs", key);
  if (!obj) return std::nullopt;
  const ObjectMetaView meta = parse_meta(*obj);
  if (meta.uid.empty() || meta.deleting) return std::nullopt;
  const json& spec = json_object_at(*obj, "spec");
  const json& cur = json_object_at(*obj, "status");
  const ObjectRef ref{"batch/v1", "CronJob", meta.ns, meta.name, meta.uid};
  const auto now = ctx_.now();

  std::vector<JobView> jobs;
  for (const auto& jkey : jobs_.children(meta.uid)) {
    auto j = env_.read("batch/jobs", jkey);
    if (!j || controller_uid(*j) != meta.uid) continue;
    JobView v;
    ObjectMetaView jm = parse_meta(*j);
    v.name = jm.name;
    v.uid = jm.uid;
    v.rv = json_str(json_object_at(*j, "metadata"), "resourceVersion");
    const json& js = json_object_at(*j, "status");
    for (const auto& c : json_array_at(js, "conditions")) {
      if (json_str(c, "status") != "True") continue;
      std::string type = json_str(c, "type");
      if (type == "Complete") v.finished = v.succeeded = true;
      if (type == "Failed") v.finished = true;
    }
    v.started = json_at(js, "startTime").is_string() ? json_time(js, "startTime") : jm.created;
    v.completed = json_time(js, "completionTime");
    jobs.push_back(std::move(v));
  }

  // Active Jobs are recomputed from the owned Jobs each time (level-triggered); finished ones are reported
  // once.
  std::map<std::string, json> old_active;
  for (const auto& a : json_array_at(cur, "active")) old_active[json_str(a, "uid")] = a;
  json active = json::array();
  json last_success = json_at(cur, "lastSuccessfulTime");
  common::TimePoint last_success_t = json_time(cur, "lastSuccessfulTime");
  for (const auto& j : jobs) {
    if (!j.finished) {
      auto it = old_active.find(j.uid);
      active.push_back(it != old_active.end() ? it->second
                                              : json{{"apiVersion", "batch/v1"},
                                                     {"kind", "Job"},
                                                     {"name", j.name},
                                                     {"namespace", meta.ns},
                                                     {"uid", j.uid},
                                                     {"resourceVersion", j.rv}});
      continue;
    }
    if (old_active.count(j.uid)) {
      env_.event(ref, "Normal", "SawCompletedJob",
                 "Saw completed job: " + j.name + ", condition: " + (j.succeeded ? "Complete" : "Failed"),
                 kComponent);
    }
    if (j.succeeded && j.completed > last_success_t) {
      last_success_t = j.completed;
      last_success = format_time(j.completed);
    }
  }
  json last_schedule = json_at(cur, "lastScheduleTime");
  Requeue requeue;

  auto schedule_run = [&]() {
    if (json_bool(spec, "suspend", false)) return;
    const std::string tz = json_str(spec, "timeZone");
    if (!tz.empty() && tz != "UTC" && tz != "Etc/UTC") {
      env_.event(ref, "Warning", "UnknownTimeZone",
                 "invalid timeZone: \"" + tz + "\": kubex-sim schedules in UTC only", kComponent);
      return;
    }
    const std::string schedule_text = json_str(spec, "schedule");
    auto schedule = parse_cron(schedule_text);
    if (!schedule) {
      env_.event(ref, "Warning", "UnparseableSchedule",
                 "unparseable schedule: \"" + schedule_text + "\" : " + schedule.error().message, kComponent);
      return;
    }
    if (auto next = cron_next(*schedule, now)) requeue = until(*next, now) + std::chrono::milliseconds(100);

    common::TimePoint earliest =
        last_schedule.is_string() ? json_time(cur, "lastScheduleTime") : meta.created;
    const json& deadline = json_at(spec, "startingDeadlineSeconds");
    if (deadline.is_number_integer()) {
      earliest = std::max(earliest, now - std::chrono::seconds(deadline.get<std::int64_t>()));
    }
    CronMissed missed = cron_missed(*schedule, earliest, now);
    if (!missed.most_recent) return;
    if (missed.count > 100) {
      env_.event(ref, "Warning", "TooManyMissedTimes",
                 "too many missed start times: " + std::to_string(missed.count) +
                     ". Set or decrease .spec.startingDeadlineSeconds or check clock skew",
                 kComponent);
    }
    const common::TimePoint scheduled = *missed.most_recent;
    if (deadline.is_number_integer() &&
        scheduled + std::chrono::seconds(deadline.get<std::int64_t>()) < now) {
      env_.event(ref, "Warning", "MissSchedule",
                 "Missed scheduled time to start a job: " + rfc1123z(scheduled), kComponent);
      return;
    }
    const std::string job_name = cronjob_job_name(meta.name, scheduled);
    if (std::any_of(jobs.begin(), jobs.end(), [&](const JobView& j) { return j.name == job_name; })) return;
    const std::string policy = json_str(spec, "concurrencyPolicy", "Allow");
    if (policy == "Forbid" && !active.empty()) {
      env_.event(ref, "Normal", "JobAlreadyActive",
                 "Not starting job because prior execution is running and concurrency policy is Forbid",
                 kComponent);
      return;
    }
    if (policy == "Replace" && !active.empty()) {
      json opts = {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}, {"propagationPolicy", "Background"}};
      json kept = json::array();
      for (const auto& a : active) {
        std::string name = json_str(a, "name");
        auto r = ctx_.client().remove(group_path("batch/v1", "jobs", meta.ns, name), opts.dump());
        if (!r.ok() && r.status != 404) {
          kept.push_back(a);
          continue;
        }
        env_.event(ref, "Normal", "SuccessfulDelete", "Deleted job " + name, kComponent);
      }
      active = kept;
      if (!active.empty()) {
        requeue = std::chrono::milliseconds(5000);
        return;
      }
    }
    const json& jt = json_object_at(spec, "jobTemplate");
    const json& jt_meta = json_object_at(jt, "metadata");
    json annotations = json_object_at(jt_meta, "annotations");
    annotations["batch.kubernetes.io/cronjob-scheduled-timestamp"] = format_time(scheduled);
    json md = {
        {"name", job_name},
        {"namespace", meta.ns},
        {"annotations", annotations},
        {"ownerReferences", json::array({controller_ref("batch/v1", "CronJob", meta.name, meta.uid)})}};
    if (!json_object_at(jt_meta, "labels").empty()) md["labels"] = jt_meta["labels"];
    json job = {
        {"apiVersion", "batch/v1"}, {"kind", "Job"}, {"metadata", md}, {"spec", json_object_at(jt, "spec")}};
    auto r = ctx_.client().create(group_path("batch/v1", "jobs", meta.ns), job);
    if (r.status == 409) {  // created by an earlier reconcile this controller has not seen yet
      last_schedule = format_time(scheduled);
      return;
    }
    if (!r.ok()) {
      env_.event(ref, "Warning", "FailedCreate",
                 "Error creating job: " + json_str(r.json(), "message", r.body), kComponent);
      requeue = std::chrono::milliseconds(5000);
      return;
    }
    json created = r.json();
    const json& cm = json_object_at(created, "metadata");
    jobs_.update(meta.ns + "/" + job_name, {meta.uid});
    active.push_back({{"apiVersion", "batch/v1"},
                      {"kind", "Job"},
                      {"name", job_name},
                      {"namespace", meta.ns},
                      {"uid", json_str(cm, "uid")},
                      {"resourceVersion", json_str(cm, "resourceVersion")}});
    last_schedule = format_time(scheduled);
    env_.event(ref, "Normal", "SuccessfulCreate", "Created job " + job_name, kComponent);
  };
  schedule_run();

  // History limits: the oldest finished Jobs beyond successfulJobsHistoryLimit / failedJobsHistoryLimit go.
  for (bool successful : {true, false}) {
    const json& limit_json =
        json_at(spec, successful ? "successfulJobsHistoryLimit" : "failedJobsHistoryLimit");
    if (!limit_json.is_number_integer()) continue;
    std::vector<const JobView*> finished;
    for (const auto& j : jobs) {
      if (j.finished && j.succeeded == successful) finished.push_back(&j);
    }
    std::int64_t excess = static_cast<std::int64_t>(finished.size()) -
                          std::max<std::int64_t>(limit_json.get<std::int64_t>(), 0);
    if (excess <= 0) continue;
    std::sort(finished.begin(), finished.end(), [](const JobView* a, const JobView* b) {
      return a->started != b->started ? a->started < b->started : a->name < b->name;
    });
    json opts = {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}, {"propagationPolicy", "Background"}};
    for (std::int64_t i = 0; i < excess; ++i) {
      const std::string& name = finished[static_cast<std::size_t>(i)]->name;
      auto r = ctx_.client().remove(group_path("batch/v1", "jobs", meta.ns, name), opts.dump());
      if (r.ok()) env_.event(ref, "Normal", "SuccessfulDelete", "Deleted job " + name, kComponent);
    }
  }

  json status = json::object();
  if (!active.empty()) status["active"] = active;
  if (last_schedule.is_string()) status["lastScheduleTime"] = last_schedule;
  if (last_success.is_string()) status["lastSuccessfulTime"] = last_success;
  if (auto w = env_.write_status(group_path("batch/v1", "cronjobs", meta.ns, meta.name), cur, status); !w) {
    if (!requeue || *requeue > std::chrono::milliseconds(1000)) requeue = std::chrono::milliseconds(1000);
  }
  return requeue;
}

}  // namespace

std::unique_ptr<Subsystem> make_cronjob_controller(WorkloadEnv& env) {
  return std::make_unique<CronJobController>(env);
}

}  // namespace kubex::sim::cluster
