#include "sim/cluster/kubelet_stages.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/duration.h"
#include "common/hash.h"
#include "common/time_format.h"

namespace kubex::sim::cluster::kubelet {

using nlohmann::json;
using std::chrono::milliseconds;

namespace {

constexpr milliseconds kPlegDelay{1000};  // how long a crashed container shows as terminated at most
constexpr auto kBackoffReset = std::chrono::minutes(10);

std::optional<milliseconds> duration_annotation(const SimPod& p, const char* key) {
  auto it = p.annotations.find(key);
  if (it == p.annotations.end()) return std::nullopt;
  auto d = common::parse_go_duration(it->second);
  if (!d || d->count() < 0) return std::nullopt;
  return std::chrono::duration_cast<milliseconds>(*d);
}

bool runs(const ContainerRun& c) { return !c.init && c.state == ContainerState::kRunning; }

// The earliest container-level match of a predicate.
template <class Due>
std::optional<Step> first_container(const PodRun& run, Stage stage, Due due) {
  std::optional<Step> best;
  for (std::size_t i = 0; i < run.containers.size(); ++i) {
    auto t = due(run.containers[i]);
    if (t && (!best || *t < best->due)) best = Step{stage, *t, static_cast<int>(i)};
  }
  return best;
}

// --- the rules ---

std::optional<Step> match_killing(const PodRun& run, const PodFacts& f, const KubeletConfig&) {
  if (!f.deleting || run.killing_reported) return std::nullopt;
  return Step{Stage::kKilling, f.deletion_start, -1};
}

std::optional<Step> match_stop(const PodRun&, const PodFacts& f, const KubeletConfig& cfg) {
  if (!f.deleting) return std::nullopt;
  milliseconds grace = std::chrono::seconds(std::max<std::int64_t>(0, f.grace_seconds));
  return Step{Stage::kStop, f.deletion_start + std::min(grace, cfg.stop_delay), -1};
}

std::optional<Step> match_start(const PodRun& run, const PodFacts&, const KubeletConfig& cfg) {
  if (run.phase != PodPhase::kPending) return std::nullopt;
  return Step{Stage::kStart, run.bound_at + cfg.start_delay, -1};
}

std::optional<Step> match_gpu_crash(const PodRun& run, const PodFacts&, const KubeletConfig&) {
  if (run.phase != PodPhase::kRunning || run.crash_reason.empty()) return std::nullopt;
  return first_container(run, Stage::kGpuCrash, [&](const ContainerRun& c) -> std::optional<common::TimePoint> {
    if (!runs(c) || c.name != run.crash_container) return std::nullopt;
    return c.started_at;
  });
}

std::optional<Step> match_injected_crash(const PodRun& run, const PodFacts& f, const KubeletConfig&) {
  if (run.phase != PodPhase::kRunning || !f.crash_after) return std::nullopt;
  return first_container(run, Stage::kInjectedCrash, [&](const ContainerRun& c) -> std::optional<common::TimePoint> {
    if (!runs(c)) return std::nullopt;
    return c.started_at + *f.crash_after;
  });
}

std::optional<Step> match_complete(const PodRun& run, const PodFacts& f, const KubeletConfig& cfg) {
  if (run.phase != PodPhase::kRunning || f.restart_policy == "Always") return std::nullopt;
  milliseconds d = f.run_duration ? *f.run_duration : cfg.job_run_time;
  return first_container(run, Stage::kComplete, [&](const ContainerRun& c) -> std::optional<common::TimePoint> {
    if (!runs(c) || c.sidecar) return std::nullopt;
    return c.started_at + d;
  });
}

std::optional<Step> match_ready(const PodRun& run, const PodFacts&, const KubeletConfig& cfg) {
  if (run.phase != PodPhase::kRunning) return std::nullopt;
  return first_container(run, Stage::kReady, [&](const ContainerRun& c) -> std::optional<common::TimePoint> {
    if (!runs(c) || c.ready) return std::nullopt;
    return c.started_at + cfg.ready_delay;
  });
}

std::optional<Step> match_backoff(const PodRun& run, const PodFacts&, const KubeletConfig&) {
  if (run.phase != PodPhase::kRunning) return std::nullopt;
  return first_container(run, Stage::kBackOff, [&](const ContainerRun& c) -> std::optional<common::TimePoint> {
    if (!c.crash_loop || c.state != ContainerState::kTerminated) return std::nullopt;
    auto wait = std::chrono::duration_cast<milliseconds>(c.restart_at - c.terminated.finished_at) / 2;
    return c.terminated.finished_at + std::min(kPlegDelay, wait);
  });
}

std::optional<Step> match_restart(const PodRun& run, const PodFacts&, const KubeletConfig&) {
  if (run.phase != PodPhase::kRunning) return std::nullopt;
  return first_container(run, Stage::kRestart, [&](const ContainerRun& c) -> std::optional<common::TimePoint> {
    if (!c.crash_loop || c.state != ContainerState::kWaiting) return std::nullopt;
    return c.restart_at;
  });
}

// --- helpers of apply_step ---

void finish_pod_if_done(PodRun& run) {
  bool any = false, failed = false;
  for (const auto& c : run.containers) {
    if (c.init) continue;
    any = true;
    if (c.state != ContainerState::kTerminated || c.crash_loop) return;
    if (c.terminated.exit_code != 0) failed = true;
  }
  if (!any) return;
  run.phase = failed ? PodPhase::kFailed : PodPhase::kSucceeded;
  for (auto& c : run.containers) c.ready = false;
}

void terminate(ContainerRun& c, const std::string& reason, const std::string& message, int exit_code,
               common::TimePoint now) {
  c.state = ContainerState::kTerminated;
  c.terminated = Termination{reason, message, exit_code, c.started_at, now};
  c.ready = false;
  c.started = false;
}

// A crash (or a failed completion): restart with back-off unless restartPolicy is Never.
void crashed(ContainerRun& c, const PodFacts& f, const KubeletConfig& cfg, common::TimePoint now) {
  if (f.restart_policy == "Never") return;
  if (now - c.started_at >= kBackoffReset) c.backoff_steps = 0;
  c.backoff_steps += 1;
  c.crash_loop = true;
  c.restart_at = now + crash_backoff(c.backoff_steps, cfg);
}

std::string pod_ident(const PodRun& run) { return run.name + "_" + run.ns + "(" + run.uid + ")"; }

std::string fmt(common::TimePoint t) { return common::format_rfc3339(t); }

json termination_json(const Termination& t, const std::string& container_id) {
  json out = {{"exitCode", t.exit_code},
              {"reason", t.reason},
              {"startedAt", fmt(t.started_at)},
              {"finishedAt", fmt(t.finished_at)},
              {"containerID", container_id}};
  if (!t.message.empty()) out["message"] = t.message;
  return out;
}

std::string image_id(const std::string& image) {
  std::string repo = image;
  auto at = repo.find('@');
  if (at != std::string::npos) return image;
  auto colon = repo.rfind(':');
  if (colon != std::string::npos && repo.find('/', colon) == std::string::npos) repo = repo.substr(0, colon);
  return repo + "@sha256:" + common::sha256_hex(image);
}

json container_json(const PodRun& run, const ContainerRun& c) {
  std::string id = "containerd://" + common::sha256_hex(run.uid + "/" + c.name + "/" + std::to_string(c.restart_count));
  json s = {{"name", c.name},       {"image", c.image},  {"imageID", image_id(c.image)}, {"containerID", id},
            {"ready", c.ready},     {"started", c.started}, {"restartCount", c.restart_count}};
  switch (c.state) {
    case ContainerState::kRunning:
      s["state"] = {{"running", {{"startedAt", fmt(c.started_at)}}}};
      break;
    case ContainerState::kTerminated:
      s["state"] = {{"terminated", termination_json(c.terminated, id)}};
      break;
    case ContainerState::kWaiting: {
      json w = {{"reason", c.waiting_reason}};
      if (!c.waiting_message.empty()) w["message"] = c.waiting_message;
      s["state"] = {{"waiting", w}};
      s.erase("containerID");
      break;
    }
  }
  s["lastState"] = c.last ? json{{"terminated", termination_json(*c.last, id)}} : json::object();
  return s;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------

PodFacts pod_facts(const SimPod& p) {
  PodFacts f;
  f.restart_policy = p.restart_policy.empty() ? "Always" : p.restart_policy;
  f.deleting = p.deleting;
  f.grace_seconds = p.grace_seconds;
  if (p.deleting) f.deletion_start = p.deletion - std::chrono::seconds(std::max<std::int64_t>(0, p.grace_seconds));
  f.run_duration = duration_annotation(p, kRunDurationAnnotation);
  f.crash_after = duration_annotation(p, kCrashAfterAnnotation);
  if (f.crash_after && f.crash_after->count() == 0) f.crash_after.reset();
  if (auto it = p.annotations.find(kExitCodeAnnotation); it != p.annotations.end()) {
    try {
      f.exit_code = std::stoi(it->second);
    } catch (...) {
    }
  }
  return f;
}

PodFacts pod_facts(const SimPod& p, const PodRun& run) {
  PodFacts f = pod_facts(p);
  if (f.deleting && run.deletion_seen > f.deletion_start) f.deletion_start = run.deletion_seen;
  return f;
}

PodRun initial_run(const SimPod& p, common::TimePoint now, const KubeletConfig& cfg) {
  PodRun run;
  run.ns = p.ns;
  run.name = p.name;
  run.uid = p.uid;
  run.node = p.node;
  run.bound_at = now;
  for (const auto& sc : p.containers) {
    ContainerRun c;
    c.name = sc.name;
    c.init = sc.init && !sc.restart_always;
    c.sidecar = sc.init && sc.restart_always;
    c.restart_count = sc.restart_count;
    run.containers.push_back(std::move(c));
  }
  if (p.phase != "Running" && p.phase != "Succeeded" && p.phase != "Failed") return run;
  // A pod that was already started (a restarted simulator): continue from its status.
  run.phase = p.phase == "Running" ? PodPhase::kRunning : p.phase == "Succeeded" ? PodPhase::kSucceeded : PodPhase::kFailed;
  run.started_at = p.started == common::TimePoint{} ? now : p.started;
  run.devices_done = true;
  for (std::size_t i = 0; i < run.containers.size() && i < p.containers.size(); ++i) {
    ContainerRun& c = run.containers[i];
    const SimContainer& sc = p.containers[i];
    c.started_at = run.started_at;
    if (sc.running) {
      c.state = ContainerState::kRunning;
      c.ready = c.started = sc.ready;
    } else if (sc.terminated || c.init) {
      c.state = ContainerState::kTerminated;
      c.terminated = Termination{sc.terminated_reason.empty() ? "Completed" : sc.terminated_reason, "", 0,
                                 run.started_at, run.started_at};
    } else if (sc.waiting_reason == "CrashLoopBackOff") {
      c.state = ContainerState::kWaiting;
      c.waiting_reason = sc.waiting_reason;
      c.crash_loop = true;
      c.backoff_steps = 1;
      c.restart_at = now + cfg.crash_backoff_base;
    } else {
      c.state = ContainerState::kRunning;
    }
  }
  return run;
}

const std::vector<StageRule>& stage_table() {
  static const std::vector<StageRule> table = {
      {Stage::kKilling, "Killing", match_killing},
      {Stage::kStop, "Stop", match_stop},
      {Stage::kStart, "Start", match_start},
      {Stage::kGpuCrash, "GpuCrash", match_gpu_crash},
      {Stage::kInjectedCrash, "InjectedCrash", match_injected_crash},
      {Stage::kComplete, "Complete", match_complete},
      {Stage::kReady, "Ready", match_ready},
      {Stage::kBackOff, "BackOff", match_backoff},
      {Stage::kRestart, "Restart", match_restart},
  };
  return table;
}

const char* stage_name(Stage s) {
  for (const auto& r : stage_table()) {
    if (r.stage == s) return r.name;
  }
  return "None";
}

Step next_step(const PodRun& run, const PodFacts& facts, const KubeletConfig& cfg) {
  std::optional<Step> best;
  for (const auto& rule : stage_table()) {
    bool deletion_rule = rule.stage == Stage::kKilling || rule.stage == Stage::kStop;
    if (facts.deleting != deletion_rule) continue;  // a deleting pod only stops
    auto s = rule.match(run, facts, cfg);
    if (s && (!best || s->due < best->due)) best = s;
  }
  return best.value_or(Step{});
}

milliseconds crash_backoff(int n, const KubeletConfig& cfg) {
  milliseconds d = cfg.crash_backoff_base;
  for (int i = 1; i < n && d < cfg.crash_backoff_max; ++i) d *= 2;
  return std::min(d, cfg.crash_backoff_max);
}

void reject(PodRun& run, const std::string& reason, const std::string& message) {
  run.phase = PodPhase::kFailed;
  run.reason = reason;
  run.message = message;
}

std::vector<KubeletEvent> apply_step(const Step& step, PodRun& run, const PodFacts& f, const KubeletConfig& cfg,
                                     common::TimePoint now) {
  std::vector<KubeletEvent> events;
  ContainerRun* c = step.container >= 0 && step.container < static_cast<int>(run.containers.size())
                        ? &run.containers[step.container]
                        : nullptr;
  switch (step.stage) {
    case Stage::kNone:
    case Stage::kStop:
      break;
    case Stage::kKilling:
      run.killing_reported = true;
      for (const auto& k : run.containers) {
        if (runs(k)) events.push_back({"Normal", "Killing", "Stopping container " + k.name});
      }
      break;
    case Stage::kStart:
      run.phase = PodPhase::kRunning;
      run.started_at = now;
      for (auto& k : run.containers) {
        k.started_at = now;
        if (k.init) {
          k.state = ContainerState::kTerminated;
          k.terminated = Termination{"Completed", "", 0, now, now};
          continue;
        }
        k.state = ContainerState::kRunning;
        k.ready = k.started = false;
        events.push_back({"Normal", "Started", "Started container " + k.name});
      }
      if (std::none_of(run.containers.begin(), run.containers.end(), [](const ContainerRun& k) { return !k.init; })) {
        finish_pod_if_done(run);
      }
      break;
    case Stage::kReady:
      if (c) c->ready = c->started = true;
      break;
    case Stage::kGpuCrash:
      if (c) {
        terminate(*c, "OOMKilled", run.crash_reason, 137, now);
        events.push_back({"Warning", "OOMKilling", run.crash_reason});
        crashed(*c, f, cfg, now);
      }
      run.crash_container.clear();
      run.crash_reason.clear();
      finish_pod_if_done(run);
      break;
    case Stage::kInjectedCrash:
      if (c) {
        terminate(*c, "Error", std::string("crash injected by ") + kCrashAfterAnnotation, f.exit_code ? f.exit_code : 1,
                  now);
        crashed(*c, f, cfg, now);
      }
      finish_pod_if_done(run);
      break;
    case Stage::kComplete:
      if (c) {
        terminate(*c, f.exit_code == 0 ? "Completed" : "Error", "", f.exit_code, now);
        if (f.exit_code != 0) crashed(*c, f, cfg, now);  // OnFailure restarts it; Never leaves it
      }
      finish_pod_if_done(run);
      break;
    case Stage::kBackOff:
      if (c) {
        auto backoff = std::chrono::duration_cast<std::chrono::seconds>(c->restart_at - c->terminated.finished_at);
        c->last = c->terminated;
        c->state = ContainerState::kWaiting;
        c->waiting_reason = "CrashLoopBackOff";
        c->waiting_message = "back-off " + common::format_go_duration(backoff) + " restarting failed container=" +
                             c->name + " pod=" + pod_ident(run);
        c->restart_count += 1;
        events.push_back({"Warning", "BackOff", "Back-off restarting failed container " + c->name + " in pod " + pod_ident(run)});
      }
      break;
    case Stage::kRestart:
      if (c) {
        c->state = ContainerState::kRunning;
        c->crash_loop = false;
        c->waiting_message.clear();
        c->started_at = now;
        c->ready = c->started = false;
        events.push_back({"Normal", "Started", "Started container " + c->name});
      }
      break;
  }
  return events;
}

json render_status(PodRun& run, common::TimePoint now) {
  auto set_condition = [&](const std::string& type, bool status) {
    auto it = run.conditions.find(type);
    if (it == run.conditions.end() || it->second.first != status) run.conditions[type] = {status, now};
    return fmt(run.conditions[type].second);
  };
  json st = json::object();
  const char* phase = run.phase == PodPhase::kPending   ? "Pending"
                      : run.phase == PodPhase::kRunning ? "Running"
                      : run.phase == PodPhase::kSucceeded ? "Succeeded"
                                                          : "Failed";
  st["phase"] = phase;
  json scheduled = {{"type", "PodScheduled"}, {"status", "True"}, {"lastProbeTime", nullptr},
                    {"lastTransitionTime", run.scheduled_since.empty() ? fmt(run.bound_at) : run.scheduled_since}};
  if (!run.reason.empty()) {  // rejected before starting
    st["reason"] = run.reason;
    st["message"] = run.message;
    st["conditions"] = json::array({scheduled});
    if (!run.host_ip.empty()) st["hostIP"] = run.host_ip;
    return st;
  }
  std::vector<std::string> unready;
  for (const auto& c : run.containers) {
    if (!c.init && !c.ready) unready.push_back(c.name);
  }
  bool terminal = run.phase == PodPhase::kSucceeded || run.phase == PodPhase::kFailed;
  bool ready = unready.empty() && !terminal;
  std::string not_ready_msg = "containers with unready status: [";
  for (std::size_t i = 0; i < unready.size(); ++i) not_ready_msg += (i ? " " : "") + unready[i];
  not_ready_msg += "]";
  auto ready_cond = [&](const std::string& type) {
    json c = {{"type", type}, {"status", ready ? "True" : "False"}, {"lastProbeTime", nullptr},
              {"lastTransitionTime", set_condition(type, ready)}};
    if (!ready) {
      c["reason"] = terminal ? "PodCompleted" : "ContainersNotReady";
      if (!terminal) c["message"] = not_ready_msg;
    }
    return c;
  };
  bool sandbox = !terminal;
  json conds = json::array();
  conds.push_back({{"type", "PodReadyToStartContainers"}, {"status", sandbox ? "True" : "False"},
                   {"lastProbeTime", nullptr}, {"lastTransitionTime", set_condition("PodReadyToStartContainers", sandbox)}});
  json init = {{"type", "Initialized"}, {"status", "True"}, {"lastProbeTime", nullptr},
               {"lastTransitionTime", set_condition("Initialized", true)}};
  if (terminal) init["reason"] = "PodCompleted";
  conds.push_back(init);
  conds.push_back(ready_cond("Ready"));
  conds.push_back(ready_cond("ContainersReady"));
  conds.push_back(scheduled);
  st["conditions"] = conds;
  if (!run.host_ip.empty()) {
    st["hostIP"] = run.host_ip;
    st["hostIPs"] = json::array({{{"ip", run.host_ip}}});
  }
  if (!run.pod_ip.empty()) {
    st["podIP"] = run.pod_ip;
    st["podIPs"] = json::array({{{"ip", run.pod_ip}}});
  }
  st["startTime"] = fmt(run.started_at);
  json inits = json::array(), regular = json::array();
  for (const auto& c : run.containers) (c.init || c.sidecar ? inits : regular).push_back(container_json(run, c));
  if (!inits.empty()) st["initContainerStatuses"] = inits;
  st["containerStatuses"] = regular;
  return st;
}

}  // namespace kubex::sim::cluster::kubelet
