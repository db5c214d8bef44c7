// ACT-10: harm found after a downsize, and the harm-guard floors kept in actuation-state.
#include "decide/actuation/harm_guard.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "api/keys.h"
#include "common/time_format.h"
#include "decide/actuation/actuation.h"
#include "decide/actuation/rollback.h"

namespace kubex::decide::actuation {

namespace {

using nlohmann::json;

std::optional<Hundredths> gpu_of(const json& v) {
  if (!v.is_string()) return std::nullopt;
  auto d = parse_decimal(v.get<std::string>());
  if (!d || *d <= 0) return std::nullopt;
  return round_up(*d);
}

// pod-rightsizing-info's gpu changes that went down: container -> (from, to).
std::map<std::string, std::pair<Hundredths, Hundredths>> downsizes(const PodFacts& p) {
  std::map<std::string, std::pair<Hundredths, Hundredths>> out;
  auto it = p.annotations.find(api::keys::kPodRightsizingInfo);
  if (it == p.annotations.end()) return out;
  const json doc = json::parse(it->second, nullptr, false);
  if (!doc.is_object() || !doc.contains("containers") || !doc["containers"].is_object()) return out;
  for (const auto& [name, entry] : doc["containers"].items()) {
    if (!entry.is_object() || !entry.contains("gpu") || !entry["gpu"].is_object()) continue;
    const json& g = entry["gpu"];
    auto from = gpu_of(g.value("from", json()));
    auto to = gpu_of(g.value("to", json()));
    if (from && to && *to < *from) out.emplace(name, std::make_pair(*from, *to));
  }
  return out;
}

// The allocation the container had before it got `to`: the newest RBK-1 history entry that reached `to`.
std::optional<Hundredths> before_from_history(const std::vector<HistoryEntry>& history, const std::string& container,
                                              Hundredths to) {
  for (auto it = history.rbegin(); it != history.rend(); ++it) {
    if (it->container != container || it->to != format_gpu(to)) continue;
    auto from = parse_decimal(it->from);
    if (from && *from > 0 && round_up(*from) > to) return round_up(*from);
    return std::nullopt;
  }
  return std::nullopt;
}

// The signal of one container's exits that counts as harm, "" when none.
std::string harm_signal(const PodFacts::ContainerExit& e, common::TimePoint started, common::TimePoint now) {
  if (started == common::TimePoint{} || e.last_terminated > now || e.last_terminated - started > kHarmWindow) return "";
  if (e.oom) return "an out-of-memory exit";
  if (e.restarts >= 2) return std::to_string(e.restarts) + " restarts";
  return "";
}

}  // namespace

bool resized_down(const PodFacts& pod) {
  return !downsizes(pod).empty();
}

bool crashing(const PodFacts& pod) {
  return std::any_of(pod.exits.begin(), pod.exits.end(),
                     [](const PodFacts::ContainerExit& e) { return e.oom || e.restarts >= 2; });
}

std::vector<Harm> find_harm(const std::vector<PodFacts>& pods, const std::vector<HistoryEntry>& history,
                            bool predecessor_crashing, common::TimePoint now) {
  std::vector<Harm> out;
  if (predecessor_crashing) return out;
  for (const PodFacts& p : pods) {
    if (p.finished() || p.terminating || p.exits.empty()) continue;
    const common::TimePoint started = p.started == common::TimePoint{} ? p.created : p.started;
    std::string signal;
    for (const auto& e : p.exits) {
      signal = harm_signal(e, started, now);
      if (!signal.empty()) break;
    }
    if (signal.empty()) continue;
    for (const auto& [container, change] : downsizes(p)) {
      const Hundredths floor = before_from_history(history, container, change.second).value_or(change.first);
      out.push_back({p.name, container, floor, change.second, signal});
    }
  }
  return out;
}

HarmFloors merge_floors(const HarmFloors& current, const std::vector<Harm>& found, common::TimePoint now) {
  HarmFloors out;
  for (const auto& [c, f] : current) {
    if (f.until > now) out.emplace(c, f);
  }
  const common::TimePoint until = std::chrono::ceil<std::chrono::seconds>(now + kHarmFloorKept);
  for (const Harm& h : found) {
    auto [it, inserted] = out.try_emplace(h.container, HarmFloor{h.from, until});
    if (!inserted && it->second.floor < h.from) it->second = HarmFloor{h.from, until};
  }
  return out;
}

HarmStep harm_step(const HarmFloors& remembered, const std::vector<Harm>& found,
                   const std::optional<std::string_view>& owner_state, bool dry_run, common::TimePoint now) {
  HarmStep out;
  out.floors = merge_floors(remembered, found, now);
  for (const Harm& h : found) {
    if (std::find(out.harmed.begin(), out.harmed.end(), h.pod) == out.harmed.end()) out.harmed.push_back(h.pod);
    auto before = remembered.find(h.container);
    if (before == remembered.end() || before->second.until <= now || before->second.floor < h.from) {
      out.raised.push_back(h);
    }
  }
  if (dry_run) return out;  // ACT-8: no floor is written, so none is waited for
  for (const auto& [container, f] : out.floors) {
    auto shown = owner_state ? floor_of(*owner_state, container, now) : std::nullopt;
    if (!shown || *shown < f.floor) out.wait_for_owner = true;
  }
  return out;
}

std::optional<Hundredths> floor_of(std::string_view actuation_state, std::string_view container, common::TimePoint now) {
  if (actuation_state.find("harmGuard") == std::string_view::npos) return std::nullopt;
  const json doc = json::parse(actuation_state, nullptr, false);
  if (!doc.is_object() || !doc.contains("harmGuard") || !doc["harmGuard"].is_object()) return std::nullopt;
  auto it = doc["harmGuard"].find(std::string(container));
  if (it == doc["harmGuard"].end() || !it->is_object()) return std::nullopt;
  auto floor = gpu_of(it->value("floor", json()));
  const json until = it->value("until", json());
  if (!floor || !until.is_string()) return std::nullopt;
  auto t = common::parse_rfc3339(until.get<std::string>());
  if (!t || *t <= now) return std::nullopt;
  return *floor;
}

}  // namespace kubex::decide::actuation
