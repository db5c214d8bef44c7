// When the proactive controller reads a workload's history before the regular reload (SPEC §7 PRO-1, PRO-2; issue 34
// item 11). A workload whose history is shorter than PRO-2's span (kMinHistorySpan) gets no value; left to the
// regular reload (every recommendationReloadInterval) its first value would land up to a whole interval after its
// history became long enough. These pure decisions say when each such workload's history first covers the span and
// when the controller must read next, and for which workloads, so that the value lands when the history allows it.
//
// Batching (PRO-2): a catch-up read is one batched read of every workload it serves, never one query per workload.
// Grouping: a read waits up to kCatchUpSlack after the earliest due workload, serving every workload due by then;
// a policy never reads more often than once per kCatchUpMinGap; a workload due within kCatchUpSlack of the next
// regular reload is left to that reload. No I/O: `now` and every time are passed in.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "decide/proactive/history.h"

namespace kubex::decide {

inline constexpr std::chrono::seconds kCatchUpSlack{60};   // a read waits ≤ 1m for the workloads due after the first
inline constexpr std::chrono::seconds kCatchUpMinGap{60};  // ≤ one catch-up read per policy per minute
inline constexpr std::chrono::seconds kCatchUpMargin{5};   // spans come back in whole seconds: read a little after

// When the history of a workload first covers kMinHistorySpan for both signals of every container holding a GPU,
// from what a read at `read_at` returned (`containers`, by container; absent = no samples). A signal with a span
// reaches it at read_at + (1h − span): its oldest sample stays where it is as time passes. A signal without samples
// is taken to start with the workload's oldest running pod (`oldest_pod_start`) when that pod is younger than the
// span (its first samples are a scrape away). nullopt: nothing to wait for (every span already covers it, no
// container holds a GPU), or it cannot be told (no samples from a pod that ran longer than the span): the regular
// reload reads it then. The result includes kCatchUpMargin.
std::optional<common::TimePoint> history_covered_at(const std::map<std::string, ContainerHistory>& containers,
                                                    const std::map<std::string, Allocation>& allocations,
                                                    common::TimePoint read_at,
                                                    std::optional<common::TimePoint> oldest_pod_start);

struct CatchUpRead {
  common::TimePoint at{};              // when to read
  std::vector<std::string> workloads;  // the workloads that read serves (sorted)
};

// The next catch-up read of one policy. `due`: workload -> history_covered_at. `next_reload`: the policy's regular
// reload (it reads every workload). `last_read`: the policy's last read, full or partial (the minimum gap counts from
// it). nullopt: nothing to read before the regular reload.
std::optional<CatchUpRead> next_catch_up(const std::map<std::string, common::TimePoint>& due,
                                         common::TimePoint next_reload, std::optional<common::TimePoint> last_read);

// `kubex explain`'s line for a workload without enough history: "37m of 1h needed; kubex reads it again at 14:23 UTC
// (in 23m)". `have`: the shortest span read (nullopt: no samples yet).
std::string catch_up_text(std::optional<std::chrono::seconds> have, common::TimePoint at, common::TimePoint now);

}  // namespace kubex::decide
