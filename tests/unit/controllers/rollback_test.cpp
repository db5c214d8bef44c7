// The `rollback` controller's reconcile (RBK-1…RBK-4) with fakes: kubex's objects (status_fakes.h), the
// workload and its pods (actuation_fakes.h), the owner and pod annotation writers, the evictor and the event
// sink. The state machine itself is decide::actuation's, table-tested in tests/unit/decide/actuation.
#include "controllers/rollback.h"

#include <gtest/gtest.h>

#include "annotation_fakes.h"
#include "api/keys.h"
#include "decide/actuation/rollback.h"
#include "eviction_fixture.h"

namespace kubex::controllers {
namespace {

using namespace test;
namespace da = decide::actuation;

const std::string kDesired = "cwstatic.rightsizing.kubex.ai/desired-resource-requests";
const std::string kInfo = R"({"mode":"kai","strategy":"ClusterAutomationStrategy/kai","containers":{"app":{"gpu":)"
                          R"({"from":"1","to":"0.5","source":"ClusterStaticPolicy/half"}}}})";

class RollbackFixture : public EvictionFixture<RollbackController> {
 protected:
  std::shared_ptr<FakeAnnotationWriter> owner = std::make_shared<FakeAnnotationWriter>();

  void SetUp() override {
    seed_kubex_objects();
    make();
  }

  // The Deployment with these owner annotations; its template asks for one whole GPU.
  void make(json owner_annotations = json::object(), bool dry_run = false) {
    const json one_gpu = {{"nvidia.com/gpu", "1"}};
    RollbackDeps d;
    d.catalog = &catalog;
    d.facts = new_facts(
        {{"metadata", json::object()},
         {"spec",
          {{"containers",
            {{{"name", "app"}, {"image", "x"}, {"resources", {{"requests", one_gpu}, {"limits", one_gpu}}}}}}}}},
        owner_annotations);
    d.evictor = evictor;
    d.pod_annotations = pod_annotations;
    d.owner_annotations = owner;
    d.events = recorder.get();
    d.webhook = webhook;
    RollbackOptions o;
    o.clock = &clock;
    o.dry_run = dry_run;
    ctl = std::make_unique<RollbackController>(std::move(d), o);
  }
  // A pod admission resized to 0.5, with its pod-rightsizing-info.
  da::PodFacts resized(const std::string& name) {
    da::PodFacts p = pod(name, 50, clock.now());
    p.annotations[api::keys::kPodRightsizingInfo] = kInfo;
    return p;
  }
  // The rollback-state of a managed workload whose pods run at 0.5.
  std::string managed_state(da::Phase phase = da::Phase::kManaged) {
    da::RollbackState s = da::initial_state("ClusterAutomationStrategy/kai", facts->tmpl);
    s.phase = phase;
    s.last_applied = {{"app", "0.5"}};
    return da::format_rollback_state(s);
  }
  std::optional<da::RollbackState> written_state() {
    for (auto it = owner->writes.rbegin(); it != owner->writes.rend(); ++it) {
      auto v = it->set.find(api::keys::kRollbackState);
      if (v == it->set.end()) continue;
      auto s = da::parse_rollback_state(v->second);
      if (s) return *s;
    }
    return std::nullopt;
  }
};

TEST_F(RollbackFixture, ManagedWorkloadGetsItsStateAndHistory) {  // RBK-1
  facts->pod_list = {resized("infer-a")};
  ASSERT_TRUE(reconcile());
  auto s = written_state();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->phase, da::Phase::kManaged);
  EXPECT_EQ(s->strategy, "ClusterAutomationStrategy/kai");
  EXPECT_EQ(s->original.scheduler_name, "default-scheduler");
  ASSERT_EQ(s->original.containers.count("app"), 1u);
  EXPECT_EQ(s->original.containers.at("app").gpu_request, "1");
  EXPECT_EQ(s->last_applied.at("app"), "0.5");
  ASSERT_EQ(s->history.size(), 1u);  // the Running pod differs from the template's 1
  EXPECT_EQ(s->history[0].from, "1");
  EXPECT_EQ(s->history[0].to, "0.5");
  EXPECT_EQ(s->history[0].mode, "kai");
  EXPECT_EQ(s->history[0].source, "ClusterStaticPolicy/half");
  EXPECT_TRUE(evictor->calls().empty());  // a managed workload is actuation's, not the rollback's
}

TEST_F(RollbackFixture, KeptStateIsNotRewritten) {  // RBK-1: written when it changes only
  make({{api::keys::kRollbackState, managed_state()}});
  facts->pod_list = {resized("infer-a")};
  ASSERT_TRUE(reconcile());
  EXPECT_TRUE(owner->writes.empty());
}

TEST_F(RollbackFixture, LeavingManagementStartsTheRollback) {  // RBK-2
  api.erase(api::Kind::kClusterStaticPolicy, "", "half");
  make({{api::keys::kRollbackState, managed_state()}, {kDesired, R"({"app":{"gpu":"0.5"}})"}});
  facts->pod_list = {resized("infer-a"), resized("infer-b")};
  ASSERT_TRUE(reconcile());
  ASSERT_EQ(owner->writes.size(), 1u);
  EXPECT_EQ(owner->writes[0].remove, std::vector<std::string>{kDesired});  // (1)
  auto s = written_state();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->phase, da::Phase::kRollingBack);
  ASSERT_EQ(evictor->calls().size(), 1u);  // (2) one at a time, through ACT-2…5
  EXPECT_EQ(evictor->calls()[0].reason, act::EvictionReason::kRollback);
  EXPECT_EQ(reasons(), (std::vector<std::string>{"RollbackStarted", "PolicyEvaluationEvictRollback"}));
}

