// ACT-3: the concurrency budget, the pods in flight and the eviction order.
#include <algorithm>
#include <charconv>

#include "decide/actuation/steps.h"

namespace kubex::decide::actuation {

namespace {

// Digits only, no sign or space; nullopt when unreadable or absurdly large.
std::optional<std::int64_t> digits(std::string_view s) {
  if (s.empty() || s.size() > 12) return std::nullopt;
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.front() == '-' || s.front() == '+')
    return std::nullopt;
  return v;
}

}  // namespace

int budget(bool respect, std::string_view max_unavailable, std::optional<std::int64_t> replicas) {
  if (!respect) return 1;
  std::int64_t n = 0;
  if (!max_unavailable.empty() && max_unavailable.back() == '%') {
    const std::optional<std::int64_t> pct = digits(max_unavailable.substr(0, max_unavailable.size() - 1));
    if (!pct || *pct > 100) return 1;
    const std::int64_t r = std::clamp<std::int64_t>(replicas.value_or(1), 0, 1'000'000'000);
    n = r * *pct / 100;  // rounded down
  } else {
    const std::optional<std::int64_t> v = digits(max_unavailable);
    if (!v) return 1;
    n = std::min<std::int64_t>(*v, 1'000'000'000);
  }
  return static_cast<int>(std::max<std::int64_t>(1, n));
}

int in_flight(const std::vector<PodFacts>& pods) {
  return static_cast<int>(std::count_if(pods.begin(), pods.end(), [](const PodFacts& p) {
    return !p.finished() && (!p.ready || p.terminating);
  }));
}

bool unsettled_replacement(const PodFacts& p, std::optional<common::TimePoint> last_eviction, common::Duration min_ready,
                           common::TimePoint now) {
  if (!last_eviction || p.created <= *last_eviction || p.finished()) return false;
  if (!p.ready) return true;
  const common::TimePoint since = std::max(p.ready_since, p.last_restart);
  return now - since < min_ready;
}

std::optional<common::TimePoint> settles_at(const PodFacts& p, std::optional<common::TimePoint> last_eviction,
                                            common::Duration min_ready, common::TimePoint now) {
  if (!p.ready || p.terminating || !unsettled_replacement(p, last_eviction, min_ready, now)) return std::nullopt;
  return std::max(p.ready_since, p.last_restart) + min_ready;
}

int in_flight(const std::vector<PodFacts>& pods, std::optional<std::int64_t> replicas, const Settling& settling) {
  auto moving = [&](const PodFacts& p) {
    return !p.finished() &&
           (!p.ready || p.terminating ||
            unsettled_replacement(p, settling.last_eviction, settling.min_ready, settling.now));
  };
  const int unready = static_cast<int>(std::count_if(pods.begin(), pods.end(), moving));
  if (!replicas) return unready;
  const auto available =
      std::count_if(pods.begin(), pods.end(), [&](const PodFacts& p) { return !p.finished() && !moving(p); });
  const std::int64_t missing = std::clamp<std::int64_t>(*replicas, 0, 1'000'000'000) - available;
  return std::max<int>(unready, static_cast<int>(std::max<std::int64_t>(0, missing)));
}

std::vector<std::size_t> order(const std::vector<PodFacts>& pods) {
  std::vector<std::size_t> idx(pods.size());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
    const PodFacts& x = pods[a];
    const PodFacts& y = pods[b];
    if (x.ready != y.ready) return x.ready;
    if (x.ready && x.ready_since != y.ready_since) return x.ready_since < y.ready_since;
    return x.name < y.name;
  });
  return idx;
}

bool within_budget(int in_flight, int budget) {
  return in_flight < budget;
}

std::map<std::string, common::TimePoint> pending_evictions(const std::map<std::string, common::TimePoint>& sent,
                                                            const std::vector<PodFacts>& pods, common::TimePoint now) {
  std::map<std::string, common::TimePoint> out;
  if (sent.empty()) return out;
  for (const PodFacts& p : pods) {
    auto it = sent.find(p.uid);
    if (it == sent.end() || p.uid.empty()) continue;
    if (p.terminating || p.finished()) continue;              // the cache shows it: its own state counts now
    if (now - it->second >= kEvictionExpectationTimeout) continue;  // the eviction did not take
    out.emplace(*it);
  }
  return out;  // a uid with no pod left is gone
}

std::vector<PodFacts> with_pending_evictions(std::vector<PodFacts> pods,
                                             const std::map<std::string, common::TimePoint>& pending) {
  for (PodFacts& p : pods) {
    if (pending.count(p.uid)) p.terminating = true;
  }
  return pods;
}

}  // namespace kubex::decide::actuation
