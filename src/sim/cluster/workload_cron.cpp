#include "sim/cluster/workload_cron.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <vector>

#include "common/duration.h"

namespace kubex::sim::cluster {

namespace {

using namespace std::chrono;
using Minutes = sys_time<minutes>;

struct Bounds {
  int min, max;
  const std::array<const char*, 13>* names;  // index = value; nullptr entries unused
};

constexpr std::array<const char*, 13> kMonthNames = {nullptr, "jan", "feb", "mar", "apr", "may", "jun",
                                                     "jul",   "aug", "sep", "oct", "nov", "dec"};
constexpr std::array<const char*, 13> kDayNames = {"sun",   "mon",   "tue",   "wed",   "thu",   "fri",  "sat",
                                                   nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    auto pos = s.find(sep, start);
    out.emplace_back(s.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return out;
}

common::Result<int> parse_value(const std::string& tok, const Bounds& b) {
  if (b.names) {
    std::string lower;
    for (char c : tok) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (int i = 0; i < 13; ++i) {
      if ((*b.names)[i] && lower == (*b.names)[i]) return i;
    }
  }
  if (tok.empty() || tok.size() > 9) return common::fail("failed to parse int from " + tok);
  int v = 0;
  for (char c : tok) {
    if (c < '0' || c > '9') return common::fail("failed to parse int from " + tok + ": invalid syntax");
    v = v * 10 + (c - '0');
  }
  return v;
}

// One comma-separated part: sets bits; `star` when it is `*`/`?` (with or without a step).
template <std::size_t N>
common::Result<void> parse_range(const std::string& expr, const Bounds& b, std::bitset<N>& bits, bool& star) {
  auto range_and_step = split(expr, '/');
  if (range_and_step.size() > 2) return common::fail("too many slashes: " + expr);
  auto low_high = split(range_and_step[0], '-');
  if (low_high.size() > 2) return common::fail("too many hyphens: " + expr);
  int start = 0, end = 0, step = 1;
  bool is_star = false;
  if (low_high[0] == "*" || low_high[0] == "?") {
    if (low_high.size() > 1) return common::fail("too many hyphens: " + expr);
    start = b.min;
    end = b.max;
    is_star = true;
  } else {
    auto s = parse_value(low_high[0], b);
    if (!s) return std::unexpected(s.error());
    start = end = *s;
    if (low_high.size() == 2) {
      auto e = parse_value(low_high[1], b);
      if (!e) return std::unexpected(e.error());
      end = *e;
    }
  }
  if (range_and_step.size() == 2) {
    auto st = parse_value(range_and_step[1], Bounds{0, 0, nullptr});
    if (!st) return std::unexpected(st.error());
    step = *st;
    if (low_high.size() == 1 && !is_star) end = b.max;  // "N/STEP" runs to the maximum
  }
  if (start < b.min)
    return common::fail("beginning of range (" + std::to_string(start) + ") below minimum (" +
                        std::to_string(b.min) + "): " + expr);
  if (end > b.max)
    return common::fail("end of range (" + std::to_string(end) + ") above maximum (" + std::to_string(b.max) +
                        "): " + expr);
  if (start > end)
    return common::fail("beginning of range (" + std::to_string(start) + ") beyond end of range (" +
                        std::to_string(end) + "): " + expr);
  if (step == 0) return common::fail("step of range should be a positive number: " + expr);
  for (int v = start; v <= end; v += step) bits.set(static_cast<std::size_t>(v));
  if (is_star) star = true;
  return {};
}

template <std::size_t N>
common::Result<void> parse_field(const std::string& field, const Bounds& b, std::bitset<N>& bits,
                                 bool& star) {
  for (const auto& part : split(field, ',')) {
    if (auto r = parse_range(part, b, bits, star); !r) return r;
  }
  return {};
}

bool day_matches(const CronSchedule& s, const year_month_day& ymd, const weekday& wd) {
  bool dom = s.days.test(static_cast<unsigned>(ymd.day()));
  bool dow = s.weekdays.test(wd.c_encoding());
  if (s.days_star || s.weekdays_star) return dom && dow;
  return dom || dow;
}

constexpr auto kHorizon = days(5 * 366);

}  // namespace

common::Result<CronSchedule> parse_cron(std::string_view spec) {
  std::string text(spec);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  std::size_t lead = 0;
  while (lead < text.size() && std::isspace(static_cast<unsigned char>(text[lead]))) ++lead;
  text = text.substr(lead);
  if (text.empty()) return common::fail("empty spec string");
  if (text.rfind("TZ=", 0) == 0 || text.rfind("CRON_TZ=", 0) == 0) {
    return common::fail("cannot use TZ or CRON_TZ in schedule, use timeZone field instead");
  }
  CronSchedule s;
  if (text[0] == '@') {
    static const std::array<std::pair<const char*, const char*>, 7> kDescriptors = {
        {{"@yearly", "0 0 1 1 *"},
         {"@annually", "0 0 1 1 *"},
         {"@monthly", "0 0 1 * *"},
         {"@weekly", "0 0 * * 0"},
         {"@daily", "0 0 * * *"},
         {"@midnight", "0 0 * * *"},
         {"@hourly", "0 * * * *"}}};
    for (const auto& [name, expansion] : kDescriptors) {
      if (text == name) return parse_cron(expansion);
    }
    if (text.rfind("@every ", 0) == 0) {
      auto d = common::parse_go_duration(text.substr(7));
      if (!d) return common::fail("failed to parse duration " + text + ": " + d.error().message);
      auto secs = duration_cast<seconds>(*d);
      s.every = std::max(secs, seconds(1));
      return s;
    }
    return common::fail("unrecognized descriptor: " + text);
  }
  std::vector<std::string> fields;
  std::string cur;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!cur.empty()) fields.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) fields.push_back(cur);
  if (fields.size() != 5) {
    std::string listed;
    for (const auto& f : fields) listed += (listed.empty() ? "" : " ") + f;
    return common::fail("expected exactly 5 fields, found " + std::to_string(fields.size()) + ": [" + listed +
                        "]");
  }
  bool ignored = false;
  if (auto r = parse_field(fields[0], {0, 59, nullptr}, s.minutes, ignored); !r)
    return std::unexpected(r.error());
  if (auto r = parse_field(fields[1], {0, 23, nullptr}, s.hours, ignored); !r)
    return std::unexpected(r.error());
  if (auto r = parse_field(fields[2], {1, 31, nullptr}, s.days, s.days_star); !r)
    return std::unexpected(r.error());
  if (auto r = parse_field(fields[3], {1, 12, &kMonthNames}, s.months, ignored); !r)
    return std::unexpected(r.error());
  if (auto r = parse_field(fields[4], {0, 6, &kDayNames}, s.weekdays, s.weekdays_star); !r) {
    return std::unexpected(r.error());
  }
  return s;
}

