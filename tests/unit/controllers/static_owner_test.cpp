// The `staticpolicy` controller (SEL-7, RBK-4, OBS-5) with fakes for every dependency: kubex's objects
// (status_fakes.h: a fake API projected and linked into the real catalog), the workloads and their target
// containers (workload_fakes.h), and the owner-annotation writer (annotation_fakes.h). The static result
// itself is decide::static_owner_annotations', table-tested in tests/unit/decide/policy.
#include "controllers/static_owner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "annotation_fakes.h"
#include "kube/runtime/metrics.h"
#include "status_fakes.h"
#include "workload_fakes.h"

namespace kubex::controllers {
namespace {

using namespace test;
using namespace std::chrono_literals;

const json kGpu = {{"nvidia.com/gpu.present", "true"}};
const std::string kKey = "Deployment/ml/infer";
const std::string kRequests = "static.rightsizing.kubex.ai/desired-resource-requests";
const std::string kLimits = "static.rightsizing.kubex.ai/desired-resource-limits";
const std::string kClusterRequests = "cwstatic.rightsizing.kubex.ai/desired-resource-requests";

// A StaticPolicy in `ns` (or a ClusterStaticPolicy for every namespace) over GPU Deployments.
json static_spec(const std::string& strategy, json containers, bool cluster = false) {
  json scope = {{"labelSelector", {{"matchLabels", kGpu}}}, {"workloadTypes", {"Deployment"}}};
  if (cluster) scope["namespaceSelector"] = {{"operator", "In"}, {"values", {"*"}}};
  return {{"automationStrategyRef", {{"name", strategy}}},
          {"scope", scope},
          {"resources", {{"containers", std::move(containers)}}}};
}

class StaticOwnerFixture : public ::testing::Test {
 protected:
  FakeApi api;
  FakeCache cache{&api};
  FakeCatalogView catalog{&cache};
  kube::Metrics metrics;
  std::shared_ptr<FakeWorkloadViews> workloads = std::make_shared<FakeWorkloadViews>();
  std::shared_ptr<FakeAnnotationWriter> writer = std::make_shared<FakeAnnotationWriter>();
  std::unique_ptr<StaticOwnerController> ctl;

  void SetUp() override {
    api.put(kubex_object("AutomationStrategy", "ml", "kai", kai_strategy_spec()));
    api.put(kubex_object("ClusterAutomationStrategy", "", "kai", kai_strategy_spec()));
    StaticOwnerDeps d;
    d.catalog = &catalog;
    d.workloads = workloads;
    d.annotations = writer;
    StaticOwnerOptions o;
    o.metrics = &metrics;
    ctl = std::make_unique<StaticOwnerController>(std::move(d), o);
  }

  // ml/infer with containers app (GPU) and side (none), carrying `annotations`.
  void add_infer(json annotations = json::object()) {
    workloads->items = {annotated_deployment("ml", "infer", kGpu, annotations)};
    workloads->containers[kKey] = {{"app", true}, {"side", false}};
  }

