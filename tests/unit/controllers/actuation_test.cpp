// The `actuation` controller's reconcile (ACT-1, ACT-4, ACT-5, ACT-8, OBS-2, OBS-3) with fakes for every
// dependency: kubex's objects (status_fakes.h), the workload and its pods (ActuationFacts), the evictor
// (act_fakes.h), the pod annotation writer and the event sink. The decision itself is decide::actuation's,
// table-tested in tests/unit/decide/actuation.
#include "controllers/actuation.h"

#include <gtest/gtest.h>

#include "act/pod_annotations.h"
#include "eviction_fixture.h"

namespace kubex::controllers {
namespace {

using namespace test;
using namespace std::chrono_literals;
namespace da = decide::actuation;

using test::kKey;
using test::pod;
using test::FakePodAnnotations;

class ActuationFixture : public EvictionFixture<ActuationController> {
 protected:
  void SetUp() override {
    seed_kubex_objects();
    make();
  }

  void make(bool dry_run = false) {
    ActuationDeps d;
    d.catalog = &catalog;
    d.facts = new_facts(
        {{"metadata", {{"annotations", {{"gpu-fraction", "0.25"}}}}},
         {"spec", {{"schedulerName", "kai-scheduler"}, {"containers", {{{"name", "app"}, {"image", "x"}}}}}}});
    d.evictor = evictor;
    d.pod_annotations = pod_annotations;
    d.events = recorder.get();
    d.webhook = webhook;
    ActuationOptions o;
    o.clock = &clock;
    o.dry_run = dry_run;
    ctl = std::make_unique<ActuationController>(std::move(d), o);
  }
};

TEST_F(ActuationFixture, OnePodAtATimeIsEvictedTowardsTheDesiredFraction) {  // ACT-1, ACT-3, ACT-4
  facts->pod_list = {pod("infer-b", 25, clock.now()), pod("infer-a", 25, clock.now())};
  facts->pod_list[1].ready_since = clock.now() - 5min;  // oldest Ready goes first
  auto r = reconcile();
  ASSERT_TRUE(r) << r.error();
  auto calls = evictor->calls();
  ASSERT_EQ(calls.size(), 1u);  // budget max(1, maxUnavailable) = 1
  EXPECT_EQ(calls[0].pod.name, "infer-a");
  EXPECT_EQ(calls[0].pod.uid, "uid-infer-a");
  EXPECT_EQ(reasons(), std::vector<std::string>{"PolicyEvaluationEvictResize"});
  EXPECT_LE(r->requeue_after, 1min);
}

TEST_F(ActuationFixture, InSyncPodsAreLeftAlone) {  // ACT-1
  facts->pod_list = {pod("infer-a", 50, clock.now()), pod("infer-b", 50, clock.now())};
  ASSERT_TRUE(reconcile());
  EXPECT_TRUE(evictor->calls().empty());
  EXPECT_TRUE(events.empty());
}

TEST_F(ActuationFixture, PdbRefusalIsRetriedAndReported) {  // ACT-5, OBS-2
  facts->pod_list = {pod("infer-a", 25, clock.now())};
  evictor->script("ml", "infer-a", {act::test::FakeEvictor::pdb_blocked("Cannot evict pod")});
  auto r = reconcile();
  ASSERT_TRUE(r);
  EXPECT_EQ(reasons(), std::vector<std::string>{"EvictionBlocked"});
  EXPECT_LE(r->requeue_after, 30s);  // resizeRetryInterval
  clock.advance(10s);
  ASSERT_TRUE(reconcile());  // a pod event before the interval: no new attempt yet
  EXPECT_EQ(evictor->calls().size(), 1u);
  clock.advance(20s);
  ASSERT_TRUE(reconcile());
  EXPECT_EQ(evictor->calls().size(), 2u);  // retried (retryPodDisruptionBudget defaults to true)
}

TEST_F(ActuationFixture, UnhealthyWebhookPausesEvictions) {  // ACT-2 webhook-unhealthy, OBS-3
  webhook->set(decide::WebhookHealth::kUnhealthy);
  facts->pod_list = {pod("infer-a", 25, clock.now())};
  ASSERT_TRUE(reconcile());
  EXPECT_TRUE(evictor->calls().empty());
  ASSERT_EQ(pod_annotations->writes.size(), 1u);
  EXPECT_EQ(pod_annotations->writes[0][0], "ml/infer-a");
  EXPECT_EQ(pod_annotations->writes[0][1], "rightsizing.kubex.ai/automation-constraints");
  EXPECT_NE(pod_annotations->writes[0][2].find("webhook-unhealthy"), std::string::npos);
}

TEST_F(ActuationFixture, DryRunEvictsNothing) {  // ACT-8
  make(/*dry_run=*/true);
  facts->pod_list = {pod("infer-a", 25, clock.now())};
  ASSERT_TRUE(reconcile());
  EXPECT_TRUE(evictor->calls().empty());
  EXPECT_EQ(reasons(), std::vector<std::string>{"WouldEvict"});
  EXPECT_TRUE(pod_annotations->writes.empty());
}

TEST_F(ActuationFixture, UnmanagedWorkloadIsLeftAlone) {  // ACT-1: managed workloads only
  api.erase(api::Kind::kClusterStaticPolicy, "", "half");
  facts->pod_list = {pod("infer-a", 25, clock.now())};
  ASSERT_TRUE(reconcile());
  EXPECT_TRUE(evictor->calls().empty());
}

TEST_F(ActuationFixture, AutomationDisabledEvictsNothing) {  // ACT-2 automationEnabled
  api.put(kubex_object("GlobalConfiguration", "", "global-config", {{"automationEnabled", false}}));
  facts->pod_list = {pod("infer-a", 25, clock.now())};
  ASSERT_TRUE(reconcile());
  EXPECT_TRUE(evictor->calls().empty());
  EXPECT_TRUE(pod_annotations->writes.empty());  // nothing is written on pods while automation is off
}

}  // namespace
}  // namespace kubex::controllers
