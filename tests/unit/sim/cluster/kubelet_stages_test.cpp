// The kubelet emulation's stage table (DESIGN §5, §7: Pending -> Running -> Ready with configurable delays,
// restarts, CrashLoopBackOff; graceful deletion), driven with a fake clock.
#include "sim/cluster/kubelet_stages.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

using namespace kubex::sim::cluster;
using namespace kubex::sim::cluster::kubelet;
using namespace std::chrono_literals;
using kubex::common::FakeClock;
using nlohmann::json;

namespace {

SimPod bound_pod(const std::string& restart_policy = "Always") {
  SimPod p;
  p.ns = "ml";
  p.name = "p";
  p.uid = "u1";
  p.node = "n1";
  p.restart_policy = restart_policy;
  SimContainer init;
  init.name = "setup";
  init.init = true;
  init.restart_always = false;
  SimContainer app;
  app.name = "app";
  p.containers = {init, app};
  return p;
}

KubeletConfig config() {
  KubeletConfig c;
  c.start_delay = 1s;
  c.ready_delay = 2s;
  c.stop_delay = 500ms;
  c.crash_backoff_base = 10s;
  c.crash_backoff_max = 40s;
  c.job_run_time = 5s;
  return c;
}

// Runs every step due at the clock's time; returns the stage names in order.
std::vector<std::string> run_due(PodRun& run, const PodFacts& f, const KubeletConfig& cfg, FakeClock& clock,
                                 std::vector<KubeletEvent>* events = nullptr) {
  std::vector<std::string> out;
  for (int i = 0; i < 20; ++i) {
    Step s = next_step(run, f, cfg);
    if (s.stage == Stage::kNone || s.due > clock.now()) break;
    out.push_back(stage_name(s.stage));
    auto ev = apply_step(s, run, f, cfg, clock.now());
    if (events) events->insert(events->end(), ev.begin(), ev.end());
    if (s.stage == Stage::kStop) break;
  }
  return out;
}

const ContainerRun& app(const PodRun& run) { return run.containers.back(); }

}  // namespace

TEST(KubeletStages, PendingRunningReady) {
  FakeClock clock;
  KubeletConfig cfg = config();
  SimPod p = bound_pod();
  PodRun run = initial_run(p, clock.now(), cfg);
  PodFacts f = pod_facts(p);
  Step s = next_step(run, f, cfg);
  EXPECT_EQ(s.stage, Stage::kStart);
  EXPECT_EQ(s.due, clock.now() + 1s);
  EXPECT_TRUE(run_due(run, f, cfg, clock).empty());

  clock.advance(1s);
  std::vector<KubeletEvent> events;
  EXPECT_EQ(run_due(run, f, cfg, clock, &events), std::vector<std::string>{"Start"});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].reason, "Started");
  EXPECT_EQ(events[0].message, "Started container app");
  run.host_ip = "10.0.0.2";
  run.pod_ip = "10.244.0.2";
  json st = render_status(run, clock.now());
  EXPECT_EQ(st["phase"], "Running");
  EXPECT_EQ(st["podIP"], "10.244.0.2");
  EXPECT_EQ(st["hostIP"], "10.0.0.2");
  EXPECT_TRUE(st.contains("startTime"));
  std::map<std::string, std::string> conds;
  for (const auto& c : st["conditions"]) conds[c["type"]] = c["status"];
  EXPECT_EQ(conds["PodScheduled"], "True");
  EXPECT_EQ(conds["Initialized"], "True");
  EXPECT_EQ(conds["ContainersReady"], "False");
  EXPECT_EQ(conds["Ready"], "False");
  EXPECT_EQ(st["initContainerStatuses"][0]["state"]["terminated"]["reason"], "Completed");
  const json& cs = st["containerStatuses"][0];
  EXPECT_TRUE(cs["state"].contains("running"));
  EXPECT_EQ(cs["ready"], false);
  EXPECT_EQ(cs["restartCount"], 0);

  clock.advance(2s);
  EXPECT_EQ(run_due(run, f, cfg, clock), std::vector<std::string>{"Ready"});
  st = render_status(run, clock.now());
  EXPECT_EQ(st["containerStatuses"][0]["ready"], true);
  EXPECT_EQ(st["containerStatuses"][0]["started"], true);
  for (const auto& c : st["conditions"]) EXPECT_EQ(c["status"], "True") << c["type"];
  EXPECT_EQ(next_step(run, f, cfg).stage, Stage::kNone);  // nothing more for a healthy service
}

