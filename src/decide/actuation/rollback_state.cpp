// RBK-1: the owner annotation rollback-state, the original form, lastApplied and the history.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <tuple>

#include "api/keys.h"
#include "common/time_format.h"
#include "decide/actuation/rollback.h"

namespace kubex::decide::actuation {

namespace {

using nlohmann::json;

const json& member(const json& obj, const char* key) {
  static const json kNull;  // immutable
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

std::optional<std::string> string_of(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  return std::nullopt;
}

// A quantity as written: a string as is, a number in its JSON form ("1", "0.5").
std::optional<std::string> quantity_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) return v.dump();
  return std::nullopt;
}

json nullable(const std::optional<std::string>& v) {
  return v ? json(*v) : json(nullptr);
}

json gpu_map(const std::optional<std::string>& v) {
  json out = json::object();
  if (v) out[api::keys::kGpuResource] = *v;
  return out;
}

void read_containers(const json& list, std::map<std::string, OriginalContainer>& out) {
  if (!list.is_array()) return;
  for (const json& c : list) {
    const std::optional<std::string> name = string_of(member(c, "name"));
    if (!name) continue;
    const json& res = member(c, "resources");
    OriginalContainer oc{quantity_text(member(member(res, "requests"), api::keys::kGpuResource)),
                         quantity_text(member(member(res, "limits"), api::keys::kGpuResource))};
    if (oc.gpu_request || oc.gpu_limit) out.emplace(*name, std::move(oc));
  }
}

}  // namespace

const char* phase_name(Phase p) {
  return p == Phase::kRollingBack ? "RollingBack" : "Managed";
}

common::Result<RollbackState> parse_rollback_state(std::string_view text) {
  const json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded()) return common::fail("rollback-state: not valid JSON");
  if (!doc.is_object()) return common::fail("rollback-state: must be a JSON object");
  RollbackState s;
  const std::optional<std::string> phase = string_of(member(doc, "phase"));
  if (phase == "Managed") {
    s.phase = Phase::kManaged;
  } else if (phase == "RollingBack") {
    s.phase = Phase::kRollingBack;
  } else {
    return common::fail("must be \"Managed\" or \"RollingBack\"", "phase");
  }
  s.strategy = string_of(member(doc, "strategy")).value_or("");
  const json& original = member(doc, "original");
  if (auto sched = string_of(member(original, "schedulerName"))) s.original.scheduler_name = *sched;
  s.original.queue = string_of(member(original, "queue"));
  s.original.gpu_fraction = string_of(member(original, "gpuFraction"));
  const json& containers = member(original, "containers");
  if (containers.is_object()) {
    for (auto it = containers.begin(); it != containers.end(); ++it) {
      s.original.containers[it.key()] = {
          quantity_text(member(member(it.value(), "requests"), api::keys::kGpuResource)),
          quantity_text(member(member(it.value(), "limits"), api::keys::kGpuResource))};
    }
  }
  const json& applied = member(doc, "lastApplied");
  if (applied.is_object()) {
    for (auto it = applied.begin(); it != applied.end(); ++it) {
      if (auto v = quantity_text(it.value())) s.last_applied[it.key()] = *v;
    }
  }
  const json& history = member(doc, "history");
  if (history.is_array()) {
    for (const json& e : history) {
      if (!e.is_object()) continue;
      auto field = [&](const char* k) { return string_of(member(e, k)).value_or(""); };
      s.history.push_back(
          {field("at"), field("container"), field("from"), field("to"), field("mode"), field("source")});
    }
    if (s.history.size() > kMaxHistory) s.history.erase(s.history.begin(), s.history.end() - kMaxHistory);
  }
  return s;
}

std::string format_rollback_state(const RollbackState& s) {
  json containers = json::object();
  for (const auto& [name, c] : s.original.containers) {
    containers[name] = {{"requests", gpu_map(c.gpu_request)}, {"limits", gpu_map(c.gpu_limit)}};
  }
  json history = json::array();
  for (const HistoryEntry& e : s.history) {
    history.push_back({{"at", e.at},
                       {"container", e.container},
                       {"from", e.from},
                       {"to", e.to},
                       {"mode", e.mode},
                       {"source", e.source}});
  }
  json applied = json::object();
  for (const auto& [name, v] : s.last_applied) applied[name] = v;
  json doc = {{"phase", phase_name(s.phase)},
              {"strategy", s.strategy},
              {"original",
               {{"schedulerName", s.original.scheduler_name},
                {"queue", nullable(s.original.queue)},
                {"gpuFraction", nullable(s.original.gpu_fraction)},
                {"containers", std::move(containers)}}},
              {"lastApplied", std::move(applied)},
              {"history", std::move(history)}};
  return doc.dump();
}

