// RFC 3339 timestamps as Kubernetes writes them (metav1.Time: seconds, UTC, "Z"; MicroTime: 6 digits).
#pragma once

#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/result.h"

namespace kubex::common {

// "2026-11-29T22:24:48Z"
std::string format_rfc3339(TimePoint t);
// "2026-11-29T22:24:48.123456Z"
std::string format_rfc3339_micro(TimePoint t);
// "2026-11-29T22:24:48.123Z" (log timestamps)
std::string format_rfc3339_milli(TimePoint t);
// Accepts "Z" or "+hh:mm"/"-hh:mm" offsets and optional fractional seconds.
Result<TimePoint> parse_rfc3339(std::string_view s);

}  // namespace kubex::common
