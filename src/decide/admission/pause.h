// ADM-4 pause: `rightsizing.kubex.ai/pause-until` on the pod, the owner, the owner's pod template or the
// namespace, holding an RFC 3339 time in the future or `infinite`. An unparseable value counts as paused.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"

namespace kubex::decide {

// True when a pause-until value pauses at `now`: "infinite", a time after `now`, or anything unparseable.
bool pause_value_active(std::string_view value, common::TimePoint now);

using AnnotationMap = std::map<std::string, std::string>;

struct PauseSources {
  const AnnotationMap* pod = nullptr;
  const AnnotationMap* owner = nullptr;
  const AnnotationMap* owner_template = nullptr;
  const AnnotationMap* ns = nullptr;
};

// Which source pauses ("pod", "owner", "owner template", "namespace", in that order), or nullopt.
std::optional<std::string> paused_by(const PauseSources& sources, common::TimePoint now);

}  // namespace kubex::decide