namespace {

// Admission recorded each edit's `from` in pod-rightsizing-info (ADM-16): put those values back. A GPU `from`
// that is a whole number was nvidia.com/gpu (requests and limits), a fraction was the gpu-fraction annotation,
// "unspecified" was nothing.
void undo_admission(Original& o, const json& info) {
  const json& kai = member(info, "kai");
  if (member(kai, "scheduler").is_object()) {
    if (auto from = string_of(member(member(kai, "scheduler"), "from")); from && !from->empty()) {
      o.scheduler_name = *from;
    }
  }
  if (member(kai, "queue").is_object()) o.queue = string_of(member(member(kai, "queue"), "from"));
  const json& containers = member(info, "containers");
  if (!containers.is_object()) return;
  for (auto it = containers.begin(); it != containers.end(); ++it) {
    const json& gpu = member(it.value(), "gpu");
    if (!gpu.is_object()) continue;
    const std::optional<std::string> from = string_of(member(gpu, "from"));
    if (!from) continue;
    o.containers.erase(it.key());
    if (*from == "unspecified") {
      if (string_of(member(gpu, "to")).value_or("").find('.') != std::string::npos) o.gpu_fraction.reset();
    } else if (from->find('.') != std::string::npos) {
      o.gpu_fraction = *from;
    } else {
      o.containers[it.key()] = OriginalContainer{*from, *from};
      o.gpu_fraction.reset();
    }
  }
}

}  // namespace

Original original_from_template(const json& pod) {
  Original o;
  const json& meta = member(pod, "metadata");
  const json& spec = member(pod, "spec");
  if (auto sched = string_of(member(spec, "schedulerName")); sched && !sched->empty())
    o.scheduler_name = *sched;
  o.queue = string_of(member(member(meta, "labels"), api::keys::kKaiQueueLabel));
  o.gpu_fraction = string_of(member(member(meta, "annotations"), api::keys::kGpuFraction));
  read_containers(member(spec, "initContainers"), o.containers);
  read_containers(member(spec, "containers"), o.containers);
  if (auto info = string_of(member(member(meta, "annotations"), api::keys::kPodRightsizingInfo))) {
    const json doc = json::parse(*info, nullptr, false);
    if (doc.is_object()) undo_admission(o, doc);
  }
  return o;
}

std::map<std::string, std::string> applied_of(const Allocation& a) {
  std::map<std::string, std::string> out;
  for (const GpuAllocation& g : a) out.emplace(g.container, format_gpu(g.value));
  return out;
}

RollbackState initial_state(std::string strategy, const json& pod_or_template) {
  RollbackState s;
  s.strategy = std::move(strategy);
  s.original = original_from_template(pod_or_template);
  s.last_applied = applied_of(gpu_allocation(read_pod_resources(pod_or_template)));
  return s;
}

HistorySource history_source(std::string_view info) {
  HistorySource out;
  const json doc = json::parse(info, nullptr, false);
  if (!doc.is_object()) return out;
  if (auto mode = string_of(member(doc, "mode"))) out.mode = *mode;
  const json& containers = member(doc, "containers");
  if (containers.is_object()) {
    for (auto it = containers.begin(); it != containers.end(); ++it) {
      if (auto src = string_of(member(member(it.value(), "gpu"), "source"))) out.sources[it.key()] = *src;
    }
  }
  return out;
}

bool append_history(RollbackState& s, const Allocation& live, const HistorySource& src,
                    common::TimePoint now) {
  bool changed = false;
  for (const auto& [container, to] : applied_of(live)) {
    auto it = s.last_applied.find(container);
    const std::string from = it == s.last_applied.end() ? "unspecified" : it->second;
    if (from == to) continue;
    auto source = src.sources.find(container);
    const bool known = source != src.sources.end();
    s.history.push_back(
        {common::format_rfc3339(now), container, from, to, src.mode, known ? source->second : "none"});
    s.last_applied[container] = to;
    changed = true;
  }
  if (s.history.size() > kMaxHistory) s.history.erase(s.history.begin(), s.history.end() - kMaxHistory);
  return changed;
}

std::optional<std::size_t> history_pod(const std::vector<PodFacts>& pods) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < pods.size(); ++i) {
    const PodFacts& p = pods[i];
    if (!p.controller_owned || p.terminating || p.phase != "Running") continue;
    if (!best || std::tie(p.created, p.name) > std::tie(pods[*best].created, pods[*best].name)) best = i;
  }
  return best;
}

}  // namespace kubex::decide::actuation
