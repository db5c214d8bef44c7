// ACT-9: the actuation-state owner annotation (ACT-5 refusals, ACT-7 back-off).
#include "decide/actuation/actuation_state.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/time_format.h"

namespace kubex::decide::actuation {

namespace {

using nlohmann::json;

std::optional<common::TimePoint> time_of(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return std::nullopt;
  auto t = common::parse_rfc3339(it->get<std::string>());
  if (!t) return std::nullopt;
  return *t;
}

common::TimePoint floor_seconds(common::TimePoint t) {
  return std::chrono::floor<std::chrono::seconds>(t);
}

common::TimePoint ceil_seconds(common::TimePoint t) {
  return std::chrono::ceil<std::chrono::seconds>(t);
}

constexpr int kMaxStep = 62;  // loop_guard() stops counting there

}  // namespace

common::Result<ActuationState> parse_actuation_state(std::string_view text) {
  const json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded()) return common::fail("actuation-state: not valid JSON");
  if (!doc.is_object()) return common::fail("actuation-state: must be a JSON object");
  ActuationState s;
  if (auto it = doc.find("pdbBlocked"); it != doc.end() && it->is_object()) {
    for (const auto& [uid, desired] : it->items()) {
      if (!uid.empty() && desired.is_string()) s.pdb_blocked.emplace(uid, desired.get<std::string>());
    }
  }
  if (auto it = doc.find("loopGuard"); it != doc.end() && it->is_object()) {
    const json& g = *it;
    auto k = g.find("k");
    auto desired = g.find("desired");
    if (k != g.end() && k->is_number_integer() && k->get<std::int64_t>() >= 1 && desired != g.end() &&
        desired->is_string()) {
      s.guard.desired = desired->get<std::string>();
      s.guard.step = static_cast<int>(std::min<std::int64_t>(k->get<std::int64_t>(), kMaxStep));
      s.guard.until = time_of(g, "until");
      s.guard.reacted_to = time_of(g, "reactedTo");
    }
  }
  if (auto it = doc.find("harmGuard"); it != doc.end() && it->is_object()) {
    for (const auto& [container, f] : it->items()) {
      if (!f.is_object()) continue;
      const json floor = f.value("floor", json());
      auto until = time_of(f, "until");
      if (!floor.is_string() || !until) continue;
      auto v = parse_decimal(floor.get<std::string>());
      if (!v || *v <= 0) continue;
      s.harm_floors[container] = HarmFloor{round_up(*v), ceil_seconds(*until)};
    }
  }
  return s;
}

std::string format_actuation_state(const ActuationState& s) {
  if (s.empty()) return "";
  json doc = json::object();
  if (!s.pdb_blocked.empty()) {
    json p = json::object();
    for (const auto& [uid, desired] : s.pdb_blocked) p[uid] = desired;
    doc["pdbBlocked"] = std::move(p);
  }
  if (s.guard.step >= 1) {
    json g = json::object();
    g["desired"] = s.guard.desired;
    g["k"] = s.guard.step;
    if (s.guard.until) g["until"] = common::format_rfc3339(ceil_seconds(*s.guard.until));
    if (s.guard.reacted_to) g["reactedTo"] = common::format_rfc3339(floor_seconds(*s.guard.reacted_to));
    doc["loopGuard"] = std::move(g);
  }
  if (!s.harm_floors.empty()) {
    json h = json::object();
    for (const auto& [container, f] : s.harm_floors) {
      h[container] = {{"floor", format_gpu(f.floor)}, {"until", common::format_rfc3339(ceil_seconds(f.until))}};
    }
    doc["harmGuard"] = std::move(h);
  }
  return doc.dump();  // nlohmann's objects keep their keys sorted
}

ActuationState read_actuation_state(const std::optional<std::string>& text, const std::vector<std::string>& pod_uids) {
  if (!text) return {};
  auto parsed = parse_actuation_state(*text);
  if (!parsed) return {};  // VAL-7's spirit: unreadable memory is no memory (and is rewritten)
  ActuationState s = std::move(*parsed);
  std::erase_if(s.pdb_blocked, [&](const auto& e) {
    return std::find(pod_uids.begin(), pod_uids.end(), e.first) == pod_uids.end();
  });
  // The times as format_actuation_state() writes them, so a state read back compares equal.
  if (s.guard.until) s.guard.until = ceil_seconds(*s.guard.until);
  if (s.guard.reacted_to) s.guard.reacted_to = floor_seconds(*s.guard.reacted_to);
  return s;
}

ActuationState actuation_state_of(const std::set<std::string>& pdb_keys, const GuardState& guard,
                                  const HarmFloors& harm_floors) {
  ActuationState s;
  s.harm_floors = harm_floors;
  for (const std::string& key : pdb_keys) {
    const auto bar = key.find('|');
    if (bar == std::string::npos || bar == 0) continue;
    s.pdb_blocked.emplace(key.substr(0, bar), key.substr(bar + 1));
  }
  if (guard.step >= 1) s.guard = guard;
  return s;
}

std::set<std::string> pdb_keys_of(const ActuationState& s) {
  std::set<std::string> out;
  for (const auto& [uid, desired] : s.pdb_blocked) out.insert(pdb_key(uid, desired));
  return out;
}

std::optional<std::optional<std::string>> actuation_state_write(const std::optional<std::string>& current,
                                                                 const ActuationState& next) {
  std::optional<std::string> value;
  if (!next.empty()) value = format_actuation_state(next);
  if (value == current) return std::nullopt;
  return value;
}

}  // namespace kubex::decide::actuation
