// The CronJob schedule parser and activation times (robfig/cron ParseStandard semantics, as kube uses).
#include "sim/cluster/workload_cron.h"

#include <gtest/gtest.h>

#include <chrono>

#include "common/time_format.h"
#include "sim/cluster/workload_cronjob.h"

namespace kubex::sim::cluster {
namespace {

using namespace std::chrono;

common::TimePoint at(int y, unsigned mo, unsigned d, int h = 0, int mi = 0, int s = 0) {
  return sys_days{year{y} / mo / d} + hours(h) + minutes(mi) + seconds(s);
}

std::string fmt(std::optional<common::TimePoint> t) {
  return t ? common::format_rfc3339(*t) : "none";
}

TEST(CronParse, ValidSpecs) {
  for (const char* spec :
       {"* * * * *", "*/5 * * * *", "0 0 * * *", "0 9-17/2 * * MON-FRI", "30 4 1,15 * *", "0 0 1 jan,Jul *",
        "0 12 ? * sun", "5/15 * * * *", "59 23 31 12 6", "@hourly", "@daily", "@midnight", "@weekly",
        "@monthly", "@yearly", "@annually", "@every 1h30m", "  0 0 * * *  ", "0\t0 * * *"}) {
    EXPECT_TRUE(parse_cron(spec)) << spec << ": " << parse_cron(spec).error().message;
  }
}

TEST(CronParse, InvalidSpecsNameTheProblem) {
  struct Case {
    const char* spec;
    const char* error;
  };
  for (const auto& c : std::vector<Case>{
           {"* * * *", "expected exactly 5 fields, found 4: [* * * *]"},
           {"* * * * * *", "expected exactly 5 fields, found 6"},
           {"60 * * * *", "end of range (60) above maximum (59): 60"},
           {"1-61 * * * *", "end of range (61) above maximum (59): 1-61"},
           {"* 24 * * *", "above maximum (23)"},
           {"* * 0 * *", "beginning of range (0) below minimum (1): 0"},
           {"* * * 13 *", "above maximum (12)"},
           {"* * * * 7", "end of range (7) above maximum (6): 7"},
           {"5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"},
           {"*/0 * * * *", "step of range should be a positive number"},
           {"a * * * *", "failed to parse int from a"},
           {"1-2-3 * * * *", "too many hyphens"},
           {"*/2/3 * * * *", "too many slashes"},
           {"* * * FOO *", "failed to parse int from FOO"},
           {"@often", "unrecognized descriptor: @often"},
           {"@every 5", "failed to parse duration"},
           {"TZ=UTC 0 0 * * *", "use timeZone field instead"},
           {"", "empty spec string"},
       }) {
    auto r = parse_cron(c.spec);
    ASSERT_FALSE(r) << c.spec;
    EXPECT_NE(r.error().message.find(c.error), std::string::npos) << c.spec << " -> " << r.error().message;
  }
}

TEST(CronNext, Table) {
  struct Case {
    const char* spec;
    common::TimePoint after, want;
  };
  for (const auto& c : std::vector<Case>{
           {"* * * * *", at(2026, 3, 15, 10, 0, 30), at(2026, 3, 15, 10, 1)},
           {"* * * * *", at(2026, 3, 15, 10, 0), at(2026, 3, 15, 10, 1)},  // strictly after
           {"*/15 * * * *", at(2026, 3, 15, 10, 7), at(2026, 3, 15, 10, 15)},
           {"5/15 * * * *", at(2026, 3, 15, 10, 21), at(2026, 3, 15, 10, 35)},
           {"0 0 * * *", at(2026, 3, 15, 10, 0), at(2026, 3, 16)},
           {"30 4 1,15 * *", at(2026, 3, 15, 5, 0), at(2026, 4, 1, 4, 30)},
           {"0 9-17/2 * * MON-FRI", at(2026, 3, 14, 12, 0), at(2026, 3, 16, 9, 0)},  // Saturday -> Monday
           {"0 9-17/2 * * MON-FRI", at(2026, 3, 16, 9, 0), at(2026, 3, 16, 11, 0)},
           {"0 0 1 jan,Jul *", at(2026, 3, 15), at(2026, 7, 1)},
           {"0 0 29 2 *", at(2026, 3, 1), at(2028, 2, 29)},  // next leap day
           {"59 23 31 12 *", at(2026, 12, 31, 23, 59), at(2027, 12, 31, 23, 59)},
           {"0 0 13 * 5", at(2026, 3, 15), at(2026, 3, 20)},   // both days restricted: either matches
           {"0 0 */10 * 5", at(2026, 3, 15), at(2026, 5, 1)},  // a starred day field: both must match
           {"@hourly", at(2026, 3, 15, 10, 59, 59), at(2026, 3, 15, 11, 0)},
           {"@weekly", at(2026, 3, 15, 0, 0, 1), at(2026, 3, 22)},
           {"@monthly", at(2026, 12, 31, 23, 59), at(2027, 1, 1)},
           {"@every 90s", at(2026, 3, 15, 10, 0, 0) + milliseconds(500), at(2026, 3, 15, 10, 1, 30)},
       }) {
    auto s = parse_cron(c.spec);
    ASSERT_TRUE(s) << c.spec;
    EXPECT_EQ(fmt(cron_next(*s, c.after)), fmt(c.want)) << c.spec << " after " << fmt(c.after);
  }
}

TEST(CronNext, ImpossibleScheduleEndsWithin5Years) {
  auto s = parse_cron("0 0 30 2 *");
  ASSERT_TRUE(s);
  EXPECT_FALSE(cron_next(*s, at(2026, 1, 1)));
}

TEST(CronMissed, MostRecentAndCount) {
  auto s = parse_cron("*/10 * * * *");
  ASSERT_TRUE(s);
  // Nothing due yet.
  auto none = cron_missed(*s, at(2026, 3, 15, 10, 1), at(2026, 3, 15, 10, 9, 59));
  EXPECT_FALSE(none.most_recent);
  EXPECT_EQ(none.count, 0);
  // One due.
  auto one = cron_missed(*s, at(2026, 3, 15, 10, 1), at(2026, 3, 15, 10, 10));
  EXPECT_EQ(fmt(one.most_recent), fmt(at(2026, 3, 15, 10, 10)));
  EXPECT_EQ(one.count, 1);
  // Several missed: only the most recent is run; the earliest bound is exclusive.
  auto some = cron_missed(*s, at(2026, 3, 15, 10, 0), at(2026, 3, 15, 10, 45));
  EXPECT_EQ(fmt(some.most_recent), fmt(at(2026, 3, 15, 10, 40)));
  EXPECT_EQ(some.count, 4);
  // A year of minutes: the count stops past the cap, the most recent is still exact.
  auto every = parse_cron("* * * * *");
  auto many = cron_missed(*every, at(2025, 3, 15), at(2026, 3, 15, 7, 3, 20), 100);
  EXPECT_EQ(fmt(many.most_recent), fmt(at(2026, 3, 15, 7, 3)));
  EXPECT_EQ(many.count, 101);
  // @every counts intervals from the earliest time.
  auto ev = parse_cron("@every 1h");
  auto hourly = cron_missed(*ev, at(2026, 3, 15, 0, 30), at(2026, 3, 15, 3, 45));
  EXPECT_EQ(fmt(hourly.most_recent), fmt(at(2026, 3, 15, 3, 30)));
  EXPECT_EQ(hourly.count, 3);
}

TEST(CronJobName, MinutesSinceEpoch) {
  EXPECT_EQ(cronjob_job_name("backup", at(2026, 3, 15, 10, 0)), "backup-29559480");
  EXPECT_EQ(cronjob_job_name("x", common::TimePoint{} + minutes(1) + seconds(59)), "x-1");
}

}  // namespace
}  // namespace kubex::sim::cluster
