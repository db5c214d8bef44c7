#include "decide/proactive/history_schedule.h"

#include <algorithm>
#include <ctime>

namespace kubex::decide {

std::optional<common::TimePoint> history_covered_at(const std::map<std::string, ContainerHistory>& containers,
                                                    const std::map<std::string, Allocation>& allocations,
                                                    common::TimePoint read_at,
                                                    std::optional<common::TimePoint> oldest_pod_start) {
  const common::Duration need = kMinHistorySpan;
  std::optional<common::TimePoint> latest;  // the last signal to reach the span
  bool waiting = false;                     // a signal is still under the span
  for (const auto& [name, a] : allocations) {
    if (a.gpu <= 0) continue;  // PRO-4: no history is read for it
    auto it = containers.find(name);
    const ContainerHistory none;
    const ContainerHistory& h = it == containers.end() ? none : it->second;
    for (const auto& span : {h.compute_span, h.memory_span}) {
      common::TimePoint at;
      if (span) {
        if (*span >= need) continue;
        at = read_at + (need - *span);
      } else {
        if (!oldest_pod_start || *oldest_pod_start + need <= read_at) return std::nullopt;  // cannot be told
        at = *oldest_pod_start + need;
      }
      waiting = true;
      latest = latest ? std::max(*latest, at) : at;
    }
  }
  if (!waiting) return std::nullopt;
  return *latest + kCatchUpMargin;
}

std::optional<CatchUpRead> next_catch_up(const std::map<std::string, common::TimePoint>& due,
                                         common::TimePoint next_reload, std::optional<common::TimePoint> last_read) {
  // Workloads the regular reload serves (due within the slack before it, or after it) are left to it.
  std::optional<common::TimePoint> earliest;
  for (const auto& [w, t] : due) {
    if (t + kCatchUpSlack >= next_reload) continue;
    earliest = earliest ? std::min(*earliest, t) : t;
  }
  if (!earliest) return std::nullopt;
  // The read waits for every workload due within the slack after the earliest, and keeps the minimum gap.
  common::TimePoint at = *earliest;
  for (const auto& [w, t] : due) {
    if (t <= *earliest + kCatchUpSlack) at = std::max(at, t);
  }
  if (last_read) at = std::max(at, *last_read + kCatchUpMinGap);
  if (at + kCatchUpSlack >= next_reload) return std::nullopt;  // the reload comes as soon
  CatchUpRead out{at, {}};
  for (const auto& [w, t] : due) {
    if (t <= at) out.workloads.push_back(w);  // std::map: sorted
  }
  return out;
}

namespace {

std::string duration_text(std::chrono::seconds s) {
  const auto m = (s.count() + 59) / 60;  // rounded up: "in 1m" for 20s
  if (m < 60) return std::to_string(m) + "m";
  return std::to_string(m / 60) + "h" + (m % 60 ? std::to_string(m % 60) + "m" : "");
}

}  // namespace

std::string catch_up_text(std::optional<std::chrono::seconds> have, common::TimePoint at, common::TimePoint now) {
  const std::time_t t = std::chrono::system_clock::to_time_t(
      std::chrono::time_point_cast<std::chrono::system_clock::duration>(at));
  std::tm tm{};
  gmtime_r(&t, &tm);
  char hhmm[8];
  std::strftime(hhmm, sizeof hhmm, "%H:%M", &tm);
  const auto in = std::chrono::duration_cast<std::chrono::seconds>(std::max(at - now, common::Duration::zero()));
  const std::string need = duration_text(std::chrono::duration_cast<std::chrono::seconds>(kMinHistorySpan));
  return (have ? std::to_string(have->count() / 60) + "m of " + need + " needed"
               : "no samples yet, " + need + " needed") +
         "; kubex reads it again at " + hhmm + " UTC (in " + duration_text(in) + ")";
}

}  // namespace kubex::decide
