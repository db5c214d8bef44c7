#include "decide/admission/pause.h"

#include <utility>

#include "api/keys.h"
#include "common/time_format.h"

namespace kubex::decide {

bool pause_value_active(std::string_view value, common::TimePoint now) {
  if (value == "infinite") return true;
  auto t = common::parse_rfc3339(value);
  if (!t) return true;
  return *t > now;
}

std::optional<std::string> paused_by(const PauseSources& sources, common::TimePoint now) {
  const std::pair<const AnnotationMap*, const char*> order[] = {{sources.pod, "pod"},
                                                                {sources.owner, "owner"},
                                                                {sources.owner_template, "owner template"},
                                                                {sources.ns, "namespace"}};
  for (const auto& [map, name] : order) {
    if (map == nullptr) continue;
    auto it = map->find(api::keys::kPauseUntil);
    if (it != map->end() && pause_value_active(it->second, now)) return std::string(name);
  }
  return std::nullopt;
}

}  // namespace kubex::decide
