#include "decide/proactive/owner_values.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/time_format.h"
#include "decide/actuation/rollback.h"
#include "decide/desired_annotations.h"

namespace kubex::decide {

namespace {

using nlohmann::json;

void read_strings(const json& doc, const char* key, std::map<std::string, std::string>& out) {
  auto it = doc.find(key);
  if (it == doc.end() || !it->is_object()) return;
  for (auto e = it->begin(); e != it->end(); ++e) {
    if (e.value().is_string()) out[e.key()] = e.value().get<std::string>();
  }
}

// The stored annotation as JSON, for a comparison that ignores formatting (null: absent or unreadable).
json stored_json(const std::optional<std::string>& text) {
  if (!text) return nullptr;
  json v = json::parse(*text, nullptr, false);
  return v.is_discarded() ? json(nullptr) : v;
}

ProactiveState without_time(ProactiveState s) {
  s.updated_at.clear();
  return s;
}

}  // namespace

std::optional<ProactiveState> parse_proactive_state(std::string_view text) {
  const json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return std::nullopt;
  ProactiveState s;
  read_strings(doc, "source", s.source);
  read_strings(doc, "historySpan", s.history_span);
  read_strings(doc, "peak", s.peak);
  if (auto u = doc.find("updatedAt"); u != doc.end() && u->is_string()) s.updated_at = u->get<std::string>();
  return s;
}

std::string format_proactive_state(const ProactiveState& s) {
  json doc = {{"historySpan", s.history_span}, {"peak", s.peak}, {"source", s.source}};
  if (!s.updated_at.empty()) doc["updatedAt"] = s.updated_at;
  return doc.dump();
}

std::string span_text(std::chrono::seconds span) {
  return std::to_string(std::max<std::int64_t>(span.count(), 0) / 3600) + "h";
}

std::optional<common::TimePoint> last_allocation_transition(std::string_view rollback_state) {
  auto s = actuation::parse_rollback_state(rollback_state);
  if (!s) return std::nullopt;
  std::optional<common::TimePoint> newest;
  for (const auto& e : s->history) {
    auto t = common::parse_rfc3339(e.at);
    if (t && (!newest || *t > *newest)) newest = *t;
  }
  return newest;
}

std::vector<ContainerSources> container_sources(const std::vector<std::string>& containers, const WorkloadSources& w) {
  std::vector<ContainerSources> out;
  for (const std::string& name : containers) {
    ContainerSources src;
    src.name = name;
    if (w.strategy) {
      if (const Hundredths* v = w.configmap ? w.configmap->find({w.ns, w.kind, w.name, name}) : nullptr) {
        ProactiveValue pv = clamp_proactive(*v, *w.strategy, name);
        src.configmap = pv.gpu;
        src.configmap_clamp = pv.clamp;
      }
      if (w.history) {
        auto h = w.history->find(name);
        Allocation a;
        if (w.allocations) {
          if (auto it = w.allocations->find(name); it != w.allocations->end()) a = it->second;
        }
        src.history = history_value(h == w.history->end() ? ContainerHistory{} : h->second, a, w.headroom_percent,
                                    *w.strategy, name);
      }
    }
    out.push_back(std::move(src));
  }
  return out;
}

OwnerValues owner_values(const OwnerInput& in) {
  const std::map<std::string, Hundredths> stored =
      in.requests ? parse_desired_gpu(*in.requests).value_or(std::map<std::string, Hundredths>{})
                  : std::map<std::string, Hundredths>{};
  const std::optional<ProactiveState> stored_state = in.state ? parse_proactive_state(*in.state) : std::nullopt;
  const std::map<std::string, Hundredths> stored_limits =
      in.limits ? parse_desired_gpu(*in.limits).value_or(std::map<std::string, Hundredths>{})
                : std::map<std::string, Hundredths>{};

  OwnerValues out;
  DesiredValues requests, limits;
  ProactiveState state;
  for (const ContainerSources& c : in.containers) {
    ContainerOutcome o;
    o.name = c.name;
    std::optional<std::pair<Hundredths, ProactiveSource>> previous;
    if (auto it = stored.find(c.name); it != stored.end()) {
      ProactiveSource src = ProactiveSource::kConfigMap;  // no recorded source: it goes with its entry
      if (stored_state) {
        auto s = stored_state->source.find(c.name);
        if (s != stored_state->source.end() && s->second == source_name(ProactiveSource::kHistory)) {
          src = ProactiveSource::kHistory;
        }
      }
      previous = {it->second, src};
    }
    o.choice = choose_proactive(c.configmap, c.history, previous);
    if (c.history && c.history->outcome != HistoryOutcome::kValue) o.reason = c.history->reason;
    if (!c.history && o.choice.source != ProactiveSource::kConfigMap) o.reason = "GPU history not read";
    switch (o.choice.source) {
      case ProactiveSource::kNone: break;
      case ProactiveSource::kConfigMap:
        if (c.configmap_clamp != Clamp::kNone) {
          out.clamps.emplace_back(c.configmap_clamp == Clamp::kFloor ? "floor-clamped" : "ceiling-clamped");
        }
        // The entry sets the request; the workload's own history still knows its memory peak (KAI-2's p).
        if (c.history && c.history->outcome == HistoryOutcome::kValue) {
          o.peak = format_gpu(c.history->peak);
        } else if (stored_state) {
          if (auto p = stored_state->peak.find(c.name); p != stored_state->peak.end()) o.peak = p->second;
        }
        break;
      case ProactiveSource::kHistory:
        if (!o.choice.kept) {
          o.span = span_text(c.history->span);
          o.peak = format_gpu(c.history->peak);
          if (c.history->clamp != Clamp::kNone) {
            out.clamps.emplace_back(c.history->clamp == Clamp::kFloor ? "floor-clamped" : "ceiling-clamped");
          }
        } else if (stored_state) {  // a kept value keeps what it stood on
          if (auto s = stored_state->history_span.find(c.name); s != stored_state->history_span.end()) o.span = s->second;
          if (auto p = stored_state->peak.find(c.name); p != stored_state->peak.end()) o.peak = p->second;
        }
        if (o.peak.empty()) {
          if (auto l = stored_limits.find(c.name); l != stored_limits.end()) o.peak = format_gpu(l->second);
        }
        break;
    }
    if (o.choice.source != ProactiveSource::kNone) {
      const std::string gpu = format_gpu(o.choice.gpu);
      requests[c.name]["gpu"] = gpu;
      out.after[c.name] = gpu;
      out.sources[c.name] = source_name(o.choice.source);
      state.source[c.name] = source_name(o.choice.source);
      if (o.choice.source == ProactiveSource::kHistory && !o.span.empty()) state.history_span[c.name] = o.span;
      if (!o.peak.empty()) {
        state.peak[c.name] = o.peak;
        limits[c.name]["gpu"] = o.peak;
      }
    }
    out.containers.push_back(std::move(o));
  }
  std::sort(out.clamps.begin(), out.clamps.end());
  out.clamps.erase(std::unique(out.clamps.begin(), out.clamps.end()), out.clamps.end());

  if (!requests.empty()) out.requests = format_desired(requests);
  if (!limits.empty()) out.limits = format_desired(limits);
  const bool state_same = requests.empty() ? !in.state : stored_state && without_time(*stored_state) == state;
  if (!requests.empty()) {
    state.updated_at = state_same && stored_state ? stored_state->updated_at : common::format_rfc3339(in.now);
    out.state = format_proactive_state(state);
  }
  auto same = [](const std::optional<std::string>& now, const std::optional<std::string>& before) {
    if (!now) return !before;
    return before && stored_json(before) == json::parse(*now);
  };
  std::map<std::string, std::string> before_gpu;
  for (const auto& [c, v] : stored) before_gpu[c] = format_gpu(v);
  out.requests_changed = before_gpu != out.after;
  out.write = !same(out.requests, in.requests) || !same(out.limits, in.limits) || !state_same;
  out.result = out.after.empty() ? "NO_DATA" : out.requests_changed ? "RECOMMENDED" : "UNCHANGED";
  return out;
}

}  // namespace kubex::decide
