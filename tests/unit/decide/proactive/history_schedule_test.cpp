// PRO-1/PRO-2 catch-up reads (issue 34 item 11): when a workload's history first covers PRO-2's 1h span, and the next
// batched read of a policy (grouping slack 1m, minimum gap 1m, the regular reload serves what is due near it).
#include "decide/proactive/history_schedule.h"

#include <gtest/gtest.h>

#include "common/time_format.h"

using namespace kubex;
using namespace kubex::decide;
using namespace std::chrono_literals;

namespace {

const common::TimePoint T0 = *common::parse_rfc3339("2026-12-04T14:00:00Z");

ContainerHistory spans(std::optional<std::chrono::seconds> compute, std::optional<std::chrono::seconds> memory) {
  ContainerHistory h;
  h.compute_span = compute;
  h.memory_span = memory;
  if (compute) h.compute_percent = 22;
  if (memory) h.memory_percent = 30;
  return h;
}

const std::map<std::string, Allocation> kWhole = {{"app", {kOneGpu, true}}};

}  // namespace

TEST(HistoryCoveredAt, Table) {
  struct Row {
    const char* name;
    std::map<std::string, ContainerHistory> containers;
    std::map<std::string, Allocation> allocations;
    std::optional<common::TimePoint> pod_start;
    std::optional<common::TimePoint> want;  // nullopt: nothing scheduled
  };
  const std::vector<Row> rows = {
      {"37m of both: 23m later", {{"app", spans(37min, 37min)}}, kWhole, std::nullopt, T0 + 23min + 5s},
      {"the shorter signal decides", {{"app", spans(50min, 20min)}}, kWhole, std::nullopt, T0 + 40min + 5s},
      {"already covered: nothing to wait for", {{"app", spans(2h, 96h)}}, kWhole, std::nullopt, std::nullopt},
      {"59m59s: one second later, plus the margin", {{"app", spans(3599s, 2h)}}, kWhole, std::nullopt,
       T0 + 1s + 5s},
      {"no samples yet: the pod's start + 1h", {}, kWhole, T0 - 2min, T0 + 58min + 5s},
      {"no memory samples: the pod's start decides if later", {{"app", spans(50min, std::nullopt)}}, kWhole,
       T0 - 5min, T0 + 55min + 5s},
      {"no samples from a pod older than 1h: cannot be told", {}, kWhole, T0 - 2h, std::nullopt},
      {"no samples and no pod: cannot be told", {}, kWhole, std::nullopt, std::nullopt},
      {"no GPU: nothing (PRO-4)", {{"app", spans(10min, 10min)}}, {{"app", {0, false}}}, std::nullopt, std::nullopt},
      {"two containers: the later one", {{"a", spans(30min, 30min)}, {"b", spans(45min, 10min)}},
       {{"a", {25, false}}, {"b", {kOneGpu, true}}}, std::nullopt, T0 + 50min + 5s},
  };
  for (const auto& r : rows) {
    auto got = history_covered_at(r.containers, r.allocations, T0, r.pod_start);
    ASSERT_EQ(got.has_value(), r.want.has_value()) << r.name;
    if (got) {
      EXPECT_EQ(common::format_rfc3339(*got), common::format_rfc3339(*r.want)) << r.name;
    }
  }
}

TEST(NextCatchUp, Table) {
  struct Row {
    const char* name;
    std::map<std::string, common::TimePoint> due;
    common::TimePoint next_reload;
    std::optional<common::TimePoint> last_read;
    std::optional<common::TimePoint> at;  // nullopt: none before the reload
    std::vector<std::string> workloads;
  };
  const common::TimePoint reload = T0 + 1h;
  const std::vector<Row> rows = {
      {"nothing due", {}, reload, T0, std::nullopt, {}},
      {"one workload: read when it is due", {{"a", T0 + 23min}}, reload, T0, T0 + 23min, {"a"}},
      {"due within the slack: one read at the later", {{"a", T0 + 23min}, {"b", T0 + 23min + 40s}}, reload, T0,
       T0 + 23min + 40s, {"a", "b"}},
      {"due after the slack: the next read serves it", {{"a", T0 + 23min}, {"b", T0 + 25min}}, reload, T0,
       T0 + 23min, {"a"}},
      {"overdue: at once", {{"a", T0 - 10s}}, reload, T0 - 5min, T0 - 10s, {"a"}},
      {"minimum gap after the last read", {{"a", T0 + 10s}}, reload, T0, T0 + 60s, {"a"}},
      {"the gap lets later ones join", {{"a", T0 + 10s}, {"b", T0 + 50s}, {"c", T0 + 3min}}, reload, T0 + 30s,
       T0 + 90s, {"a", "b"}},
      {"due near the reload: the reload serves it", {{"a", reload - 30s}}, reload, T0, std::nullopt, {}},
      {"due after the reload: not before it", {{"a", reload + 10min}}, reload, T0, std::nullopt, {}},
      {"never read before: no gap", {{"a", T0 + 5min}}, reload, std::nullopt, T0 + 5min, {"a"}},
  };
  for (const auto& r : rows) {
    auto got = next_catch_up(r.due, r.next_reload, r.last_read);
    ASSERT_EQ(got.has_value(), r.at.has_value()) << r.name;
    if (!got) continue;
    EXPECT_EQ(common::format_rfc3339(got->at), common::format_rfc3339(*r.at)) << r.name;
    EXPECT_EQ(got->workloads, r.workloads) << r.name;
  }
}

TEST(CatchUpText, SaysWhenKubexReadsAgain) {
  EXPECT_EQ(catch_up_text(37min, T0 + 23min, T0), "37m of 1h needed; kubex reads it again at 14:23 UTC (in 23m)");
  EXPECT_EQ(catch_up_text(std::nullopt, T0 + 58min + 5s, T0),
            "no samples yet, 1h needed; kubex reads it again at 14:58 UTC (in 59m)");
  EXPECT_EQ(catch_up_text(59min, T0 - 5s, T0), "59m of 1h needed; kubex reads it again at 13:59 UTC (in 0m)");
}
