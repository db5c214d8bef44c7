// The kubelet emulation's behaviour as a KWOK-like stage table (DESIGN §7): every stage is a condition on a
// pod's runtime state, a delay from an anchor time, and the next state. Everything here is pure (no I/O, no
// clock reads): the kubelet (kubelet.cpp) asks next_step() what is due, applies it with apply_step() and
// writes render_status() through pods/status.
//
// | stage        | condition                                         | due at (anchor + delay)                     | next state                                                    |
// |--------------|---------------------------------------------------|---------------------------------------------|---------------------------------------------------------------|
// | Killing      | deletionTimestamp set, not yet reported           | now                                         | Event Killing per running container                           |
// | Stop         | deletionTimestamp set                             | deletion start + min(grace, stop_delay)     | DELETE with gracePeriodSeconds 0 (the API server removes it)  |
// | Start        | bound, Pending                                    | bound + start_delay                         | GPU devices, Running: startTime, IPs, containers running, Ready=False |
// | GpuCrash     | running container, GpuHealth gave a reason        | now                                         | container terminated OOMKilled (137), Event OOMKilling        |
// | InjectedCrash| running container, sim.kubex.ai/crash-after: D    | container start + D                         | container terminated Error (exit-code annotation or 1)        |
// | Complete     | running container, restartPolicy Never/OnFailure  | container start + run-duration (job_run_time) | terminated Completed (0) / Error (exit-code); pod Succeeded/Failed |
// | Ready        | running container not ready                       | container start + ready_delay               | ready, started; pod Ready when every container is             |
// | BackOff      | container crashed, restartable                    | crash + min(1s, back-off / 2)               | waiting CrashLoopBackOff, restartCount+1, Event BackOff       |
// | Restart      | container in CrashLoopBackOff                     | crash + back-off                            | running again, Event Started                                  |
//
// A deleting pod only goes through Killing and Stop. Otherwise the earliest due stage runs first (ties: table
// order). The back-off after the n-th consecutive crash is crash_backoff_base * 2^(n-1), capped at
// crash_backoff_max; a container that ran 10 minutes before crashing starts again from the base (kubelet's
// reset). restartPolicy Never: a crashed container stays terminated and the pod fails once no container runs.
//
// Annotations (scenario and test hooks): sim.kubex.ai/run-duration (Go duration, Never/OnFailure pods),
// sim.kubex.ai/exit-code (integer: the exit code of completions and injected crashes), sim.kubex.ai/crash-after
// (Go duration: every run of each container crashes this long after it started; test-only crash injection).
#pragma once

#include <chrono>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "sim/cluster/config.h"
#include "sim/cluster/model.h"

namespace kubex::sim::cluster::kubelet {

inline constexpr const char* kRunDurationAnnotation = "sim.kubex.ai/run-duration";
inline constexpr const char* kExitCodeAnnotation = "sim.kubex.ai/exit-code";
inline constexpr const char* kCrashAfterAnnotation = "sim.kubex.ai/crash-after";

enum class ContainerState { kWaiting, kRunning, kTerminated };

struct Termination {
  std::string reason, message;
  int exit_code = 0;
  common::TimePoint started_at{}, finished_at{};
};

struct ContainerRun {
  std::string name, image;
  bool init = false;     // non-restartable init container: completes before the others start
  bool sidecar = false;  // restartable init container: runs like a regular one
  ContainerState state = ContainerState::kWaiting;
  std::string waiting_reason = "ContainerCreating", waiting_message;
  common::TimePoint started_at{};
  Termination terminated;              // valid in kTerminated
  std::optional<Termination> last;     // lastState.terminated
  bool ready = false, started = false;
  int restart_count = 0;
  int backoff_steps = 0;               // consecutive crashes (back-off exponent)
  bool crash_loop = false;             // crashed and waiting for its restart
  common::TimePoint restart_at{};      // end of the current back-off
};

enum class PodPhase { kPending, kRunning, kSucceeded, kFailed };

struct PodRun {
  std::string ns, name, uid, node;
  PodPhase phase = PodPhase::kPending;
  common::TimePoint bound_at{}, started_at{};
  common::TimePoint deletion_seen{};  // when the kubelet first saw the deletionTimestamp
  bool details = false;       // images and the PodScheduled time were read from the pod object
  bool devices_done = false;  // GPU indices recorded (or none needed)
  std::string host_ip, pod_ip;
  std::string reason, message;  // pod-level (kubelet admission rejections)
  bool killing_reported = false;
  std::string crash_container, crash_reason;  // a GPU crash reported by GpuHealth, not yet applied
  std::vector<ContainerRun> containers;       // init containers first
  std::string scheduled_since;                // PodScheduled lastTransitionTime (RFC 3339)
  std::map<std::string, std::pair<bool, common::TimePoint>> conditions;  // type -> (status, since)
};

// What the stages read of the pod object.
struct PodFacts {
  std::string restart_policy = "Always";
  bool deleting = false;
  common::TimePoint deletion_start{};  // deletionTimestamp - grace period
  std::int64_t grace_seconds = 30;
  std::optional<std::chrono::milliseconds> run_duration;
  int exit_code = 0;
  std::optional<std::chrono::milliseconds> crash_after;
};
// Reads the facts of a pod; malformed annotations are ignored. Timestamps in the API have whole seconds, so
// a deletion starts no earlier than the kubelet saw it (`run.deletion_seen`, when set).
PodFacts pod_facts(const SimPod& p);
PodFacts pod_facts(const SimPod& p, const PodRun& run);
// A runtime for a pod the kubelet has not seen before (containers from the pod, state from its status).
PodRun initial_run(const SimPod& p, common::TimePoint now, const KubeletConfig& cfg);

enum class Stage { kNone, kKilling, kStop, kStart, kGpuCrash, kInjectedCrash, kComplete, kReady, kBackOff, kRestart };

struct Step {
  Stage stage = Stage::kNone;
  common::TimePoint due{};
  int container = -1;
};

struct StageRule {
  Stage stage;
  const char* name;
  // The step when the rule applies (its container and due time), nullopt otherwise.
  std::optional<Step> (*match)(const PodRun&, const PodFacts&, const KubeletConfig&);
};
const std::vector<StageRule>& stage_table();
const char* stage_name(Stage s);

// The stage to run next and when (Stage::kNone: nothing until the pod changes).
Step next_step(const PodRun& run, const PodFacts& facts, const KubeletConfig& cfg);

struct KubeletEvent {
  std::string type, reason, message;
};
// Applies a due step to the runtime (kStop and the device/IP part of kStart are the caller's). Returns the
// Events kubelet would record.
std::vector<KubeletEvent> apply_step(const Step& step, PodRun& run, const PodFacts& facts, const KubeletConfig& cfg,
                                     common::TimePoint now);

// The restart back-off after the n-th consecutive crash (n >= 1).
std::chrono::milliseconds crash_backoff(int n, const KubeletConfig& cfg);

// Kubelet admission rejection: the pod fails without starting.
void reject(PodRun& run, const std::string& reason, const std::string& message);

// The pod status the kubelet writes (updates the conditions' transition times in `run`).
nlohmann::json render_status(PodRun& run, common::TimePoint now);

}  // namespace kubex::sim::cluster::kubelet
