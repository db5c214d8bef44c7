// Job decisions (kube's job controller, NonIndexed) and the ReplicaSet scale-down order
// (ActivePodsWithRanks).
#include "sim/cluster/workload_job.h"

#include <gtest/gtest.h>

#include "sim/cluster/workload_replicaset.h"

namespace kubex::sim::cluster {
namespace {

using Outcome = JobDecision::Outcome;

JobInput job(std::optional<std::int64_t> completions, std::int64_t parallelism, std::int64_t active,
             std::int64_t succeeded = 0, std::int64_t failed = 0) {
  JobInput in;
  in.completions = completions;
  in.parallelism = parallelism;
  in.active = active;
  in.succeeded_pods = succeeded;
  in.failed_pods = failed;
  in.now = common::TimePoint{std::chrono::seconds(1'800'000'000)};
  in.start_time = in.now;
  return in;
}

TEST(JobDecision, Table) {
  struct Case {
    const char* what;
    JobInput in;
    Outcome outcome;
    std::int64_t create, remove, succeeded, failed;
  };
  auto with = [](JobInput in, auto f) {
    f(in);
    return in;
  };
  for (const auto& c : std::vector<Case>{
           {"starts parallelism pods", job(5, 2, 0), Outcome::kRunning, 2, 0, 0, 0},
           {"never more than the remaining completions", job(3, 5, 0, 1), Outcome::kRunning, 2, 0, 1, 0},
           {"replaces a failed pod", job(1, 1, 0, 0, 1), Outcome::kRunning, 1, 0, 0, 1},
           {"complete at completions", job(2, 2, 0, 2), Outcome::kSucceeded, 0, 0, 2, 0},
           {"complete deletes surplus active pods", job(2, 3, 1, 2), Outcome::kSucceeded, 0, 1, 2, 0},
           {"backoffLimit exceeded fails and stops pods",
            with(job(5, 2, 2, 0, 3), [](JobInput& i) { i.backoff_limit = 2; }), Outcome::kFailed, 0, 2, 0, 3},
           {"backoffLimit reached but not exceeded keeps going",
            with(job(5, 1, 0, 0, 2), [](JobInput& i) { i.backoff_limit = 2; }), Outcome::kRunning, 1, 0, 0,
            2},
           {"counts never go down when finished pods are deleted",
            with(job(3, 1, 0, 0, 0),
                 [](JobInput& i) {
                   i.prev_succeeded = 2;
                   i.prev_failed = 1;
                 }),
            Outcome::kRunning, 1, 0, 2, 1},
           {"work queue: done when one succeeded and none runs", job(std::nullopt, 3, 0, 1),
            Outcome::kSucceeded, 0, 0, 1, 0},
           {"work queue: no new pods once one succeeded", job(std::nullopt, 3, 2, 1), Outcome::kRunning, 0, 0,
            1, 0},
           {"work queue: parallelism pods", job(std::nullopt, 3, 1), Outcome::kRunning, 2, 0, 0, 0},
           {"parallelism lowered: delete surplus", job(10, 1, 3), Outcome::kRunning, 0, 2, 0, 0},
           {"suspended: no pods", with(job(3, 2, 2), [](JobInput& i) { i.suspended = true; }),
            Outcome::kRunning, 0, 2, 0, 0},
           {"activeDeadlineSeconds passed",
            with(job(3, 1, 1),
                 [](JobInput& i) {
                   i.active_deadline_seconds = 10;
                   i.start_time = i.now - std::chrono::seconds(11);
                 }),
            Outcome::kFailed, 0, 1, 0, 0},
       }) {
    JobDecision d = decide_job(c.in);
    EXPECT_EQ(d.outcome, c.outcome) << c.what;
    EXPECT_EQ(d.create, c.create) << c.what;
    EXPECT_EQ(d.remove, c.remove) << c.what;
    EXPECT_EQ(d.succeeded, c.succeeded) << c.what;
    EXPECT_EQ(d.failed, c.failed) << c.what;
  }
}

TEST(JobDecision, ReasonsAndDeadlineRequeue) {
  auto in = job(3, 1, 1, 0, 7);
  EXPECT_EQ(decide_job(in).reason, "BackoffLimitExceeded");
  EXPECT_EQ(decide_job(in).message, "Job has reached the specified backoff limit");
  EXPECT_EQ(decide_job(job(1, 1, 0, 1)).reason, "CompletionsReached");
  in = job(3, 1, 1);
  in.active_deadline_seconds = 60;
  in.start_time = in.now - std::chrono::seconds(20);
  auto d = decide_job(in);
  ASSERT_TRUE(d.requeue);
  EXPECT_EQ(*d.requeue, std::chrono::milliseconds(40000));
  in.start_time = in.now - std::chrono::seconds(60);
  EXPECT_EQ(decide_job(in).reason, "DeadlineExceeded");
}

std::shared_ptr<const SimPod> pod(const std::string& name, const std::string& node, const std::string& phase,
                                  bool ready, int age_s, int restarts = 0) {
  auto p = std::make_shared<SimPod>();
  p->name = name;
  p->node = node;
  p->phase = phase;
  p->ready = ready;
  p->created = common::TimePoint{std::chrono::seconds(1'000'000 - age_s)};
  SimContainer c;
  c.restart_count = restarts;
  p->containers.push_back(c);
  return p;
}

TEST(ReplicaSetScaleDown, PrefersUnscheduledThenNotReadyThenNewest) {
  auto order = scale_down_order({
      pod("ready-old", "n1", "Running", true, 500),
      pod("ready-new", "n2", "Running", true, 10),
      pod("unscheduled", "", "Pending", false, 1000),
      pod("pending-bound", "n3", "Pending", false, 100),
      pod("running-not-ready", "n4", "Running", false, 300),
      pod("crashy", "n5", "Running", true, 600, 5),
      pod("crowded-a", "n6", "Running", true, 700),
      pod("crowded-b", "n6", "Running", true, 800),
  });
  std::vector<std::string> names;
  for (const auto& p : order) names.push_back(p->name);
  EXPECT_EQ(names, (std::vector<std::string>{"unscheduled", "pending-bound", "running-not-ready", "crowded-a",
                                             "crowded-b", "crashy", "ready-new", "ready-old"}));
}

}  // namespace
}  // namespace kubex::sim::cluster
