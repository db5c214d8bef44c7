#include "decide/admission/rightsizing_info.h"

#include <map>
#include <nlohmann/json.hpp>
#include <optional>

namespace kubex::decide {

namespace {

struct Entry {
  std::optional<std::string> from;    // nullopt: written as null
  std::string to;
  std::optional<std::string> source;  // resource entries only
};

constexpr const char* kKaiKeys[] = {"scheduler", "queue"};

// A string member, or `fallback` when it is absent or not a string (a damaged annotation never throws).
std::string text(const nlohmann::json& obj, const char* key, const char* fallback) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string(fallback);
}

std::optional<std::string> optional_text(const nlohmann::json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

// An edit's entry: `from` from the first change seen (kept from `existing`), `to` from the last.
void record(std::map<std::string, Entry>& entries, const std::string& key, const Edit& e) {
  auto [it, inserted] = entries.try_emplace(key);
  if (inserted) it->second.from = e.from;
  it->second.to = e.to;
}

nlohmann::ordered_json entry_json(const Entry& e) {
  nlohmann::ordered_json out;
  out["from"] = e.from ? nlohmann::ordered_json(*e.from) : nlohmann::ordered_json(nullptr);
  out["to"] = e.to;
  if (e.source) out["source"] = *e.source;
  return out;
}

}  // namespace

std::string info_key(Resource r, Usage u) {
  if (r == Resource::kGpu && u == Usage::kLimit) return change_resource_name(r, u);  // "gpu-limit" (KAI-2)
  return u == Usage::kLimit ? std::string("limits.") + resource_name(r) : std::string(resource_name(r));
}

std::string rightsizing_info_json(std::string_view mode, const std::string& strategy,
                                  const std::vector<Change>& changes, const std::vector<Edit>& edits,
                                  std::string_view existing) {
  std::map<std::string, std::map<std::string, Entry>> containers;
  std::map<std::string, Entry> kai;
  if (!existing.empty()) {
    const nlohmann::json old = nlohmann::json::parse(existing, nullptr, false);
    if (old.is_object() && old.contains("containers") && old["containers"].is_object()) {
      for (const auto& [name, resources] : old["containers"].items()) {
        if (!resources.is_object()) continue;
        for (const auto& [key, e] : resources.items()) {
          if (!e.is_object()) continue;
          if (key == kVllmInfoKey) {
            containers[name][key] = {optional_text(e, "from"), text(e, "to", ""), std::nullopt};
          } else {
            containers[name][key] = {text(e, "from", kUnspecified), text(e, "to", ""), text(e, "source", "")};
          }
        }
      }
    }
    if (old.is_object() && old.contains("kai") && old["kai"].is_object()) {
      for (const char* key : kKaiKeys) {
        auto e = old["kai"].find(key);
        if (e != old["kai"].end() && e->is_object()) {
          kai[key] = {optional_text(*e, "from"), text(*e, "to", ""), std::nullopt};
        }
      }
    }
  }
  for (const Change& c : changes) {
    auto [it, inserted] = containers[c.container].try_emplace(info_key(c.resource, c.usage));
    Entry& e = it->second;
    if (inserted) e.from = c.from;
    e.to = c.to;
    e.source = c.source;
  }
  for (const Edit& e : edits) {
    if (e.target == EditTarget::kVllmGpuMemoryUtilization) {
      record(containers[e.container], kVllmInfoKey, e);
    } else {
      record(kai, edit_resource_name(e.target), e);
    }
  }
  nlohmann::ordered_json doc;
  doc["mode"] = mode;
  doc["strategy"] = strategy;
  nlohmann::ordered_json& cs = doc["containers"];
  cs = nlohmann::ordered_json::object();
  for (const auto& [name, resources] : containers) {
    nlohmann::ordered_json& c = cs[name];
    for (const auto& [key, e] : resources) c[key] = entry_json(e);
  }
  if (!kai.empty()) {
    nlohmann::ordered_json& k = doc["kai"];
    for (const char* key : kKaiKeys) {
      if (auto it = kai.find(key); it != kai.end()) k[key] = entry_json(it->second);
    }
  }
  return doc.dump();
}

}  // namespace kubex::decide