TEST(KubeletStages, JobsCompleteOrFail) {
  KubeletConfig cfg = config();
  struct Case {
    std::string policy;
    std::map<std::string, std::string> annotations;
    std::chrono::seconds runs;
    std::string phase, reason;
    int exit_code;
  };
  std::vector<Case> cases = {
      {"Never", {}, 5s, "Succeeded", "Completed", 0},
      {"Never", {{"sim.kubex.ai/run-duration", "90s"}}, 90s, "Succeeded", "Completed", 0},
      {"Never", {{"sim.kubex.ai/exit-code", "3"}}, 5s, "Failed", "Error", 3},
      {"OnFailure", {}, 5s, "Succeeded", "Completed", 0},
      {"Never", {{"sim.kubex.ai/run-duration", "bogus"}}, 5s, "Succeeded", "Completed", 0},
  };
  for (const auto& c : cases) {
    FakeClock clock;
    SimPod p = bound_pod(c.policy);
    p.annotations = c.annotations;
    PodRun run = initial_run(p, clock.now(), cfg);
    PodFacts f = pod_facts(p);
    clock.advance(1s);
    run_due(run, f, cfg, clock);
    clock.advance(c.runs - 1ms);
    run_due(run, f, cfg, clock);
    EXPECT_EQ(run.phase, PodPhase::kRunning) << c.policy;
    clock.advance(1ms);
    run_due(run, f, cfg, clock);
    json st = render_status(run, clock.now());
    EXPECT_EQ(st["phase"], c.phase) << c.policy;
    EXPECT_EQ(st["containerStatuses"][0]["state"]["terminated"]["reason"], c.reason);
    EXPECT_EQ(st["containerStatuses"][0]["state"]["terminated"]["exitCode"], c.exit_code);
    EXPECT_EQ(next_step(run, f, cfg).stage, Stage::kNone);
  }
}

TEST(KubeletStages, InjectedCrashLoopsWithGrowingBackoff) {
  FakeClock clock;
  KubeletConfig cfg = config();
  SimPod p = bound_pod();
  p.annotations = {{"sim.kubex.ai/crash-after", "2s"}};
  PodRun run = initial_run(p, clock.now(), cfg);
  PodFacts f = pod_facts(p);
  clock.advance(1s);
  run_due(run, f, cfg, clock);
  clock.advance(2s);  // the crash and Ready are both due: the crash comes first in the table
  auto stages = run_due(run, f, cfg, clock);
  EXPECT_EQ(stages.back(), "InjectedCrash");
  json st = render_status(run, clock.now());
  EXPECT_EQ(st["containerStatuses"][0]["state"]["terminated"]["reason"], "Error");
  EXPECT_EQ(st["containerStatuses"][0]["state"]["terminated"]["exitCode"], 1);
  EXPECT_EQ(st["containerStatuses"][0]["restartCount"], 0);

  std::vector<std::chrono::seconds> backoffs;
  for (int crash = 1; crash <= 4; ++crash) {
    Step s = next_step(run, f, cfg);
    ASSERT_EQ(s.stage, Stage::kBackOff);
    EXPECT_EQ(s.due - clock.now(), 1s);  // the terminated state shows for a PLEG period
    clock.advance(1s);
    std::vector<KubeletEvent> events;
    run_due(run, f, cfg, clock, &events);
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events[0].reason, "BackOff");
    st = render_status(run, clock.now());
    EXPECT_EQ(st["containerStatuses"][0]["state"]["waiting"]["reason"], "CrashLoopBackOff");
    EXPECT_EQ(st["containerStatuses"][0]["restartCount"], crash);
    EXPECT_EQ(st["containerStatuses"][0]["lastState"]["terminated"]["reason"], "Error");
    EXPECT_EQ(st["conditions"][2]["status"], "False");  // Ready
    s = next_step(run, f, cfg);
    ASSERT_EQ(s.stage, Stage::kRestart);
    backoffs.push_back(std::chrono::duration_cast<std::chrono::seconds>(s.due - clock.now()) + 1s);
    clock.set(s.due);
    EXPECT_EQ(run_due(run, f, cfg, clock), std::vector<std::string>{"Restart"});
    EXPECT_EQ(app(run).state, ContainerState::kRunning);
    clock.advance(2s);  // ready and crashes again
    run_due(run, f, cfg, clock);
  }
  EXPECT_EQ(backoffs, (std::vector<std::chrono::seconds>{10s, 20s, 40s, 40s}));  // doubling, capped
}

