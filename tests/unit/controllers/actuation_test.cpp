// The `actuation` controller's reconcile (ACT-1, ACT-4, ACT-5, ACT-8, OBS-2, OBS-3) with fakes for every
// dependency: kubex's objects (status_fakes.h), the workload and its pods (ActuationFacts), the evictor
// (act_fakes.h), the pod annotation writer and the event sink. The decision itself is decide::actuation's,
// table-tested in tests/unit/decide/actuation.
#include "controllers/actuation.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "act/pod_annotations.h"
#include "decide/actuation/steps.h"
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

// ACT-3 expectations, driven deterministically: the cache (FakeActuationFacts) lags the evictor, as an informer
// does in the milliseconds after an eviction, and pod events re-run the reconcile in that window (a pause removed,
// the webhook turning healthy after a restart). No second pod and no second eviction of the same pod go out
// until the cache has caught up.
TEST_F(ActuationFixture, ReconcilesBeforeTheCacheSeesAnEvictionNeverExceedTheBudget) {  // ACT-3
  facts->pod_list = {pod("infer-a", 25, clock.now()), pod("infer-b", 25, clock.now())};
  facts->pod_list[0].ready_since = clock.now() - 5min;
  ASSERT_TRUE(reconcile());
  ASSERT_EQ(evictor->calls().size(), 1u);
  EXPECT_EQ(evictor->calls()[0].pod.name, "infer-a");
  // Three more pod events within 30 ms; the cache still shows both pods Running and Ready.
  for (int i = 0; i < 3; ++i) {
    clock.advance(10ms);
    ASSERT_TRUE(reconcile());
  }
  EXPECT_EQ(evictor->calls().size(), 1u) << "a second eviction went out before the cache saw the first";
  // The cache catches up: infer-a terminating. Still in flight (budget 1).
  facts->pod_list[0].terminating = true;
  ASSERT_TRUE(reconcile());
  EXPECT_EQ(evictor->calls().size(), 1u);
  // infer-a gone, its replacement Ready at the new size: now infer-b goes.
  facts->pod_list[0] = pod("infer-c", 50, clock.now());
  facts->pod_list[0].ready_since = clock.now() - 1min;
  ASSERT_TRUE(reconcile());
  ASSERT_EQ(evictor->calls().size(), 2u);
  EXPECT_EQ(evictor->calls()[1].pod.name, "infer-b");
  const std::vector<std::string> seen = reasons();
  EXPECT_EQ(std::count(seen.begin(), seen.end(), "PolicyEvaluationEvictResize"), 2);
}

TEST_F(ActuationFixture, AnEvictionTheCacheNeverShowsIsForgottenAfterTheExpectationTimeout) {  // ACT-3
  facts->pod_list = {pod("infer-a", 25, clock.now())};
  ASSERT_TRUE(reconcile());
  ASSERT_EQ(evictor->calls().size(), 1u);
  clock.advance(1min);
  ASSERT_TRUE(reconcile());
  EXPECT_EQ(evictor->calls().size(), 1u);  // still expected
  clock.advance(decide::actuation::kEvictionExpectationTimeout);
  ASSERT_TRUE(reconcile());
  EXPECT_EQ(evictor->calls().size(), 2u);  // the pod is still there: the eviction did not take, so try again
}

// ACT-2a in the controller: the pool comes from ActuationFacts::gpu_pool only when an upsize is pending, and a
// replacement with no room keeps the pod running with the replacement-does-not-fit constraint.
TEST_F(ActuationFixture, AnUpsizeWithNoRoomEvictsNothingAndSaysWhy) {  // ACT-2a
  facts->pod_list = {pod("infer-a", 25, clock.now()), pod("infer-b", 25, clock.now())};
  decide::packing::PoolNode n;
  n.name = "gpu-1";
  n.gpu_capacity = 1;
  n.ready = true;
  auto on_gpu = [&](const std::string& name, decide::Hundredths h) {
    decide::packing::PoolPod p;
    p.ns = "ml";
    p.name = name;
    p.node = n.name;
    p.fraction = h;
    return p;
  };
  // 0.25 + 0.25 + another workload's 0.5 fill the only GPU: 0.5 for a replacement is not there.
  facts->pool = {{n}, {on_gpu("infer-a", 25), on_gpu("infer-b", 25), on_gpu("other", 50)}};
  ASSERT_TRUE(reconcile());
  EXPECT_TRUE(evictor->calls().empty());
  EXPECT_EQ(facts->pool_reads, 1);
  bool constraint = false;
  for (const auto& w : pod_annotations->writes)
    constraint = constraint || w[2].find("replacement-does-not-fit") != std::string::npos;
  EXPECT_TRUE(constraint) << "the pod carries replacement-does-not-fit";
  // A second GPU node joins: the oldest pod goes, and its constraint is cleared.
  decide::packing::PoolNode n2 = n;
  n2.name = "gpu-2";
  facts->pool.nodes.push_back(n2);
  facts->pool.pods.push_back(on_gpu("warm", 10));
  facts->pool.pods.back().node = "gpu-2";
  clock.advance(1min);
  ASSERT_TRUE(reconcile());
  EXPECT_EQ(evictor->calls().size(), 1u);
}

TEST_F(ActuationFixture, InSyncWorkloadsNeverReadThePool) {  // ACT-2a costs nothing when nothing grows
  facts->pod_list = {pod("infer-a", 50, clock.now()), pod("infer-b", 50, clock.now())};
  ASSERT_TRUE(reconcile());
  EXPECT_EQ(facts->pool_reads, 0);
}

}  // namespace
}  // namespace kubex::controllers