TEST_F(RollbackFixture, RollbackCompletesWhenNoResizedPodIsLeft) {  // RBK-2 (3)
  api.erase(api::Kind::kClusterStaticPolicy, "", "half");
  make({{api::keys::kRollbackState, managed_state(da::Phase::kRollingBack)}});
  facts->pod_list = {pod("infer-c", 0, clock.now())};
  facts->pod_list[0].live = {{"app", 100, false}};  // the replacement, admitted unmutated
  ASSERT_TRUE(reconcile());
  ASSERT_EQ(owner->writes.size(), 1u);
  EXPECT_EQ(owner->writes[0].remove, std::vector<std::string>{api::keys::kRollbackState});
  EXPECT_TRUE(evictor->calls().empty());
  EXPECT_EQ(reasons(), std::vector<std::string>{"RollbackCompleted"});
}

TEST_F(RollbackFixture, ActuationStateGoesWithTheRollbackState) {  // ACT-9: cleared when it leaves management
  api.erase(api::Kind::kClusterStaticPolicy, "", "half");
  make({{api::keys::kRollbackState, managed_state(da::Phase::kRollingBack)},
        {api::keys::kActuationState, R"({"pdbBlocked":{"uid-infer-a":"app=0.5f"}})"}});
  facts->pod_list = {pod("infer-c", 0, clock.now())};
  facts->pod_list[0].live = {{"app", 100, false}};
  ASSERT_TRUE(reconcile());
  ASSERT_EQ(owner->writes.size(), 1u);
  EXPECT_EQ(owner->writes[0].remove,
            (std::vector<std::string>{api::keys::kRollbackState, api::keys::kActuationState}));
}

TEST_F(RollbackFixture, PdbRefusalDuringRollbackIsRetried) {  // RBK-2 through ACT-5
  api.erase(api::Kind::kClusterStaticPolicy, "", "half");
  make({{api::keys::kRollbackState, managed_state(da::Phase::kRollingBack)}});
  facts->pod_list = {resized("infer-a")};
  evictor->script("ml", "infer-a", {act::EvictionResult{act::EvictionResult::Outcome::kPdbBlocked, "refused", "", 429}});
  auto r = reconcile();
  ASSERT_TRUE(r);
  EXPECT_EQ(evictor->calls().size(), 1u);
  EXPECT_EQ(reasons(), std::vector<std::string>{"EvictionBlocked"});
  EXPECT_LE(r->requeue_after, 30s);  // resizeRetryInterval
  EXPECT_TRUE(owner->writes.empty());  // still RollingBack; rollback-state stays until the pods are back
}

TEST_F(RollbackFixture, MatchedAgainDuringRollbackIsManaged) {  // RBK-3
  make({{api::keys::kRollbackState, managed_state(da::Phase::kRollingBack)}});
  facts->pod_list = {resized("infer-a")};
  ASSERT_TRUE(reconcile());
  auto s = written_state();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->phase, da::Phase::kManaged);
  EXPECT_TRUE(evictor->calls().empty());
}

TEST_F(RollbackFixture, HoldDoesNothing) {  // RBK-4
  api.put(kubex_object("ClusterStaticPolicy", "", "half",
                       {{"scope", {{"namespaceSelector", {{"operator", "In"}, {"values", {"ml"}}}},
                                   {"workloadTypes", {"Deployment"}}}},
                        {"resources", {{"containers", {{"*", {{"requests", {{"gpu", "-1"}}}}}}}}},
                        {"automationStrategyRef", {{"name", "kai"}}}}));
  make({{api::keys::kRollbackState, managed_state()}, {kDesired, R"({"app":{"gpu":"0.5"}})"}});
  facts->pod_list = {resized("infer-a")};
  ASSERT_TRUE(reconcile());
  EXPECT_TRUE(owner->writes.empty());
  EXPECT_TRUE(evictor->calls().empty());
}

