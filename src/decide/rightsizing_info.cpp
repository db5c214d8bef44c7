#include "decide/rightsizing_info.h"

#include <map>
#include <nlohmann/json.hpp>

namespace kubex::decide {

namespace {

struct Entry {
  std::string from, to, source;
};

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
          containers[name][key] = {e.value("from", std::string(kUnspecified)), e.value("to", std::string()),
                                   e.value("source", std::string())};
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