  kube::ReconcileOutcome reconcile(const std::string& key = kKey) {
    cache.sync();
    return ctl->reconcile(key);
  }
  std::string metric_text() { return metrics.render(); }
};

TEST_F(StaticOwnerFixture, WritesTheMergedStaticResult) {  // SEL-7, SEL-6, SEL-8
  api.put(kubex_object("StaticPolicy", "ml", "fixed",
                       static_spec("kai", {{"app", {{"requests", {{"gpu", "0.5"}, {"cpu", "250m"}}},
                                                    {"limits", {{"cpu", "1"}}}}}})));
  json all = {{"*", {{"requests", {{"memory", "1Gi"}, {"gpu", "0.9"}}}}}};
  api.put(kubex_object("ClusterStaticPolicy", "", "mem", static_spec("kai", all, true)));
  add_infer();
  auto r = reconcile();
  ASSERT_TRUE(r) << r.error();
  EXPECT_FALSE(r->requeue);
  ASSERT_EQ(writer->writes.size(), 1u);
  EXPECT_EQ(writer->writes[0].owner, "ml/infer");
  EXPECT_EQ(writer->writes[0].what, "owner annotations");
  // Per slot, the first static policy in SEL-5 order that provides it, under that policy's prefix; the
  // cluster policy's "*" gpu goes to no container (app already has one from the namespaced policy).
  const std::map<std::string, std::string> want = {
      {kRequests, R"({"app":{"cpu":"250m","gpu":"0.5"}})"},
      {kLimits, R"({"app":{"cpu":"1"}})"},
      {kClusterRequests, R"({"app":{"memory":"1Gi"},"side":{"memory":"1Gi"}})"},
  };
  EXPECT_EQ(writer->writes[0].set, want);
  EXPECT_TRUE(writer->writes[0].remove.empty());
}

TEST_F(StaticOwnerFixture, WritesOnlyWhatDiffersAndNothingWhenInSync) {  // SEL-7
  api.put(kubex_object("StaticPolicy", "ml", "fixed",
                       static_spec("kai", {{"app", {{"requests", {{"gpu", "0.5"}, {"cpu", "250m"}}}}}})));
  add_infer({{kRequests, R"({"app":{"cpu":"250m","gpu":"0.5"}})"}});
  auto r = reconcile();
  ASSERT_TRUE(r) << r.error();
  EXPECT_TRUE(writer->writes.empty());
  EXPECT_EQ(writer->calls, 1);  // asked with nothing to change: no request

  // A stale value of a static key the policies no longer provide goes.
  add_infer({{kRequests, R"({"app":{"cpu":"250m","gpu":"0.5"}})"}, {kLimits, R"({"app":{"cpu":"2"}})"}});
  ASSERT_TRUE(reconcile());
  ASSERT_EQ(writer->writes.size(), 1u);
  EXPECT_TRUE(writer->writes[0].set.empty());
  EXPECT_EQ(writer->writes[0].remove, std::vector<std::string>{kLimits});
}

TEST_F(StaticOwnerFixture, StaleAnnotationsOfOtherPrefixesAreRemoved) {  // SEL-7, PRO-5
  api.put(kubex_object("StaticPolicy", "ml", "fixed",
                       static_spec("kai", {{"app", {{"requests", {{"gpu", "0.5"}}}}}})));
  // No reactive or proactive policy matches any more: their values go; other keys stay.
  add_infer({{"gpureactive.rightsizing.kubex.ai/desired-resource-requests", R"({"app":{"gpu":"0.3"}})"},
             {"gpureactive.rightsizing.kubex.ai/reactive-state", "{}"},
             {"cwproactive.rightsizing.kubex.ai/desired-resource-requests", R"({"app":{"gpu":"0.4"}})"},
             {"rightsizing.kubex.ai/rollback-state", "{}"},
             {"team.example/owner", "ml"}});
  ASSERT_TRUE(reconcile());
  ASSERT_EQ(writer->writes.size(), 1u);
  EXPECT_EQ(writer->writes[0].set,
            (std::map<std::string, std::string>{{kRequests, R"({"app":{"gpu":"0.5"}})"}}));
  std::vector<std::string> removed = writer->writes[0].remove;
  std::sort(removed.begin(), removed.end());
  EXPECT_EQ(removed, (std::vector<std::string>{"cwproactive.rightsizing.kubex.ai/desired-resource-requests",
                                               "gpureactive.rightsizing.kubex.ai/desired-resource-requests",
                                               "gpureactive.rightsizing.kubex.ai/reactive-state"}));
}

TEST_F(StaticOwnerFixture, HoldWritesNothing) {  // RBK-4
  // The only matching policy references a strategy that does not exist: invalid, so the owner is on hold.
  api.put(kubex_object("StaticPolicy", "ml", "fixed",
                       static_spec("missing", {{"app", {{"requests", {{"gpu", "0.5"}}}}}})));
  add_infer({{kRequests, R"({"app":{"gpu":"0.25"}})"},
             {"gpureactive.rightsizing.kubex.ai/desired-resource-requests", R"({"app":{"gpu":"0.3"}})"}});
  auto r = reconcile();
  ASSERT_TRUE(r) << r.error();
  EXPECT_FALSE(r->requeue);
  EXPECT_EQ(writer->calls, 0);  // not even an empty write
}

TEST_F(StaticOwnerFixture, NoPolicyRemovesTheStaticValues) {  // RBK-2 via static_owner_annotations
  add_infer({{kRequests, R"({"app":{"gpu":"0.25"}})"}, {"rightsizing.kubex.ai/rollback-state", "{}"}});
  ASSERT_TRUE(reconcile());
  ASSERT_EQ(writer->writes.size(), 1u);
  EXPECT_TRUE(writer->writes[0].set.empty());
  EXPECT_EQ(writer->writes[0].remove, std::vector<std::string>{kRequests});
}

TEST_F(StaticOwnerFixture, CountsOnlyChangedGpuValues) {  // OBS-5
  api.put(kubex_object("StaticPolicy", "ml", "fixed",
                       static_spec("kai", {{"app", {{"requests", {{"gpu", "0.5"}, {"cpu", "250m"}}}}}})));
  add_infer();
  ASSERT_TRUE(reconcile());  // first value: initial
  // The cpu changes, the GPU value stays: a write, but no GPU recommendation.
  add_infer({{kRequests, R"({"app":{"cpu":"100m","gpu":"0.5"}})"}});
  ASSERT_TRUE(reconcile());
  // The GPU value goes up from 0.25.
  add_infer({{kRequests, R"({"app":{"cpu":"250m","gpu":"0.25"}})"}});
  ASSERT_TRUE(reconcile());
  EXPECT_EQ(writer->writes.size(), 3u);
  std::string text = metric_text();
  EXPECT_NE(text.find(R"(kubex_gpu_recommendations_total{direction="initial",policy_kind="StaticPolicy"} 1)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(R"(kubex_gpu_recommendations_total{direction="upsize",policy_kind="StaticPolicy"} 1)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find(R"(direction="downsize")"), std::string::npos) << text;
}

TEST_F(StaticOwnerFixture, DryRunGoesThroughTheWriterAndCountsNothing) {  // ADM-15, OBS-5
  api.put(kubex_object("StaticPolicy", "ml", "fixed",
                       static_spec("kai", {{"app", {{"requests", {{"gpu", "0.5"}}}}}})));
  add_infer();
  writer->result = act::OwnerWrite::kDryRun;  // the engine's writer with --dry-run only logs
  auto r = reconcile();
  ASSERT_TRUE(r) << r.error();
  EXPECT_FALSE(r->requeue);
  ASSERT_EQ(writer->writes.size(), 1u);  // the controller plans as always; the writer decides not to write
  EXPECT_EQ(writer->writes[0].set.at(kRequests), R"({"app":{"gpu":"0.5"}})");
  EXPECT_EQ(metric_text().find("kubex_gpu_recommendations_total{"), std::string::npos);
}

TEST_F(StaticOwnerFixture, StaleCacheRequeuesAndErrorsAreReturned) {  // act::OwnerWrite::kStale (409)
  api.put(kubex_object("StaticPolicy", "ml", "fixed",
                       static_spec("kai", {{"app", {{"requests", {{"gpu", "0.5"}}}}}})));
  add_infer();
  writer->result = act::OwnerWrite::kStale;
  auto r = reconcile();
  ASSERT_TRUE(r) << r.error();
  EXPECT_TRUE(r->requeue);  // again once the informer has the new version
  EXPECT_EQ(metric_text().find("kubex_gpu_recommendations_total{"), std::string::npos);

  writer->result = act::OwnerWrite::kWritten;
  writer->fail = "patching Deployment ml/infer: connection reset";
  auto e = reconcile();
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error(), "patching Deployment ml/infer: connection reset");
}

TEST_F(StaticOwnerFixture, AllEnqueuesEveryWorkloadAndGoneWorkloadsAreDone) {  // SEL-7 resync
  workloads->items = {annotated_deployment("ml", "a", kGpu, json::object()),
                      annotated_deployment("team", "b", kGpu, json::object())};
  auto r = reconcile(StaticOwnerController::kAll);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->requeue_after, 5min);
  std::set<std::string> queued;
  while (auto k = ctl->queue().try_get()) {
    queued.insert(*k);
    ctl->queue().done(*k);
  }
  EXPECT_EQ(queued, (std::set<std::string>{"Deployment/ml/a", "Deployment/team/b"}));
  auto gone = reconcile("Deployment/ml/gone");
  ASSERT_TRUE(gone);
  EXPECT_EQ(writer->calls, 0);
}

}  // namespace
}  // namespace kubex::controllers