std::optional<common::TimePoint> cron_next(const CronSchedule& s, common::TimePoint t) {
  if (s.every) return floor<seconds>(t) + *s.every;
  Minutes m = floor<minutes>(t) + minutes(1);
  const Minutes limit = m + kHorizon;
  while (m <= limit) {
    const sys_days day = floor<days>(m);
    const year_month_day ymd{day};
    if (!s.months.test(static_cast<unsigned>(ymd.month()))) {
      m = sys_days{(ymd.year() / ymd.month() / 1) + months(1)};
      continue;
    }
    if (!day_matches(s, ymd, weekday{day})) {
      m = day + days(1);
      continue;
    }
    const hh_mm_ss hms{m - day};
    if (!s.hours.test(static_cast<std::size_t>(hms.hours().count()))) {
      m = floor<hours>(m) + hours(1);
      continue;
    }
    if (!s.minutes.test(static_cast<std::size_t>(hms.minutes().count()))) {
      m += minutes(1);
      continue;
    }
    return common::TimePoint{m};
  }
  return std::nullopt;
}

namespace {

// The latest activation at or before `t` (not before `floor_t`).
std::optional<common::TimePoint> cron_prev(const CronSchedule& s, common::TimePoint t,
                                           common::TimePoint floor_t) {
  Minutes m = floor<minutes>(t);
  const Minutes limit = std::max(m - kHorizon, ceil<minutes>(floor_t));
  while (m >= limit) {
    const sys_days day = floor<days>(m);
    const year_month_day ymd{day};
    if (!s.months.test(static_cast<unsigned>(ymd.month()))) {
      m = sys_days{ymd.year() / ymd.month() / 1} - minutes(1);
      continue;
    }
    if (!day_matches(s, ymd, weekday{day})) {
      m = day - minutes(1);
      continue;
    }
    const hh_mm_ss hms{m - day};
    if (!s.hours.test(static_cast<std::size_t>(hms.hours().count()))) {
      m = floor<hours>(m) - minutes(1);
      continue;
    }
    if (!s.minutes.test(static_cast<std::size_t>(hms.minutes().count()))) {
      m -= minutes(1);
      continue;
    }
    return common::TimePoint{m};
  }
  return std::nullopt;
}

}  // namespace

CronMissed cron_missed(const CronSchedule& s, common::TimePoint earliest, common::TimePoint now,
                       std::int64_t cap) {
  CronMissed out;
  if (now <= earliest) return out;
  if (s.every) {
    auto first = floor<seconds>(earliest) + *s.every;
    if (first > now) return out;
    auto n = duration_cast<seconds>(now - first) / *s.every;
    out.most_recent = first + *s.every * n;
    out.count = std::min<std::int64_t>(n + 1, cap + 1);
    return out;
  }
  auto recent = cron_prev(s, now, earliest);
  if (!recent || *recent <= earliest) return out;
  out.most_recent = recent;
  auto t = cron_next(s, earliest);
  while (t && *t <= now && out.count <= cap) {
    ++out.count;
    t = cron_next(s, *t);
  }
  return out;
}

}  // namespace kubex::sim::cluster
