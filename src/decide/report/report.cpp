#include "decide/report/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <tuple>

#include "decide/actuation/rollback.h"
#include "decide/policy/scope.h"

namespace kubex::decide::report {

std::optional<Price> node_price(const std::vector<api::GpuHourPrice>& prices,
                                const std::map<std::string, std::string>& node_labels) {
  for (const auto& p : prices) {
    if (policy::selector_matches(p.node_selector, node_labels)) return Price{p.price, p.currency};
  }
  return std::nullopt;
}

Hundredths written_gpus(const actuation::Original& original) {
  if (original.gpu_fraction) {
    if (auto f = parse_gpu_fraction(*original.gpu_fraction)) return *f;
  }
  Hundredths total = 0;
  for (const auto& [name, c] : original.containers) {
    const std::optional<std::string>& v = c.gpu_request ? c.gpu_request : c.gpu_limit;
    if (!v) continue;
    if (auto q = common::Quantity::parse(*v)) total += from_whole(q->milli_value() / 1000);
  }
  return total;
}

WorkloadGpus workload_gpus(const actuation::Original* original, const std::vector<actuation::PodFacts>& pods) {
  WorkloadGpus out;
  const Hundredths per_pod = original ? written_gpus(*original) : 0;
  for (const auto& p : pods) {
    if (p.phase != "Running" || p.terminating) continue;
    out.as_written += per_pod;
    for (const auto& a : p.live) out.held += a.value;
  }
  return out;
}

IdleRule idle_rule(const api::GlobalConfigSpec& g) {
  return {g.report_idle_sm_percent, g.report_idle_memory_percent, g.report_idle_minimum_gpus_milli};
}

namespace {

constexpr double kHour = 3600.0;

// GPU-hours and money are shown with two decimals; rows are rounded once here and every total is the sum of
// the rounded rows, so the rows of the table add up to its totals (issue 34 item 7).
double cents(double v) { return std::round(v * 100.0) / 100.0; }

std::string gpus_text(double g) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", g);
  return buf;
}

}  // namespace

bool is_idle(const WorkloadInput& w, Hundredths held, const IdleRule& rule, std::string* why) {
  auto say = [&](std::string s) {
    if (why) *why = std::move(s);
  };
  // minimumGpus is in milli-GPUs, held in hundredths.
  if (held * 10 < rule.minimum_gpus_milli) {
    say("holds " + format_gpu(held) + " GPU, under the " + gpus_text(rule.minimum_gpus_milli / 1000.0) +
        " GPU the idle rule starts at");
    return false;
  }
  const WindowUsage& u = w.usage;
  if (!u.queried || (!u.sm_p95_gpus && !u.memory_max_gpus)) {  // the report's usage columns say `no data`
    say("no data");
    return false;
  }
  // Some samples, but not both signals over a known span of an hour (issue 34: this said "no data" beside
  // usage columns that showed data).
  if (!u.sm_p95_gpus || !u.memory_max_gpus || !u.span || *u.span < std::chrono::hours(1)) {
    say("less than 1h of data");
    return false;
  }
  const double held_gpus = static_cast<double>(held) / kOneGpu;
  const double sm_limit = rule.sm_percent / 100.0;
  const double memory_limit = rule.memory_percent / 100.0 * held_gpus;
  if (*u.sm_p95_gpus >= sm_limit) {
    say("p95 SM use " + gpus_text(*u.sm_p95_gpus) + " GPU is not below " + std::to_string(rule.sm_percent) +
        "% of a GPU");
    return false;
  }
  if (*u.memory_max_gpus >= memory_limit) {
    say("max memory footprint " + gpus_text(*u.memory_max_gpus) + " GPU is not below " +
        std::to_string(rule.memory_percent) + "% of the " + format_gpu(held) + " GPU it holds");
    return false;
  }
  say("p95 SM use " + gpus_text(*u.sm_p95_gpus) + " GPU (< " + std::to_string(rule.sm_percent) +
      "% of a GPU) and max memory " + gpus_text(*u.memory_max_gpus) + " GPU (< " +
      std::to_string(rule.memory_percent) + "% of " + format_gpu(held) + ") over " +
      std::to_string(u.span->count() / 3600) + "h+ of data");
  return true;
}

double Totals::saved_percent() const {
  if (as_written <= 0) return 0;
  return 100.0 * static_cast<double>(as_written - held) / static_cast<double>(as_written);
}

namespace {

void add(Money& to, const Money& from) {
  for (const auto& [c, v] : from) to[c] = cents(to[c] + v);
}

void add(Totals& t, const WorkloadRow& r) {
  ++t.workloads;
  if (r.idle) ++t.idle_workloads;
  t.as_written += r.as_written;
  t.held += r.held;
  t.gpu_hours_saved = cents(t.gpu_hours_saved + r.gpu_hours_saved);
  if (r.idle) t.idle_gpu_hours = cents(t.idle_gpu_hours + r.gpu_hours_held);
  add(t.saved, r.saved);
  add(t.idle_cost, r.idle_cost);
}

}  // namespace

