#include "decide/rightsizing_info.h"

#include <map>
#include <nlohmann/json.hpp>

namespace kubex::decide {

namespace {

struct Entry {
  std::string from, to, source;
};

// A string member, or `fallback` when it is absent or not a string (a damaged annotation never throws).
std::string text(const nlohmann::json& obj, const char* key, const char* fallback) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string(fallback);
}

}  // namespace

std::string info_key(Resource r, Usage u) {
  return u == Usage::kLimit ? std::string("limits.") + resource_name(r) : std::string(resource_name(r));
}

std::string rightsizing_info_json(std::string_view mode, const std::string& strategy,
                                  const std::vector<Change>& changes, std::string_view existing) {
  std::map<std::string, std::map<std::string, Entry>> containers;
  if (!existing.empty()) {
    const nlohmann::json old = nlohmann::json::parse(existing, nullptr, false);
    if (old.is_object() && old.contains("containers") && old["containers"].is_object()) {
      for (const auto& [name, resources] : old["containers"].items()) {
        if (!resources.is_object()) continue;
        for (const auto& [key, e] : resources.items()) {
          if (!e.is_object()) continue;
          containers[name][key] = {text(e, "from", kUnspecified), text(e, "to", ""), text(e, "source", "")};
        }
      }
    }
  }
  for (const Change& c : changes) {
    Entry& e = containers[c.container][info_key(c.resource, c.usage)];
    if (e.from.empty()) e.from = c.from;
    e.to = c.to;
    e.source = c.source;
  }
  nlohmann::ordered_json doc;
  doc["mode"] = mode;
  doc["strategy"] = strategy;
  nlohmann::ordered_json& cs = doc["containers"];
  cs = nlohmann::ordered_json::object();
  for (const auto& [name, resources] : containers) {
    nlohmann::ordered_json& c = cs[name];
    for (const auto& [key, e] : resources) c[key] = {{"from", e.from}, {"to", e.to}, {"source", e.source}};
  }
  return doc.dump();
}

}  // namespace kubex::decide
