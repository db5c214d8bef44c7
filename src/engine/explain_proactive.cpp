// `kubex explain`'s proactive section (SPEC §7, CLI-1): the winning proactive policy's history for this one workload,
// read now with the engine's batched PRO-2 queries (observe::read_history), the ConfigMap entry (PRO-6), and what the
// owner would hold after an evaluation (decide::owner_values, the controller's own decision).
#include <nlohmann/json.hpp>

#include "api/keys.h"
#include "api/kinds.h"
#include "api/views.h"
#include "common/time_format.h"
#include "decide/desired_annotations.h"
#include "decide/policy/catalog.h"
#include "decide/policy/match.h"
#include "decide/proactive/history_schedule.h"
#include "decide/proactive/owner_values.h"
#include "engine/explain_build.h"
#include "kube/client/client.h"
#include "observe/catalog.h"
#include "observe/gpu_history.h"
#include "observe/workloads.h"
#include "prom/client.h"

namespace kubex::engine {
namespace {

using nlohmann::json;
namespace dp = decide::policy;

std::optional<std::string> annotation_of(const api::WorkloadView& w, const std::string& key) {
  const common::IStr* v = w.annotation(key);
  return v ? std::optional<std::string>(v->str()) : std::nullopt;
}

std::string span_minutes(std::chrono::seconds s) {
  return s >= std::chrono::hours(1) ? decide::span_text(s) : std::to_string(s.count() / 60) + "m";
}

// The ConfigMap's recommendations (PRO-6), or nullopt with the reason it could not be read.
std::optional<decide::RecommendationSet> configmap_set(kube::Client& client, const api::GlobalConfigSpec& g,
                                                       std::vector<std::string>& notes) {
  if (!g.has_recommendations_config_map) return std::nullopt;
  const std::string location = g.recommendations_config_map_namespace + "/" + g.recommendations_config_map_name;
  auto cm = client.get("/api/v1/namespaces/" + g.recommendations_config_map_namespace + "/configmaps/" +
                       g.recommendations_config_map_name);
  if (!cm) {
    notes.push_back("recommendations ConfigMap " + location + " not read: " + cm.error().str());
    return std::nullopt;
  }
  auto data = cm->find("data");
  if (data == cm->end() || !data->is_object() || !data->contains("recommendations.json") ||
      !(*data)["recommendations.json"].is_string()) {
    notes.push_back("recommendations ConfigMap " + location + " has no key recommendations.json");
    return std::nullopt;
  }
  auto set = decide::parse_recommendations((*data)["recommendations.json"].get<std::string>());
  if (!set) {
    notes.push_back("recommendations ConfigMap " + location + ": " + set.error().str());
    return std::nullopt;
  }
  return std::move(*set);
}

// Issue 34 item 11: a workload whose history is shorter than PRO-2's span is read again when it first covers it
// (decide::next_catch_up, as the controller schedules it), or at the next regular reload if that comes first.
void next_history_read(const ExplainContext& ctx, const api::WorkloadView& view, const api::GlobalConfigSpec& g,
                       const std::map<std::string, decide::ContainerHistory>& read,
                       const std::map<std::string, decide::Allocation>& allocations, ExplainProactive& p) {
  auto covered = decide::history_covered_at(read, allocations, ctx.now, observe::oldest_pod_start(ctx.caches, view));
  if (!covered) return;
  common::TimePoint reload = *covered + 2 * g.recommendation_reload_interval;  // unknown: never before the catch-up
  if (auto last = common::parse_rfc3339(p.last_evaluation)) {
    if (*last + g.recommendation_reload_interval > ctx.now) reload = *last + g.recommendation_reload_interval;
  }
  auto plan = decide::next_catch_up({{"w", *covered}}, reload, std::nullopt);
  const common::TimePoint at = plan ? plan->at : reload;
  std::optional<std::chrono::seconds> have;
  for (const auto& [c, a] : allocations) {
    auto h = read.find(c);
    if (a.gpu <= 0 || h == read.end()) continue;
    for (const auto& span : {h->second.compute_span, h->second.memory_span}) {
      if (span) have = have ? std::min(*have, *span) : *span;
    }
  }
  p.history_wait = decide::catch_up_text(have, at, ctx.now);
  p.next_read = common::format_rfc3339(at);
}

}  // namespace

void explain_proactive(const ExplainContext& ctx, const api::WorkloadView& view, Explanation& e) {
  auto catalog = ctx.catalog.catalog();
  const api::GlobalConfigSpec& g = catalog->global();
  const dp::Workload workload = observe::decision_workload(view);
  const dp::Match match =
      dp::match_policies(workload, catalog->candidates(), catalog->evaluation(), g.protected_namespace_patterns);
  if (match.on_hold || !match.proactive_winner) return;
  const dp::MatchedPolicy& winner = match.policies[*match.proactive_winner];
  const api::Policy& policy = *winner.policy;
  ExplainProactive p;
  p.policy = winner.ref;
  if (auto got = ctx.client.get(api::object_path(policy.kind, policy.meta.ns, policy.meta.name))) {
    if (auto st = got->find("status"); st != got->end() && st->is_object()) {
      if (auto t = st->find("lastEvaluationTime"); t != st->end() && t->is_string()) p.last_evaluation = *t;
      if (auto cs = st->find("conditions"); cs != st->end() && cs->is_array()) {
        for (const auto& c : *cs) {
          if (c.value("type", "") == "Ready") {
            p.ready = c.value("status", "") + " " + c.value("reason", "") + ": " + c.value("message", "");
          }
        }
      }
    }
  }

  // PRO-2's lookbacks for this workload, as the engine computes them.
  const std::chrono::seconds lookback(std::int64_t{policy.proactive.max_analysis_age_days} * 86400);
  std::chrono::seconds memory_lookback = lookback;
  if (auto rb = annotation_of(view, api::keys::kRollbackState)) {
    if (auto t = decide::last_allocation_transition(*rb)) {
      p.last_transition = common::format_rfc3339(*t);
      memory_lookback = std::clamp(std::chrono::duration_cast<std::chrono::seconds>(ctx.now - *t),
                                   std::chrono::seconds(60), lookback);
    }
  }
  p.lookback = decide::span_text(lookback);
  p.memory_lookback = span_minutes(memory_lookback);

  const std::map<std::string, decide::Allocation> allocations = observe::current_allocations(ctx.caches, view);
  std::map<std::string, decide::ContainerHistory> read;
  const prom::Options po = explain_prometheus(ctx, g);
  p.prometheus_url = po.url;
  if (allocations.empty()) {
    p.prometheus_error = "no container holds a GPU (PRO-4): only a ConfigMap entry gives a value";
  } else if (auto querier = prom::connect(po); !querier) {
    p.prometheus_error = querier.error().str();
  } else {
    observe::HistoryRequest r;
    bool whole = true;
    for (const auto& [c, a] : allocations) whole = whole && a.whole_gpu;
    r.workload = {workload.kind, workload.ns, workload.name, whole};
    r.lookback = lookback;
    r.memory_lookback = memory_lookback;
    observe::HistoryReadOptions ro;
    ro.retry_after.clear();  // a command line answers at once; the engine's reads back off
    observe::HistoryReadResult result = observe::read_history(**querier, {r}, ctx.now, ro);
    if (!result.errors.empty()) {
      p.prometheus_error = result.errors.front();
    } else {
      p.queried = true;
      if (auto it = result.workloads.find(observe::history_key(r.workload)); it != result.workloads.end()) {
        read = std::move(it->second);
      }
    }
  }

  std::vector<std::string> containers;
  for (const auto& c : observe::target_containers_of(ctx.caches, view)) containers.push_back(c.name);
  const std::optional<decide::RecommendationSet> set = configmap_set(ctx.client, g, e.notes);
  decide::WorkloadSources sources;
  sources.configmap = set ? &*set : nullptr;
  sources.ns = workload.ns;
  sources.kind = workload.kind;
  sources.name = workload.name;
  sources.history = p.queried ? &read : nullptr;
  sources.allocations = &allocations;
  sources.headroom_percent = g.proactive_headroom_percent;
  sources.strategy = winner.strategy ? &winner.strategy->spec : nullptr;
  decide::OwnerInput in;
  in.now = ctx.now;
  in.containers = decide::container_sources(containers, sources);
  in.requests = annotation_of(view, decide::desired_requests_key(policy.kind));
  in.limits = annotation_of(view, decide::desired_limits_key(policy.kind));
  in.state = annotation_of(view, decide::proactive_state_key(policy.kind));
  const decide::OwnerValues out = decide::owner_values(in);

  if (in.requests) {
    if (auto stored = decide::parse_desired_gpu(*in.requests)) {
      for (const auto& [c, v] : *stored) p.stored[c] = decide::format_gpu(v);
    }
  }
  if (in.state) {
    if (auto st = decide::parse_proactive_state(*in.state)) p.stored_source = st->source;
  }
  for (std::size_t i = 0; i < in.containers.size(); ++i) {
    const decide::ContainerSources& src = in.containers[i];
    const decide::ContainerOutcome& o = out.containers[i];
    ExplainProactiveContainer c;
    c.container = src.name;
    if (auto a = allocations.find(src.name); a != allocations.end()) {
      c.allocation = decide::format_gpu(a->second.gpu) + (a->second.whole_gpu ? " (whole GPUs)" : " (KAI fraction)");
    } else {
      c.allocation = "none";
    }
    if (auto h = read.find(src.name); h != read.end()) {
      c.sm_p95 = h->second.compute_percent;
      c.memory_max = h->second.memory_percent;
      if (h->second.compute_span) c.compute_span = span_minutes(*h->second.compute_span);
      if (h->second.memory_span) c.memory_span = span_minutes(*h->second.memory_span);
    }
    if (src.configmap) c.configmap = decide::format_gpu(*src.configmap);
    if (o.choice.source != decide::ProactiveSource::kNone) {
      c.value = decide::format_gpu(o.choice.gpu) + (o.choice.kept ? " (kept: the history cannot be refreshed)" : "");
      c.source = decide::source_name(o.choice.source);
      c.peak = o.peak;
    }
    c.reason = o.reason;
    p.containers.push_back(std::move(c));
  }
  p.result = out.result;
  if (out.requests_changed) p.would_write = out.after;
  if (p.queried) next_history_read(ctx, view, g, read, allocations, p);
  e.proactive = std::move(p);
}

}  // namespace kubex::engine
