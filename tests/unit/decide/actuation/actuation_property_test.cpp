// Properties of decide() over 20,000 seeded random workloads (deterministic): the ACT-3 budget is never
// exceeded, Job/CronJob/AnalysisRun pods are never chosen (ACT-2), dry-run never evicts nor annotates
// (ACT-8), a backing-off guard (ACT-7) or a remembered PDB refusal (ACT-5) stops the choice, every chosen pod
// is a candidate that passed every check, the choice follows the ACT-3 order, it does not depend on the order
// pods are listed in, and the requeue stays within [1s, 1m] (ACT-1).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "actuation_fixtures.h"
#include "decide/actuation/steps.h"

namespace kubex::decide::actuation::test {
namespace {

constexpr int kCases = 20'000;

struct Gen {
  std::mt19937 rng{20270115};
  int between(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng); }
};

Allocation random_allocation(Gen& g) {
  switch (g.between(0, 3)) {
    case 0:
      return one(frac("app", g.between(1, 3) * 25));
    case 1:
      return one(whole("app", g.between(1, 2)));
    case 2:
      return {frac("app", 50), whole("side", 1)};
    default:
      return {};
  }
}

Input random_input(Gen& g) {
  Input in;
  in.now = kNow;
  const char* kinds[] = {"Deployment", "StatefulSet", "Job", "CronJob", "AnalysisRun", "Model", "DaemonSet"};
  in.workload.kind = kinds[g.between(0, 6)];
  in.workload.replicas = g.chance(0.9) ? std::optional<std::int64_t>(g.between(0, 8)) : std::nullopt;
  const char* mu[] = {"", "0", "1", "2", "3", "25%", "50%", "100%", "x"};
  in.workload.max_unavailable = mu[g.between(0, 8)];
  if (g.chance(0.05)) in.workload.annotations[api::keys::kPauseUntil] = "infinite";
  in.purpose = g.chance(0.15) ? Purpose::kRollback : Purpose::kResize;
  if (g.chance(0.9)) in.desired = random_allocation(g);
  Settings& s = in.settings;
  s.automation_enabled = !g.chance(0.05);
  s.protected_namespace = g.chance(0.05);
  s.webhook_healthy = !g.chance(0.1);
  s.dry_run = g.chance(0.2);
  s.eviction_enabled = !g.chance(0.1);
  s.retry_pdb = g.chance(0.5);
  s.in_place_resize = g.chance(0.5);
  s.min_ready_duration = std::chrono::seconds(g.between(0, 3) * 10);
  s.require_owner_pods_ready = g.chance(0.3);
  s.respect_max_unavailable = g.chance(0.8);
  const int pods = g.between(0, 8);
  for (int i = 0; i < pods; ++i) {
    PodFacts p = pod("p" + std::to_string(i), random_allocation(g), std::chrono::seconds(g.between(0, 120)));
    p.ready = g.chance(0.8);
    p.ready_since = kNow - std::chrono::seconds(g.between(0, 60));
    p.terminating = g.chance(0.1);
    p.controller_owned = !g.chance(0.05);
    if (g.chance(0.05)) p.phase = g.chance(0.5) ? "Succeeded" : "Failed";
    if (g.chance(0.05)) p.annotations[api::keys::kPauseUntil] = "infinite";
    if (g.chance(0.3)) p.annotations[api::keys::kPodRightsizingInfo] = "{}";
    if (g.chance(0.2))
      p.annotations[api::keys::kAutomationConstraints] = R"([{"reason":"pdb-blocked","targets":[]}])";
    if (in.workload.kind == "Model" && g.chance(0.7)) p.desired = random_allocation(g);
    in.workload.pods.push_back(std::move(p));
  }
  // Mostly as many replicas as pods (a settled workload), sometimes more (a replica with no pod yet, ACT-3).
  if (in.workload.replicas && g.chance(0.6)) in.workload.replicas = static_cast<std::int64_t>(in.workload.pods.size());
  if (!in.workload.pods.empty() && g.chance(0.2)) {
    const PodFacts& p = in.workload.pods[g.between(0, static_cast<int>(in.workload.pods.size()) - 1)];
    if (in.desired) in.pdb_blocked.insert(pdb_key(p.uid, desired_key(*in.desired)));
  }
  if (g.chance(0.3)) in.last_eviction = kNow - std::chrono::seconds(g.between(0, 90));
  if (g.chance(0.3))
    in.guard = GuardState{in.desired ? desired_key(*in.desired) : "", g.between(0, 3),
                          kNow + std::chrono::seconds(g.between(-30, 30)), std::nullopt};
  return in;
}

TEST(ActuationProperty, SeededRandomWorkloads) {
  Gen g;
  int evicted = 0, would = 0;
  for (int n = 0; n < kCases; ++n) {
    Input in = random_input(g);
    const Plan plan = decide(in);
    const std::string at = "case " + std::to_string(n);
    const int room = std::max(0, plan.budget - plan.in_flight);
    // ACT-3: the budget, also in dry-run.
    ASSERT_LE(static_cast<int>(plan.evict.size() + plan.would_evict.size()), room) << at;
    ASSERT_EQ(plan.budget,
              budget(in.settings.respect_max_unavailable, in.workload.max_unavailable, in.workload.replicas))
        << at;
    ASSERT_EQ(plan.in_flight, in_flight(in.workload.pods, in.workload.replicas,
                                       Settling{in.last_eviction, in.settings.min_ready_duration, in.now}))
        << at;
    ASSERT_GE(plan.in_flight, in_flight(in.workload.pods)) << at;  // a replica with no pod is in flight too
    // ACT-2: never a Job, CronJob or AnalysisRun pod.
    if (never_evicted(in.workload.kind)) {
      ASSERT_TRUE(plan.evict.empty() && plan.would_evict.empty()) << at;
    }
    // ACT-8: dry-run never evicts and never annotates.
    if (in.settings.dry_run) {
      ASSERT_TRUE(plan.evict.empty()) << at;
      ASSERT_NE(plan.result, Result::kEvicted) << at;
    } else {
      ASSERT_TRUE(plan.would_evict.empty()) << at;
    }
    const bool writes =
        !in.settings.dry_run && in.settings.automation_enabled && !in.settings.protected_namespace;
    std::vector<std::string> chosen;
    bool blocked_seen_after_passing = false;
    for (const PodPlan& p : plan.pods) {
      if (!writes) {
        ASSERT_FALSE(p.write_constraints) << at << " " << p.name;
      }
      const bool picked = p.result == Result::kEvicted || p.result == Result::kWouldEvict;
      ASSERT_EQ(p.evict, p.result == Result::kEvicted) << at;
      if (picked) {
        ASSERT_TRUE(p.candidate && p.failed.empty()) << at << " " << p.name;
        ASSERT_FALSE(blocked_seen_after_passing) << at << ": the choice skipped a pod that passed ACT-2";
        chosen.push_back(p.name);
        auto f = std::find_if(in.workload.pods.begin(), in.workload.pods.end(),
                              [&](const PodFacts& x) { return x.name == p.name; });
        ASSERT_TRUE(f->ready && !f->terminating && f->controller_owned && !f->finished()) << at;
        ASSERT_GE(in.now - f->ready_since, in.settings.min_ready_duration) << at;
      } else if (p.candidate && p.failed.size() == 1 && p.failed[0].name == check::kMaxUnavailableExceeded) {
        blocked_seen_after_passing = true;
      }
      if (!p.candidate) {
        ASSERT_EQ(p.result, Result::kInSync) << at;
      }
      if (p.candidate && !picked) {
        ASSERT_FALSE(p.failed.empty()) << at;
      }
    }
    ASSERT_EQ(chosen, in.settings.dry_run ? plan.would_evict : plan.evict) << at;
    ASSERT_GE(plan.requeue_after, std::chrono::seconds(1)) << at;
    ASSERT_LE(plan.requeue_after, std::chrono::minutes(1)) << at;
    // ACT-7: while the guard backs off, nothing is chosen.
    if (plan.guard.until && in.now < *plan.guard.until && in.purpose == Purpose::kResize) {
      ASSERT_TRUE(plan.evict.empty() && plan.would_evict.empty()) << at;
    }
    // ACT-5: a remembered refusal is not tried again for the same pod and value.
    for (const PodPlan& p : plan.pods) {
      if (in.pdb_blocked.count(p.pdb_key)) {
        ASSERT_NE(p.result, Result::kEvicted) << at;
      }
    }
    // The pdb memory only keeps keys it was given.
    for (const std::string& k : plan.pdb_blocked) ASSERT_TRUE(in.pdb_blocked.count(k)) << at;

    // Order independence: the same pods listed backwards give the same choice and results.
    Input reversed = in;
    std::reverse(reversed.workload.pods.begin(), reversed.workload.pods.end());
    const Plan again = decide(reversed);
    ASSERT_EQ(again.evict, plan.evict) << at;
    ASSERT_EQ(again.would_evict, plan.would_evict) << at;
    ASSERT_EQ(again.result, plan.result) << at;
    ASSERT_EQ(again.pod, plan.pod) << at;
    evicted += static_cast<int>(plan.evict.size());
    would += static_cast<int>(plan.would_evict.size());
  }
  // The generator reaches both outcomes often enough for the properties to mean something.
  EXPECT_GT(evicted, kCases / 20);
  EXPECT_GT(would, kCases / 100);
}

}  // namespace
}  // namespace kubex::decide::actuation::test
