// ACT-2: each precondition alone, with its name and whether it is written as a constraint; then all at once
// in SPEC order.
#include <gtest/gtest.h>

#include <functional>

#include "actuation_fixtures.h"
#include "decide/actuation/steps.h"

namespace kubex::decide::actuation::test {
namespace {

struct Case {
  const char* name;
  std::function<void(PodFacts&, WorkloadFacts&, Settings&)> setup;
  std::vector<Check> failed;
};

TEST(ActuationPreconditions, EachCheckAlone) {
  const Case cases[] = {
      {"all pass", [](PodFacts&, WorkloadFacts&, Settings&) {}, {}},
      // automationEnabled is true (our name: SPEC gives none); logged only.
      {"automation disabled",
       [](PodFacts&, WorkloadFacts&, Settings& s) { s.automation_enabled = false; },
       {{"automation-disabled", ""}}},
      // the namespace is not protected (our name); logged only.
      {"protected namespace",
       [](PodFacts&, WorkloadFacts&, Settings& s) { s.protected_namespace = true; },
       {{"protected-namespace", ""}}},
      {"pause on the pod",
       [](PodFacts& p, WorkloadFacts&, Settings&) { p.annotations[api::keys::kPauseUntil] = "infinite"; },
       {{"pause-active", "pause-active"}}},
      {"pause on the owner",
       [](PodFacts&, WorkloadFacts& w, Settings&) {
         w.annotations[api::keys::kPauseUntil] = "2099-01-01T00:00:00Z";
       },
       {{"pause-active", "pause-active"}}},
      {"pause on the owner template",
       [](PodFacts&, WorkloadFacts& w, Settings&) {
         w.template_annotations[api::keys::kPauseUntil] = "infinite";
       },
       {{"pause-active", "pause-active"}}},
      {"pause on the namespace",
       [](PodFacts&, WorkloadFacts& w, Settings&) {
         w.namespace_annotations[api::keys::kPauseUntil] = "infinite";
       },
       {{"pause-active", "pause-active"}}},
      {"unparseable pause counts as paused",
       [](PodFacts& p, WorkloadFacts&, Settings&) { p.annotations[api::keys::kPauseUntil] = "tomorrow"; },
       {{"pause-active", "pause-active"}}},
      {"pause ended a second ago (kNow is 2027-01-15T08:00:00Z)",
       [](PodFacts& p, WorkloadFacts&, Settings&) {
         p.annotations[api::keys::kPauseUntil] = "2027-01-15T07:59:59Z";
       },
       {}},
      {"pause ends a second from now",
       [](PodFacts& p, WorkloadFacts&, Settings&) {
         p.annotations[api::keys::kPauseUntil] = "2027-01-15T08:00:01Z";
       },
       {{"pause-active", "pause-active"}}},
      {"pause in the past",
       [](PodFacts& p, WorkloadFacts&, Settings&) {
         p.annotations[api::keys::kPauseUntil] = "2020-01-01T00:00:00Z";
       },
       {}},
      {"pause check disabled by the strategy",
       [](PodFacts& p, WorkloadFacts&, Settings& s) {
         p.annotations[api::keys::kPauseUntil] = "infinite";
         s.pause_check = false;
       },
       {}},
      {"pod eviction disabled",
       [](PodFacts&, WorkloadFacts&, Settings& s) { s.eviction_enabled = false; },
       {{"pod-eviction-disabled", "pod-eviction-disabled"}}},
      {"webhook unhealthy",
       [](PodFacts&, WorkloadFacts&, Settings& s) { s.webhook_healthy = false; },
       {{"webhook-unhealthy", "webhook-unhealthy"}}},
      {"ready for less than minReadyDuration",
       [](PodFacts& p, WorkloadFacts&, Settings&) { p.ready_since = kNow - 9s; },
       {{"min-ready-duration-not-met", ""}}},
      {"ready for exactly minReadyDuration",
       [](PodFacts& p, WorkloadFacts&, Settings&) { p.ready_since = kNow - 10s; },
       {}},
      {"minReadyDuration 0s and just Ready",
       [](PodFacts& p, WorkloadFacts&, Settings& s) {
         p.ready_since = kNow;
         s.min_ready_duration = 0s;
       },
       {}},
      {"not Ready",
       [](PodFacts& p, WorkloadFacts&, Settings&) { p.ready = false; },
       {{"min-ready-duration-not-met", ""}}},
      {"terminating",
       [](PodFacts& p, WorkloadFacts&, Settings&) { p.terminating = true; },
       {{"pod-terminating", ""}}},
      {"requireOwnerPodsReady with a pod not Ready",
       [](PodFacts&, WorkloadFacts& w, Settings& s) {
         s.require_owner_pods_ready = true;
         w.pods[1].ready = false;
       },
       {{"owner-pods-not-ready", ""}}},
      {"requireOwnerPodsReady, every pod Ready",
       [](PodFacts&, WorkloadFacts&, Settings& s) { s.require_owner_pods_ready = true; },
       {}},
      {"requireOwnerPodsReady ignores finished pods",
       [](PodFacts&, WorkloadFacts& w, Settings& s) {
         s.require_owner_pods_ready = true;
         w.pods[1].ready = false;
         w.pods[1].phase = "Failed";
       },
       {}},
      {"a pod not Ready without requireOwnerPodsReady",
       [](PodFacts&, WorkloadFacts& w, Settings&) { w.pods[1].ready = false; },
       {}},
      {"Job owner",
       [](PodFacts&, WorkloadFacts& w, Settings&) { w.kind = "Job"; },
       {{"job-pod-not-evicted", "job-pod-not-evicted"}}},
      {"CronJob owner",
       [](PodFacts&, WorkloadFacts& w, Settings&) { w.kind = "CronJob"; },
       {{"job-pod-not-evicted", "job-pod-not-evicted"}}},
      {"AnalysisRun owner",
       [](PodFacts&, WorkloadFacts& w, Settings&) { w.kind = "AnalysisRun"; },
       {{"job-pod-not-evicted", "job-pod-not-evicted"}}},
      {"Model owner is evicted", [](PodFacts&, WorkloadFacts& w, Settings&) { w.kind = "Model"; }, {}},
      {"StatefulSet owner is evicted",
       [](PodFacts&, WorkloadFacts& w, Settings&) { w.kind = "StatefulSet"; },
       {}},
  };
  for (const Case& c : cases) {
    WorkloadFacts w = deployment({pod("a", one(frac("app", 25))), pod("b", one(frac("app", 50)))});
    PodFacts p = w.pods[0];
    Settings s;
    c.setup(p, w, s);
    EXPECT_EQ(preconditions(p, w, s, kNow), c.failed) << c.name;
  }
}

// ACT-2: every failing check is listed, in SPEC order.
TEST(ActuationPreconditions, AllFailuresInSpecOrder) {
  WorkloadFacts w = deployment({not_ready(pod("a", one(frac("app", 25))))});
  w.kind = "CronJob";
  w.annotations[api::keys::kPauseUntil] = "infinite";
  Settings s;
  s.automation_enabled = false;
  s.protected_namespace = true;
  s.eviction_enabled = false;
  s.webhook_healthy = false;
  s.require_owner_pods_ready = true;
  PodFacts p = terminating(w.pods[0]);
  EXPECT_EQ(
      names(preconditions(p, w, s, kNow)),
      (std::vector<std::string>{"automation-disabled", "protected-namespace", "pause-active",
                                "pod-eviction-disabled", "webhook-unhealthy", "min-ready-duration-not-met",
                                "pod-terminating", "owner-pods-not-ready", "job-pod-not-evicted"}));
}

// SPEC §1.1 defaults reach Settings; a default strategy gives the built-in defaults (RBK-2 uses them).
TEST(ActuationSettings, FromStrategy) {
  const Settings d = settings_of(api::StrategySpec{});
  EXPECT_TRUE(d.pause_check);
  EXPECT_TRUE(d.eviction_enabled);
  EXPECT_TRUE(d.retry_pdb);
  EXPECT_TRUE(d.in_place_resize);
  EXPECT_EQ(d.min_ready_duration, 10s);
  EXPECT_FALSE(d.require_owner_pods_ready);
  EXPECT_TRUE(d.respect_max_unavailable);
  EXPECT_EQ(d.resize_retry_interval, 30s);
  api::StrategySpec spec;
  spec.pod_eviction_enabled = false;
  spec.retry_pod_disruption_budget = false;
  spec.in_place_resize_enabled = false;
  spec.safety.enable_pause_until_annotation_check = false;
  spec.safety.min_ready_duration = 0s;
  spec.safety.require_owner_pods_ready = true;
  spec.safety.respect_workload_max_unavailable = false;
  spec.safety.resize_retry_interval = 5s;
  const Settings s = settings_of(spec);
  EXPECT_FALSE(s.eviction_enabled);
  EXPECT_FALSE(s.retry_pdb);
  EXPECT_FALSE(s.in_place_resize);
  EXPECT_FALSE(s.pause_check);
  EXPECT_EQ(s.min_ready_duration, 0s);
  EXPECT_TRUE(s.require_owner_pods_ready);
  EXPECT_FALSE(s.respect_max_unavailable);
  EXPECT_EQ(s.resize_retry_interval, 5s);
}

}  // namespace
}  // namespace kubex::decide::actuation::test
