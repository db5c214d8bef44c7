#include "act/status.h"

#include <algorithm>

#include "common/time_format.h"

namespace kubex::act {

using nlohmann::json;

std::vector<std::string> apply_status_change(json& status, const StatusChange& change,
                                             std::int64_t generation, common::TimePoint now) {
  std::vector<std::string> transitioned;
  if (!status.is_object()) status = json::object();
  json& conds = status["conditions"];
  if (!conds.is_array()) conds = json::array();
  // Entries that are not objects with a type are dropped: the list is a map keyed by type.
  json kept = json::array();
  for (auto& c : conds) {
    if (!c.is_object() || !c.contains("type") || !c["type"].is_string()) continue;
    std::string type = c["type"].get<std::string>();
    if (std::find(change.remove.begin(), change.remove.end(), type) != change.remove.end()) continue;
    kept.push_back(std::move(c));
  }
  conds = std::move(kept);
  std::string stamp = common::format_rfc3339(now);
  for (const auto& u : change.set) {
    auto it = std::find_if(conds.begin(), conds.end(), [&](const json& c) { return c["type"] == u.type; });
    if (it != conds.end()) {
      auto keep = change.keep_reasons.find(u.type);
      const json* reason = it->contains("reason") ? &(*it)["reason"] : nullptr;
      if (keep != change.keep_reasons.end() && reason && reason->is_string() &&
          std::find(keep->second.begin(), keep->second.end(), reason->get<std::string>()) !=
              keep->second.end())
        continue;
    }
    if (it == conds.end()) {
      conds.push_back({{"type", u.type}, {"lastTransitionTime", stamp}});
      it = std::prev(conds.end());
      transitioned.push_back(u.type);
    } else if (it->value("status", "") != u.status) {
      (*it)["lastTransitionTime"] = stamp;
      transitioned.push_back(u.type);
    }
    (*it)["status"] = u.status;
    (*it)["reason"] = u.reason;
    // API-1: message <= 32768 characters.
    (*it)["message"] = u.message.size() > 32768 ? u.message.substr(0, 32765) + "..." : u.message;
    (*it)["observedGeneration"] = generation;
    if (!it->contains("lastTransitionTime")) (*it)["lastTransitionTime"] = stamp;
  }
  std::sort(conds.begin(), conds.end(), [](const json& a, const json& b) {
    return a["type"].get<std::string>() < b["type"].get<std::string>();
  });
  if (change.fields.is_object() && !change.fields.empty()) status.merge_patch(change.fields);
  status["observedGeneration"] = generation;
  return transitioned;
}

std::vector<ConditionUpdate> conditions_of(const json& status) {
  std::vector<ConditionUpdate> out;
  if (!status.is_object() || !status.contains("conditions") || !status["conditions"].is_array()) return out;
  auto text = [](const json& c, const char* k) {
    auto it = c.find(k);
    return it != c.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  for (const auto& c : status["conditions"]) {
    if (!c.is_object() || !c.contains("type") || !c["type"].is_string()) continue;
    out.push_back({text(c, "type"), text(c, "status"), text(c, "reason"), text(c, "message")});
  }
  return out;
}

kube::KResult<StatusResult> update_status(kube::Client& client, const std::string& object_path,
                                          const StatusChange& change, common::TimePoint now, int attempts) {
  kube::ApiStatus last;
  for (int i = 0; i < attempts; ++i) {
    auto cur = client.get(object_path);
    if (!cur) return std::unexpected(cur.error());
    json obj = std::move(*cur);
    std::int64_t generation = 0;
    if (obj.contains("metadata") && obj["metadata"].is_object()) {
      generation = obj["metadata"].value("generation", std::int64_t{0});
    }
    StatusResult result;
    if (change.generation && *change.generation != generation) {
      result.stale = true;
      return result;
    }
    json before = obj.contains("status") ? obj["status"] : json();
    json status = before;
    result.previous = conditions_of(before);
    result.transitioned = apply_status_change(status, change, generation, now);
    if (status == before) return result;
    obj["status"] = status;
    auto res = client.update(object_path + "/status", obj);
    if (res) {
      result.written = true;
      return result;
    }
    if (!res.error().conflict()) return std::unexpected(res.error());
    last = res.error();
  }
  return std::unexpected(last);
}

}  // namespace kubex::act