Summary summarize(const std::vector<WorkloadInput>& workloads, const IdleRule& idle, std::chrono::seconds window,
                  common::TimePoint now) {
  Summary s;
  const double window_hours = static_cast<double>(window.count()) / kHour;
  for (const WorkloadInput& w : workloads) {
    WorkloadRow r;
    r.ns = w.ns;
    r.kind = w.kind;
    r.name = w.name;
    r.managed = w.managed;
    r.replicas = static_cast<int>(w.running.size());
    r.usage = w.usage;
    r.as_written = w.written_per_pod * r.replicas;
    common::TimePoint oldest = now;
    for (const auto& p : w.running) {
      r.held += p.held;
      oldest = std::min(oldest, p.started);
    }
    if (r.as_written == 0 && r.held == 0) continue;  // neither holds nor asks for a GPU
    r.idle = is_idle(w, r.held, idle, &r.idle_reason);
    double seconds = w.usage.span ? static_cast<double>(w.usage.span->count())
                                  : std::chrono::duration<double>(now - oldest).count();
    r.hours = std::clamp(seconds / kHour, 0.0, window_hours);
    const double saved_per_pod_gpus = std::max<double>(0, static_cast<double>(w.written_per_pod)) / kOneGpu;
    for (const auto& p : w.running) {
      const double held_gpus = static_cast<double>(p.held) / kOneGpu;
      const double saved_gpus = std::max(0.0, saved_per_pod_gpus - held_gpus);
      r.gpu_hours_saved += saved_gpus * r.hours;
      r.gpu_hours_held += held_gpus * r.hours;
      if (!p.price) continue;
      r.priced = true;
      r.saved[p.price->currency] += saved_gpus * r.hours * p.price->per_gpu_hour;
      if (r.idle) r.idle_cost[p.price->currency] += held_gpus * r.hours * p.price->per_gpu_hour;
    }
    r.gpu_hours_saved = cents(r.gpu_hours_saved);
    r.gpu_hours_held = cents(r.gpu_hours_held);
    for (auto* m : {&r.saved, &r.idle_cost})
      for (auto& [c, v] : *m) v = cents(v);
    s.workloads.push_back(std::move(r));
  }
  std::sort(s.workloads.begin(), s.workloads.end(), [](const WorkloadRow& a, const WorkloadRow& b) {
    if (a.idle != b.idle) return a.idle;  // RPT-2: idle workloads first
    if (a.idle && a.gpu_hours_held != b.gpu_hours_held) return a.gpu_hours_held > b.gpu_hours_held;
    return std::tie(a.ns, a.kind, a.name) < std::tie(b.ns, b.kind, b.name);
  });
  std::map<std::string, Totals> by_ns;
  for (const auto& r : s.workloads) {
    Totals& t = by_ns[r.ns];
    t.ns = r.ns;
    add(t, r);
    add(s.cluster, r);
  }
  for (auto& [ns, t] : by_ns) s.namespaces.push_back(std::move(t));
  return s;
}

std::string format_money(const Money& m) {
  std::string out;
  for (const auto& [currency, v] : m) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f %s", v, currency.c_str());
    if (!out.empty()) out += " + ";
    out += buf;
  }
  return out;
}

std::string format_hours(double h) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", h);
  std::string s = buf;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s.empty() ? "0" : s;
}

std::map<int, int> pods_per_gpu(const std::map<std::string, std::int64_t>& node_gpus,
                                const std::vector<DevicePod>& pods) {
  std::map<std::string, std::map<std::string, int>> groups;  // node -> group -> pods
  std::map<std::string, std::int64_t> used;                  // node -> devices in use
  std::map<int, int> out;
  for (const DevicePod& p : pods) {
    if (!node_gpus.count(p.node)) continue;
    if (p.fraction > 0 && !p.gpu_group.empty()) {
      if (groups[p.node][p.gpu_group]++ == 0) ++used[p.node];
    } else if (p.fraction > 0) {
      ++out[1];
      ++used[p.node];
    } else if (p.whole_gpus > 0) {
      out[1] += static_cast<int>(p.whole_gpus);
      used[p.node] += p.whole_gpus;
    }
  }
  for (const auto& [node, gs] : groups) {
    for (const auto& [g, n] : gs) ++out[n];
  }
  for (const auto& [node, capacity] : node_gpus) {
    const std::int64_t empty = capacity - used[node];
    if (empty > 0) out[0] += static_cast<int>(empty);
  }
  return out;
}

}  // namespace kubex::decide::report
