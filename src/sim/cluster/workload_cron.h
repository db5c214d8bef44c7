// Cron schedules as CronJobs read them (the standard 5-field syntax of robfig/cron's ParseStandard, which
// kube-controller-manager uses), as pure functions: parse, next activation, and missed activations.
//
//   minute hour day-of-month month day-of-week
//   fields: `*` `?` `N` `A-B`, each optionally `/STEP` (`N/STEP` means N to the maximum), comma lists;
//   months JAN-DEC and days SUN-SAT by name (any case); day-of-week 0-6 (Sunday = 0).
//   When either day field is `*` (or a `*`/STEP) both day fields must match, otherwise either may.
//   Descriptors: @yearly @annually @monthly @weekly @daily @midnight @hourly, and @every DURATION (Go
//   syntax).
// Times are UTC and whole minutes (@every: whole seconds).
#pragma once

#include <bitset>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

#include "common/clock.h"
#include "common/result.h"

namespace kubex::sim::cluster {

struct CronSchedule {
  std::bitset<60> minutes;
  std::bitset<24> hours;
  std::bitset<32> days;     // 1-31
  std::bitset<13> months;   // 1-12
  std::bitset<7> weekdays;  // 0-6, Sunday = 0
  bool days_star = false, weekdays_star = false;
  std::optional<std::chrono::seconds> every;  // @every
};

// Errors read like robfig/cron's (`expected exactly 5 fields, found 4: [...]`, `end of range (61) above
// maximum (59): 1-61`, ...).
common::Result<CronSchedule> parse_cron(std::string_view spec);

// The first activation strictly after `t`; nullopt when there is none within five years (e.g. "0 0 30 2 *").
std::optional<common::TimePoint> cron_next(const CronSchedule& s, common::TimePoint t);

// Activations in (earliest, now]: the most recent one and how many there were (counting stops at `cap` + 1).
struct CronMissed {
  std::optional<common::TimePoint> most_recent;
  std::int64_t count = 0;
};
CronMissed cron_missed(const CronSchedule& s, common::TimePoint earliest, common::TimePoint now,
                       std::int64_t cap = 100);

}  // namespace kubex::sim::cluster