TEST_F(RollbackFixture, DryRunWritesNothingAndEvictsNothing) {  // RBK-1, ACT-8
  api.erase(api::Kind::kClusterStaticPolicy, "", "half");
  make({{api::keys::kRollbackState, managed_state()}, {kDesired, R"({"app":{"gpu":"0.5"}})"}}, /*dry_run=*/true);
  facts->pod_list = {resized("infer-a")};
  ASSERT_TRUE(reconcile());
  EXPECT_TRUE(owner->writes.empty());
  EXPECT_EQ(reasons(), std::vector<std::string>{"WouldEvict"});
}

TEST_F(RollbackFixture, StrategyWithoutEvictionsEndsTheRollbackAtOnce) {  // RBK-2 (3)
  json spec = kai_strategy_spec();
  spec["podEviction"] = {{"enabled", false}};
  api.put(kubex_object("ClusterAutomationStrategy", "", "kai", spec));
  api.erase(api::Kind::kClusterStaticPolicy, "", "half");
  make({{api::keys::kRollbackState, managed_state()}, {kDesired, R"({"app":{"gpu":"0.5"}})"}});
  facts->pod_list = {resized("infer-a")};
  ASSERT_TRUE(reconcile());
  ASSERT_EQ(owner->writes.size(), 1u);
  auto& remove = owner->writes[0].remove;
  EXPECT_NE(std::find(remove.begin(), remove.end(), api::keys::kRollbackState), remove.end());
  EXPECT_NE(std::find(remove.begin(), remove.end(), kDesired), remove.end());
  EXPECT_TRUE(evictor->calls().empty());
  EXPECT_EQ(reasons(), (std::vector<std::string>{"RollbackStarted", "RollbackCompleted"}));
}

// RBK-2, OBS-3 (issue 26): a pod kubex left as it was (no pod-rightsizing-info) kept the no-gpu-recommendation
// admission recorded while the workload was managed. When the rollback ends, that stale annotation goes, before
// rollback-state does (so a failed pod write is retried).
TEST_F(RollbackFixture, StaleConstraintsOfUntouchedPodsGoWhenTheRollbackEnds) {
  const std::string no_rec =
      R"([{"reason":"no-gpu-recommendation","targets":[{"container":"app","resource":"gpu","usage":"request"}]}])";
  api.erase(api::Kind::kClusterStaticPolicy, "", "half");
  make({{api::keys::kRollbackState, managed_state()}});
  facts->pod_list = {pod("infer-w", 0, clock.now()), pod("infer-x", 0, clock.now())};
  for (auto& p : facts->pod_list) p.live = {{"app", 100, false}};  // whole GPUs, as written
  facts->pod_list[0].annotations[api::keys::kAutomationConstraints] = no_rec;
  ASSERT_TRUE(reconcile());
  EXPECT_EQ(pod_annotations->writes,
            (std::vector<std::vector<std::string>>{{"ml/infer-w", api::keys::kAutomationConstraints, "<removed>"}}));
  ASSERT_EQ(owner->writes.size(), 1u);
  EXPECT_EQ(owner->writes[0].remove, std::vector<std::string>{api::keys::kRollbackState});
  EXPECT_EQ(reasons(), (std::vector<std::string>{"RollbackStarted", "RollbackCompleted"}));

  // While resized pods are still being rolled, the untouched pod's annotation goes with the same reconcile.
  pod_annotations->writes.clear();
  make({{api::keys::kRollbackState, managed_state(da::Phase::kRollingBack)}});
  facts->pod_list = {resized("infer-a"), pod("infer-w", 0, clock.now())};
  facts->pod_list[1].live = {{"app", 100, false}};
  facts->pod_list[1].annotations[api::keys::kAutomationConstraints] = no_rec;
  ASSERT_TRUE(reconcile());
  EXPECT_EQ(pod_annotations->writes,
            (std::vector<std::vector<std::string>>{{"ml/infer-w", api::keys::kAutomationConstraints, "<removed>"}}));
  EXPECT_EQ(evictor->calls().size(), 1u);  // infer-a is rolled as before

  // Dry run: pods are not annotated (ACT-8).
  pod_annotations->writes.clear();
  make({{api::keys::kRollbackState, managed_state()}}, /*dry_run=*/true);
  facts->pod_list = {pod("infer-w", 0, clock.now())};
  facts->pod_list[0].annotations[api::keys::kAutomationConstraints] = no_rec;
  ASSERT_TRUE(reconcile());
  EXPECT_TRUE(pod_annotations->writes.empty());
}

}  // namespace
}  // namespace kubex::controllers