TEST(KubeletStages, GpuCrashIsOomKilledAndBackoffResetsAfterTenMinutes) {
  FakeClock clock;
  KubeletConfig cfg = config();
  SimPod p = bound_pod();
  PodRun run = initial_run(p, clock.now(), cfg);
  PodFacts f = pod_facts(p);
  clock.advance(1s);
  EXPECT_EQ(run_due(run, f, cfg, clock), std::vector<std::string>{"Start"});
  clock.advance(2s);
  EXPECT_EQ(run_due(run, f, cfg, clock), std::vector<std::string>{"Ready"});
  run.containers.back().backoff_steps = 3;  // earlier crashes
  clock.advance(11min);
  run.crash_container = "app";
  run.crash_reason = "CUDA out of memory: 9000 MiB working set exceeds the 8192 MiB allocation";
  std::vector<KubeletEvent> events;
  EXPECT_EQ(run_due(run, f, cfg, clock, &events), std::vector<std::string>{"GpuCrash"});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, "Warning");
  EXPECT_EQ(events[0].reason, "OOMKilling");
  EXPECT_EQ(events[0].message, run.containers.back().terminated.message);
  json st = render_status(run, clock.now());
  const json& term = st["containerStatuses"][0]["state"]["terminated"];
  EXPECT_EQ(term["reason"], "OOMKilled");
  EXPECT_EQ(term["exitCode"], 137);
  EXPECT_EQ(term["message"], "CUDA out of memory: 9000 MiB working set exceeds the 8192 MiB allocation");
  EXPECT_EQ(app(run).restart_at - clock.now(), 10s);  // ran > 10 minutes: back-off from the base again
  EXPECT_TRUE(run.crash_reason.empty());
}

TEST(KubeletStages, RestartPolicyNeverFailsOnCrash) {
  FakeClock clock;
  KubeletConfig cfg = config();
  SimPod p = bound_pod("Never");
  p.annotations = {{"sim.kubex.ai/crash-after", "1s"}, {"sim.kubex.ai/exit-code", "42"}};
  PodRun run = initial_run(p, clock.now(), cfg);
  PodFacts f = pod_facts(p);
  clock.advance(1s);
  run_due(run, f, cfg, clock);
  clock.advance(1s);
  run_due(run, f, cfg, clock);
  EXPECT_EQ(run.phase, PodPhase::kFailed);
  EXPECT_EQ(app(run).terminated.exit_code, 42);
  EXPECT_EQ(next_step(run, f, cfg).stage, Stage::kNone);
}

TEST(KubeletStages, GracefulDeletionStopsAfterTheShorterOfGraceAndStopDelay) {
  KubeletConfig cfg = config();
  for (auto [grace, expected] : {std::pair{30, 500ms}, std::pair{0, 0ms}}) {
    FakeClock clock;
    SimPod p = bound_pod();
    PodRun run = initial_run(p, clock.now(), cfg);
    clock.advance(1s);
    run_due(run, pod_facts(p), cfg, clock);
    p.deleting = true;
    p.grace_seconds = grace;
    p.deletion = clock.now() + std::chrono::seconds(grace);
    PodFacts f = pod_facts(p);
    std::vector<KubeletEvent> events;
    auto stages = run_due(run, f, cfg, clock, &events);
    ASSERT_FALSE(stages.empty());
    EXPECT_EQ(stages[0], "Killing");
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].message, "Stopping container app");
    Step s = next_step(run, f, cfg);
    if (expected > 0ms) {
      ASSERT_EQ(s.stage, Stage::kStop);
      EXPECT_EQ(s.due - clock.now(), expected);
    } else {
      EXPECT_EQ(stages.back(), "Stop");
    }
  }
}

TEST(KubeletStages, BackoffTableAndRestartedSimulator) {
  KubeletConfig cfg = config();
  EXPECT_EQ(crash_backoff(1, cfg), 10s);
  EXPECT_EQ(crash_backoff(2, cfg), 20s);
  EXPECT_EQ(crash_backoff(3, cfg), 40s);
  EXPECT_EQ(crash_backoff(30, cfg), 40s);

  FakeClock clock;
  SimPod p = bound_pod();
  p.phase = "Running";
  p.containers[0].terminated = true;
  p.containers[1].running = true;
  p.containers[1].ready = true;
  p.containers[1].restart_count = 4;
  PodRun run = initial_run(p, clock.now(), cfg);
  EXPECT_EQ(run.phase, PodPhase::kRunning);
  EXPECT_TRUE(app(run).ready);
  EXPECT_EQ(app(run).restart_count, 4);
  EXPECT_EQ(next_step(run, pod_facts(p), cfg).stage, Stage::kNone);
}

TEST(KubeletStages, RejectedPodsFailWithKubeletsReason) {
  FakeClock clock;
  SimPod p = bound_pod();
  PodRun run = initial_run(p, clock.now(), config());
  reject(run, "OutOfnvidia.com/gpu", "Pod was rejected: Node didn't have enough resource: nvidia.com/gpu, requested: 1, used: 2, capacity: 2");
  json st = render_status(run, clock.now());
  EXPECT_EQ(st["phase"], "Failed");
  EXPECT_EQ(st["reason"], "OutOfnvidia.com/gpu");
  EXPECT_EQ(next_step(run, pod_facts(p), config()).stage, Stage::kNone);
}
