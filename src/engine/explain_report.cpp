#include "engine/explain_report.h"

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>

#include "engine/text_table.h"

namespace kubex::engine {
namespace {

using nlohmann::json;

json reason_json(const ExplainReason& r) {
  return {{"reason", r.name}, {"message", r.sentence}};
}

json reasons_json(const std::vector<ExplainReason>& rs) {
  json a = json::array();
  for (const auto& r : rs) a.push_back(reason_json(r));
  return a;
}

json pause_json(const ExplainPause& p) {
  return {{"source", p.source},   {"object", p.object},   {"annotation", "rightsizing.kubex.ai/pause-until"},
          {"value", p.value},     {"meaning", p.meaning}, {"checked", p.checked},
          {"message", pause_text(p)}};
}

json optional_number(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}

std::string percent_text(const std::optional<double>& v) {
  if (!v) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", *v);
  return buf;
}

std::string map_text(const std::map<std::string, std::string>& m) {
  std::string s;
  for (const auto& [k, v] : m) s += (s.empty() ? "" : " ") + k + "=" + v;
  return s.empty() ? "none" : s;
}

std::string or_dash(const std::string& s) {
  return s.empty() ? "-" : s;
}

std::string names_text(const std::vector<ExplainReason>& rs) {
  std::string s;
  for (const auto& r : rs) s += (s.empty() ? "" : ",") + r.name;
  return s.empty() ? "-" : s;
}

void print_reasons(std::ostream& out, const std::vector<ExplainReason>& rs, const std::string& indent,
                   const std::string& suffix = "") {
  for (const auto& r : rs) out << indent << r.name << suffix << ": " << r.sentence << "\n";
}

// A P95 or MAX without the span of its samples is what PRO-2 reads as "no samples" (the first minutes of a pod):
// show one or the other, never a value beside "no SM samples" and a `-` span (issue 34 item 8).
std::optional<double> sampled(const std::optional<double>& v, const std::string& span) {
  return span.empty() ? std::nullopt : v;
}

void print_proactive(const ExplainProactive& p, std::ostream& out) {
  out << "\nProactive (" << p.policy << ")\n";
  out << "  policy Ready:     " << or_dash(p.ready) << "\n";
  out << "  last evaluation:  " << (p.last_evaluation.empty() ? "never" : p.last_evaluation) << "\n";
  out << "  lookback:         " << p.lookback << ", memory " << p.memory_lookback
      << (p.last_transition.empty() ? "" : " (since the allocation transition at " + p.last_transition + ")") << "\n";
  if (p.queried) {
    out << "  Prometheus:       " << p.prometheus_url << " (history now)\n";
  } else {
    out << "  Prometheus:       " << (p.prometheus_url.empty() ? "(no URL)" : p.prometheus_url)
        << " not queried: " << p.prometheus_error << "\n";
  }
  std::vector<std::vector<std::string>> rows = {
      {"CONTAINER", "ALLOCATED", "SM P95", "MEMORY MAX", "SPAN SM/MEM", "CONFIGMAP", "VALUE", "SOURCE", "PEAK"}};
  for (const auto& c : p.containers)
    rows.push_back({c.container, c.allocation, percent_text(sampled(c.sm_p95, c.compute_span)),
                    percent_text(sampled(c.memory_max, c.memory_span)),
                    or_dash(c.compute_span) + "/" + or_dash(c.memory_span), or_dash(c.configmap), or_dash(c.value),
                    or_dash(c.source), or_dash(c.peak)});
  print_table(out, rows, "    ");
  for (const auto& c : p.containers) {
    if (!c.reason.empty() && c.value.empty()) out << "  no value for " << c.container << ": " << c.reason << "\n";
  }
  if (!p.history_wait.empty()) out << "  history:          " << p.history_wait << "\n";  // issue 34 item 11
  out << "  stored:           " << map_text(p.stored);
  if (!p.stored_source.empty()) out << " (source " << map_text(p.stored_source) << ")";
  out << "\n  result now:       " << p.result;
  if (!p.would_write.empty()) out << " (would write " << map_text(p.would_write) << ")";
  out << "\n";
}

json proactive_json(const ExplainProactive& p) {
  json containers = json::array();
  for (const auto& c : p.containers)
    containers.push_back({{"container", c.container},
                          {"allocation", c.allocation},
                          {"smP95", optional_number(sampled(c.sm_p95, c.compute_span))},
                          {"memoryMax", optional_number(sampled(c.memory_max, c.memory_span))},
                          {"computeSpan", c.compute_span},
                          {"memorySpan", c.memory_span},
                          {"configmap", c.configmap},
                          {"value", c.value},
                          {"source", c.source},
                          {"peak", c.peak},
                          {"reason", c.reason}});
  return {{"policy", p.policy},
          {"ready", p.ready},
          {"lastEvaluationTime", p.last_evaluation},
          {"lookback", p.lookback},
          {"memoryLookback", p.memory_lookback},
          {"lastAllocationTransition", p.last_transition},
          {"prometheus", {{"url", p.prometheus_url}, {"queried", p.queried}, {"error", p.prometheus_error}}},
          {"containers", containers},
          {"stored", p.stored},
          {"storedSource", p.stored_source},
          {"result", p.result},
          {"wouldWrite", p.would_write},
          {"historyWait", p.history_wait},
          {"nextHistoryRead", p.next_read}};
}

void print_reactive(const ExplainReactive& r, std::ostream& out) {
  out << "\nReactive (" << r.policy << ")\n";
  if (!r.state_present) {
    out << "  reactive-state:   none yet" << (r.state_error.empty() ? "" : " (" + r.state_error + ")") << "\n";
  } else {
    out << "  reactive-state:   baseline " << map_text(r.baseline) << ", driver " << or_dash(r.driver)
        << ", updated " << or_dash(r.updated_at) << "\n";
  }
  out << "  last evaluation:  " << (r.last_evaluation.empty() ? "never" : r.last_evaluation) << "\n";
  out << "  next cycle:       " << (r.next_cycle.empty() ? "when the engine's leader starts" : r.next_cycle) << "\n";
  for (const auto& el : r.eligibility) {
    out << "  pod " << el.pod << ": "
        << (el.eligible ? "counts (REA-2)"
                        : el.eligible_at.empty() ? "not started: not counted (REA-2)"
                                                 : "counts from " + el.eligible_at + " (minPodMetricsAge " +
                                                       r.min_pod_metrics_age + " after its start, REA-2)")
        << "\n";
  }
  if (!r.queried) {
    out << "  Prometheus:       " << (r.prometheus_url.empty() ? "(no URL)" : r.prometheus_url)
        << " not queried: " << r.prometheus_error << "\n";
    return;
  }
  out << "  Prometheus:       " << r.prometheus_url << " (samples now)\n";
  if (r.samples.empty()) {
    out << "    no eligible pod (REA-2: Running, not terminating, older than minPodMetricsAge)\n";
  } else {
    std::vector<std::vector<std::string>> rows = {
        {"POD", "CONTAINER", "ALLOCATED", "COMPUTE UPSIZE", "COMPUTE SCALE-BACK", "MEMORY UPSIZE",
         "MEMORY SCALE-BACK"}};
    for (const auto& s : r.samples)
      rows.push_back({s.pod, s.container, s.allocation, percent_text(s.compute_upsize),
                      percent_text(s.compute_scale_back), percent_text(s.memory_upsize),
                      percent_text(s.memory_scale_back)});
    print_table(out, rows, "    ");
  }
  if (r.rules.empty()) {
    out << "  would fire now:   no rule (REA-6, REA-7 and REA-11 all hold still)\n";
  } else {
    for (const auto& rule : r.rules)
      out << "  would fire now:   " << rule.rule << " " << rule.direction << " on " << rule.signal << " -> "
          << rule.total << " (pod " << rule.pod << ")" << (rule.won ? ", wins REA-8" : "") << "\n";
  }
  out << "  stored:           " << map_text(r.stored) << "\n";
  out << "  result now:       " << r.result;
  if (!r.would_write.empty()) out << " (would write " << map_text(r.would_write) << ")";
  out << "\n";
}

// ACT-3b: "replacement chat-2 Ready since T, restarted at T: stable at T (minReadyDuration 10s); the next eviction
// waits for it".
std::string settling_text(const ExplainSettling& s, const std::string& min_ready) {
  std::string t = "replacement " + s.pod;
  if (!s.ready) {
    t += " is not Ready" + (s.restarted_at.empty() ? std::string() : " (restarted at " + s.restarted_at + ")") +
         ": it counts as in flight until it has been Ready for minReadyDuration " + min_ready + " with no restart";
  } else {
    t += " Ready since " + or_dash(s.ready_since) + (s.restarted_at.empty() ? "" : ", restarted at " + s.restarted_at) +
         ": stable at " + s.stable_at + " (minReadyDuration " + min_ready + ")";
  }
  return t + "; the next eviction waits for it (ACT-3b)";
}

// `said`: reasons whose sentence is already printed above, and the pause line above (each is said once).
void print_actuation(const ExplainActuation& a, std::ostream& out, const std::set<std::string>& said,
                     const std::optional<ExplainPause>& pause) {
  out << "\nActuation\n";
  if (!a.note.empty()) {
    out << "  " << a.note << "\n";
    return;
  }
  out << "  desired:          " << a.desired << "\n";
  out << "  webhook healthy:  " << (a.webhook_healthy ? "yes" : "no") << "\n";
  out << "  result now:       " << a.result << " (budget " << a.budget << ", in flight " << a.in_flight << ")\n";
  if (a.pods.empty()) {
    out << "  no running pod of the workload\n";
    return;
  }
  if (!a.last_eviction.empty()) out << "  last eviction:    " << a.last_eviction << "\n";
  for (const auto& s : a.settling) out << "  waiting for:      " << settling_text(s, a.min_ready_duration) << "\n";
  std::vector<std::vector<std::string>> rows = {{"POD", "IN SYNC", "LIVE", "EVICT NOW", "BLOCKED BY"}};
  for (const auto& p : a.pods)
    rows.push_back({p.pod, p.in_sync ? "yes" : "no", p.live, p.evict_now ? "yes" : "no", names_text(p.blocked_by)});
  print_table(out, rows, "  ");
  std::set<std::pair<std::string, std::string>> seen;  // one line per reason and sentence
  for (const auto& p : a.pods)
    for (const auto& r : p.blocked_by) seen.emplace(r.name, r.sentence);
  for (const auto& [name, sentence] : seen)
    if (!said.count(name)) out << "    " << name << ": " << sentence << "\n";
  const std::string above = pause ? pause_text(*pause) : "";
  for (const auto& p : a.pods)
    if (!p.harm.empty())
      out << "    " << p.pod << ": harmed by kubex's resize (" << p.harm
          << "): kubex replaces it and its replacement gets the harm-guard floor (ACT-10)\n";
  for (const auto& p : a.pods)
    if (p.pause && pause_text(*p.pause) != above) out << "    " << p.pod << ": " << pause_text(*p.pause) << "\n";
  for (const auto& n : a.notes) out << "  note: " << n << "\n";
}

void print_rollback(const ExplainRollback& r, std::ostream& out) {
  out << "\nRollback\n";
  if (!r.present) {
    out << "  rollback-state:   none" << (r.error.empty() ? " (recorded once the workload is managed)" : " (" + r.error + ")")
        << "\n";
    return;
  }
  out << "  phase:            " << r.phase << "\n";
  out << "  strategy:         " << or_dash(r.strategy) << "\n";
  out << "  original GPU:     " << map_text(r.original) << "\n";
  out << "  last applied:     " << map_text(r.last_applied) << "\n";
  for (const auto& h : r.history)
    out << "  history:          " << h.at << "  " << h.container << " " << h.from << " -> " << h.to << " ("
        << h.source << ")\n";
}

}  // namespace

std::string crash_loop_evidence(const json& pod) {
  if (!pod.is_object()) return "";
  const json st = pod.value("status", json::object());
  bool ready = false;
  for (const auto& c : st.value("conditions", json::array()))
    if (c.is_object() && c.value("type", "") == "Ready" && c.value("status", "") == "True") ready = true;
  std::string restarted;
  for (const auto& cs : st.value("containerStatuses", json::array())) {
    if (!cs.is_object()) continue;
    const int restarts = cs.value("restartCount", 0);
    const std::string count = std::to_string(restarts) + (restarts == 1 ? " restart" : " restarts");
    const json waiting = cs.value("state", json::object()).value("waiting", json::object());
    if (waiting.is_object() && waiting.value("reason", "") == "CrashLoopBackOff")
      return "container " + cs.value("name", "") + ": CrashLoopBackOff, " + count;
    if (restarts > 0 && restarted.empty()) restarted = "container " + cs.value("name", "") + ": " + count;
  }
  return ready ? "" : restarted;
}

ExplainReason crash_looping_reason(const std::string& evidence, bool resized_down) {
  if (resized_down)
    return {"min-ready-duration-not-met",
            "crash-looping after kubex resized it down (" + evidence +
                "): once ACT-10 finds the harm (an out-of-memory exit or 2 restarts within 10 minutes of the pod's "
                "start, when the pod it replaced was not crashing), kubex raises the container to a harm-guard floor "
                "and replaces the pod without waiting for it to be Ready."};
  return {"min-ready-duration-not-met",
          "crash-looping: kubex did not resize it down, so it will not evict it (" + evidence +
              "); fix the workload or its size, or delete the pod."};
}

std::string harm_floor_text(const ExplainHarmFloor& f) {
  return f.container + " gets at least " + f.floor + " GPU until " + f.until +
         ": a resize down harmed the workload, so kubex keeps the allocation it had before (ACT-10)";
}

std::string near_miss_text(const ExplainNearMiss& m) {
  std::string s = "The closest policy is " + m.policy + ": ";
  for (std::size_t i = 0; i < m.misses.size(); ++i) s += (i == 0 ? "" : "; and ") + m.misses[i].sentence;
  if (!m.invalid_reason.empty()) s += "; it is also invalid (" + m.invalid_reason + ")";
  if (m.more > 0)
    s += " (and " + std::to_string(m.more) +
         (m.more == 1 ? " more policy that misses" : " more policies that miss") + " by as little)";
  return s + ".";
}

std::string pause_text(const ExplainPause& p) {
  std::string s = "paused by rightsizing.kubex.ai/pause-until=\"" + p.value + "\" on " + p.object;
  if (!p.meaning.empty()) s += " (" + p.meaning + ")";
  if (!p.checked) s += ", which has no effect: the strategy sets safetyChecks.enablePauseUntilAnnotationCheck: false";
  return s;
}

json explanation_json(const Explanation& e) {
  json doc = {{"apiVersion", "cli.kubex.ai/v1alpha1"},
              {"kind", "Explanation"},
              {"target", {{"kind", e.kind}, {"namespace", e.ns}, {"name", e.name}}},
              {"managed", !e.not_managed.has_value() && !e.on_hold},  // RBK-4: on hold is not managed
              {"ownerChain", e.owner_chain},
              {"workload", e.workload}};
  if (e.not_managed) {
    doc["notManaged"] = reason_json(*e.not_managed);
    if (e.near_miss) {
      const ExplainNearMiss& m = *e.near_miss;
      json misses = json::array();
      for (const auto& x : m.misses) misses.push_back({{"check", x.name}, {"message", x.sentence}});
      doc["notManaged"]["nearMiss"] = {{"policy", m.policy},        {"misses", misses},
                                       {"labels", m.labels},        {"invalidReason", m.invalid_reason},
                                       {"more", m.more}};
    }
    return doc;
  }
  doc["onHold"] = e.on_hold;
  json policies = json::array();
  for (const auto& p : e.policies)
    policies.push_back({{"policy", p.ref},
                        {"valid", p.valid},
                        {"invalidReason", p.invalid_reason},
                        {"strategy", p.strategy},
                        {"wins", p.wins},
                        {"note", p.note}});
  doc["policies"] = policies;
  doc["strategy"] = e.strategy;
  doc["mode"] = e.mode;
  if (!e.kai_mode.empty()) doc["kaiMode"] = e.kai_mode;
  if (!e.kai_limit.empty()) doc["kaiLimit"] = e.kai_limit;
  if (!e.kai_warning.empty()) doc["kaiWarning"] = e.kai_warning;
  if (!e.harm_guard.empty()) {
    json floors = json::array();
    for (const auto& f : e.harm_guard)
      floors.push_back({{"container", f.container},
                        {"floor", f.floor},
                        {"until", f.until},
                        {"source", "harm-guard"},
                        {"message", harm_floor_text(f)}});
    doc["harmGuard"] = floors;
  }
  if (e.pause) doc["pause"] = pause_json(*e.pause);
  doc["admission"] = {{"result", e.admission_result}, {"stoppedBy", reasons_json(e.admission_stops)}};
  json resources = json::array();
  for (const auto& r : e.resources)
    resources.push_back({{"container", r.container},
                         {"resource", r.slot},
                         {"current", r.current},
                         {"desired", r.desired.empty() ? json(nullptr) : json(r.desired)},
                         {"source", r.source},
                         {"annotation", r.annotation},
                         {"applied", r.applied},
                         {"constraints", reasons_json(r.constraints)}});
  doc["resources"] = resources;
  doc["podConstraints"] = reasons_json(e.pod_constraints);
  doc["notes"] = e.notes;
  if (e.proactive) doc["proactive"] = proactive_json(*e.proactive);
  if (e.reactive) {
    const ExplainReactive& r = *e.reactive;
    json samples = json::array();
    for (const auto& s : r.samples)
      samples.push_back({{"pod", s.pod},
                         {"container", s.container},
                         {"allocation", s.allocation},
                         {"computeUpsize", optional_number(s.compute_upsize)},
                         {"computeScaleBack", optional_number(s.compute_scale_back)},
                         {"memoryUpsize", optional_number(s.memory_upsize)},
                         {"memoryScaleBack", optional_number(s.memory_scale_back)}});
    json rules = json::array();
    for (const auto& x : r.rules)
      rules.push_back({{"rule", x.rule},
                       {"signal", x.signal},
                       {"direction", x.direction},
                       {"total", x.total},
                       {"pod", x.pod},
                       {"won", x.won}});
    json eligibility = json::array();
    for (const auto& el : r.eligibility)
      eligibility.push_back({{"pod", el.pod}, {"eligibleAt", el.eligible_at}, {"eligible", el.eligible}});
    doc["reactive"] = {{"policy", r.policy},
                       {"state",
                        {{"present", r.state_present},
                         {"error", r.state_error},
                         {"baseline", r.baseline},
                         {"driver", r.driver},
                         {"updatedAt", r.updated_at}}},
                       {"lastEvaluationTime", r.last_evaluation},
                       {"nextCycle", r.next_cycle},
                       {"minPodMetricsAge", r.min_pod_metrics_age},
                       {"eligibility", eligibility},
                       {"prometheus", {{"url", r.prometheus_url}, {"queried", r.queried}, {"error", r.prometheus_error}}},
                       {"samples", samples},
                       {"rules", rules},
                       {"stored", r.stored},
                       {"result", r.result},
                       {"wouldWrite", r.would_write}};
  }
  if (e.actuation) {
    const ExplainActuation& a = *e.actuation;
    json pods = json::array();
    for (const auto& p : a.pods) {
      pods.push_back({{"pod", p.pod},
                      {"inSync", p.in_sync},
                      {"live", p.live},
                      {"desired", p.desired},
                      {"evictNow", p.evict_now},
                      {"blockedBy", reasons_json(p.blocked_by)}});
      if (p.pause) pods.back()["pause"] = pause_json(*p.pause);
      if (!p.harm.empty()) pods.back()["harm"] = p.harm;
    }
    doc["actuation"] = {{"note", a.note},         {"desired", a.desired},       {"result", a.result},
                        {"budget", a.budget},     {"inFlight", a.in_flight},    {"webhookHealthy", a.webhook_healthy},
                        {"pods", pods},           {"notes", a.notes}};
    if (a.note.empty()) {
      json settling = json::array();
      for (const auto& x : a.settling)
        settling.push_back({{"pod", x.pod},
                            {"ready", x.ready},
                            {"readySince", x.ready_since},
                            {"restartedAt", x.restarted_at},
                            {"stableAt", x.stable_at},
                            {"message", settling_text(x, a.min_ready_duration)}});
      doc["actuation"]["lastEviction"] = a.last_eviction;
      doc["actuation"]["minReadyDuration"] = a.min_ready_duration;
      doc["actuation"]["settling"] = settling;
    }
  }
  if (e.rollback) {
    const ExplainRollback& r = *e.rollback;
    json history = json::array();
    for (const auto& h : r.history)
      history.push_back(
          {{"at", h.at}, {"container", h.container}, {"from", h.from}, {"to", h.to}, {"source", h.source}});
    doc["rollback"] = {{"present", r.present},           {"error", r.error},     {"phase", r.phase},
                       {"strategy", r.strategy},         {"original", r.original}, {"lastApplied", r.last_applied},
                       {"history", history}};
  }
  return doc;
}

void print_explanation(const Explanation& e, std::ostream& out) {
  std::string chain;
  for (const auto& c : e.owner_chain) chain += (chain.empty() ? "" : " -> ") + c;
  if (e.not_managed) {  // CLI-1: one line, naming the ADM-3 exit
    out << e.kind << " " << e.ns << "/" << e.name << " is not managed by kubex (" << e.not_managed->name
        << "): " << e.not_managed->sentence;
    if (e.owner_chain.size() > 1) out << " Owner chain: " << chain << ".";
    out << "\n";
    return;
  }
  out << e.kind << " " << e.ns << "/" << e.name << "\n";
  if (!chain.empty()) out << "  owner chain:  " << chain << "\n";
  out << "  workload:     " << e.workload << (e.on_hold ? " (policies on hold, RBK-4)" : " (managed)") << "\n";
  out << "  strategy:     " << or_dash(e.strategy) << " (mode " << or_dash(e.mode)
      << (e.kai_mode.empty() ? "" : ", KAI gpuSharingMode " + e.kai_mode) << ")\n";
  if (!e.kai_limit.empty()) out << "  burst limit:  " << e.kai_limit << "\n";
  if (!e.kai_warning.empty()) out << "  warning:      " << e.kai_warning << "\n";
  for (const auto& f : e.harm_guard) out << "  harm guard:   " << harm_floor_text(f) << "\n";
  if (e.pause) out << "  pause:        " << pause_text(*e.pause) << "\n";

  out << "\nPolicies (SEL-5 order)\n";
  std::vector<std::vector<std::string>> rows = {{"#", "POLICY", "VALID", "STRATEGY", "WINS"}};
  for (std::size_t i = 0; i < e.policies.size(); ++i) {
    const auto& p = e.policies[i];
    std::string wins;
    for (const auto& w : p.wins) wins += (wins.empty() ? "" : ", ") + w;
    if (wins.empty()) wins = p.note.empty() ? "-" : p.note;
    rows.push_back({std::to_string(i + 1), p.ref, p.valid ? "yes" : "no (" + p.invalid_reason + ")",
                    or_dash(p.strategy), wins});
  }
  print_table(out, rows, "  ");

  out << "\nResources (what a pod created now gets: " << e.admission_result << ")\n";
  print_reasons(out, e.admission_stops, "  stopped by ");
  std::set<std::string> said;
  for (const auto& r : e.admission_stops) said.insert(r.name);
  if (e.resources.empty()) {
    out << "  no target container has a value from a policy\n";
  } else {
    std::vector<std::vector<std::string>> r = {
        {"CONTAINER", "RESOURCE", "CURRENT", "DESIRED", "APPLIED", "SOURCE", "CONSTRAINTS"}};
    for (const auto& x : e.resources) {
      std::string source = x.source.empty() ? "-" : x.source + (x.annotation.empty() ? "" : " (" + x.annotation + ")");
      r.push_back({x.container, x.slot, x.current, or_dash(x.desired), x.applied, source, names_text(x.constraints)});
    }
    print_table(out, r, "  ");
  }
  std::map<std::string, std::string> explained;
  for (const auto& x : e.resources)
    for (const auto& c : x.constraints) explained.emplace(c.name, c.sentence);
  for (const auto& c : e.pod_constraints) explained.emplace(c.name, c.sentence);
  if (!explained.empty()) {
    out << "  constraints:\n";
    for (const auto& [name, sentence] : explained) {
      if (said.insert(name).second) out << "    " << name << ": " << sentence << "\n";
    }
  }
  for (const auto& n : e.notes) out << "  note: " << n << "\n";
  if (e.proactive) print_proactive(*e.proactive, out);
  if (e.reactive) print_reactive(*e.reactive, out);
  if (e.actuation) print_actuation(*e.actuation, out, said, e.pause);
  if (e.rollback) print_rollback(*e.rollback, out);
}

}  // namespace kubex::engine
