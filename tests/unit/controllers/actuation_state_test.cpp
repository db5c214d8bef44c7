// ACT-9: the ACT-5 "do not retry" record and the ACT-7 back-off survive a restart. The actuation controller keeps
// them on the owner (rightsizing.kubex.ai/actuation-state) when they change; a new controller (a restarted engine,
// a new leader) that reads the owner continues them instead of retrying, and the annotation goes when nothing is
// left to remember. Dry-run writes nothing.
#include <gtest/gtest.h>

#include "act/write_gate.h"
#include "annotation_fakes.h"
#include "api/keys.h"
#include "controllers/actuation.h"
#include "eviction_fixture.h"

namespace kubex::controllers {
namespace {

using namespace test;
using namespace std::chrono_literals;

const char* const kState = api::keys::kActuationState;

class ActuationStateFixture : public EvictionFixture<ActuationController> {
 protected:
  std::shared_ptr<FakeAnnotationWriter> owner = std::make_shared<FakeAnnotationWriter>();
  std::vector<da::PodFacts> pods;
  // ENG-1: when set, the evictor and the owner writer are behind this lease check (as in the engine).
  std::shared_ptr<act::LeaseGuard> lease;
  bool holds = true;

  void SetUp() override {
    seed_kubex_objects();
    json spec = kai_strategy_spec();
    spec["podEviction"] = {{"retryPodDisruptionBudget", false}};  // ACT-5: record the refusal, do not retry
    api.put(kubex_object("ClusterAutomationStrategy", "", "kai", spec));
    pods = {pod("infer-a", 25, clock.now())};
  }

  // A controller as a freshly started engine has it: no memory, the owner carrying `annotations`.
  void start(json annotations = json::object(), bool dry_run = false) {
    ActuationDeps d;
    d.catalog = &catalog;
    d.facts = new_facts(
        {{"metadata", {{"annotations", {{"gpu-fraction", "0.25"}}}}},
         {"spec", {{"schedulerName", "kai-scheduler"}, {"containers", {{{"name", "app"}, {"image", "x"}}}}}}},
        std::move(annotations));
    facts->pod_list = pods;
    d.evictor = lease ? act::gated_evictor(evictor, lease) : evictor;
    d.pod_annotations = pod_annotations;
    d.owner_annotations = lease ? act::gated_annotation_writer(owner, lease) : owner;
    d.events = recorder.get();
    d.webhook = webhook;
    ActuationOptions o;
    o.clock = &clock;
    o.dry_run = dry_run;
    ctl = std::make_unique<ActuationController>(std::move(d), o);
  }

  // The owner's actuation-state after the last write (nullopt when removed or never written).
  std::optional<std::string> state_written() const {
    std::optional<std::string> v;
    for (const auto& w : owner->writes) {
      if (auto it = w.set.find(kState); it != w.set.end()) v = it->second;
      for (const auto& k : w.remove) {
        if (k == kState) v.reset();
      }
    }
    return v;
  }
  json owner_with_state() const { return {{kState, *state_written()}}; }
};

TEST_F(ActuationStateFixture, APdbRefusalRecordedBeforeARestartIsNotRetriedAfterIt) {  // ACT-5, ACT-9
  start();
  evictor->script("ml", "infer-a", {act::test::FakeEvictor::pdb_blocked()});
  ASSERT_TRUE(reconcile());
  ASSERT_EQ(evictor->calls().size(), 1u);
  ASSERT_EQ(owner->writes.size(), 1u);
  EXPECT_EQ(owner->writes[0].owner, "ml/infer");
  EXPECT_EQ(state_written(), R"({"pdbBlocked":{"uid-infer-a":"app=0.5f"}})");
  clock.advance(5min);
  ASSERT_TRUE(reconcile());  // the same engine remembers, and does not write the same value again
  EXPECT_EQ(evictor->calls().size(), 1u);
  EXPECT_EQ(owner->writes.size(), 1u);

  start(owner_with_state());  // restart: the memory is gone, the annotation is not
  clock.advance(5min);
  auto r = reconcile();
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(evictor->calls().size(), 1u);  // not evicted again
  EXPECT_EQ(owner->writes.size(), 1u);     // nothing changed: nothing written

  start();  // control: without the annotation a new engine tries again
  ASSERT_TRUE(reconcile());
  EXPECT_EQ(evictor->calls().size(), 2u);
}

TEST_F(ActuationStateFixture, TheRecordGoesWhenThePodItNamesIsGone) {  // ACT-9: removed when empty
  start({{kState, R"({"pdbBlocked":{"uid-infer-a":"app=0.5f","uid-old":"app=0.5f"}})"}});
  ASSERT_TRUE(reconcile());
  EXPECT_TRUE(evictor->calls().empty());
  ASSERT_EQ(owner->writes.size(), 1u);  // the pod that is gone is dropped
  EXPECT_EQ(state_written(), R"({"pdbBlocked":{"uid-infer-a":"app=0.5f"}})");

  pods = {pod("infer-b", 50, clock.now())};  // the refused pod was replaced (by hand) and is in sync
  start(owner_with_state());
  ASSERT_TRUE(reconcile());
  ASSERT_EQ(owner->writes.size(), 2u);
  EXPECT_TRUE(owner->writes[1].set.empty());
  EXPECT_EQ(owner->writes[1].remove, std::vector<std::string>{kState});
  EXPECT_EQ(owner->writes[1].what, "actuation state");
}

TEST_F(ActuationStateFixture, UnreadableStateIsRemovedAndThePodTriedAgain) {  // VAL-7's spirit
  start({{kState, "{not json"}});
  evictor->script("ml", "infer-a", {act::test::FakeEvictor::evicted()});
  ASSERT_TRUE(reconcile());
  EXPECT_EQ(evictor->calls().size(), 1u);
  ASSERT_EQ(owner->writes.size(), 1u);
  EXPECT_EQ(owner->writes[0].remove, std::vector<std::string>{kState});
}

TEST_F(ActuationStateFixture, TheLoopGuardBackOffSurvivesARestart) {  // ACT-7, ACT-9
  json spec = kai_strategy_spec();  // retryPodDisruptionBudget back to its default
  api.put(kubex_object("ClusterAutomationStrategy", "", "kai", spec));
  start();
  ASSERT_TRUE(reconcile());  // evicts infer-a
  ASSERT_EQ(evictor->calls().size(), 1u);
  EXPECT_TRUE(owner->writes.empty());  // nothing to remember yet
  // Its replacement came without the desired fraction (the webhook failed open).
  clock.advance(2s);
  pods = {pod("infer-c", 25, clock.now())};
  pods[0].created = clock.now();
  pods[0].ready_since = clock.now() - 20s;
  facts->pod_list = pods;
  ASSERT_TRUE(reconcile());
  EXPECT_EQ(evictor->calls().size(), 1u);  // backing off 30s × 2^0
  ASSERT_EQ(owner->writes.size(), 1u);
  const json st = json::parse(*state_written());
  EXPECT_EQ(st["loopGuard"]["k"], 1);
  EXPECT_EQ(st["loopGuard"]["desired"], "app=0.5f");
  EXPECT_TRUE(st["loopGuard"].contains("until"));
  EXPECT_FALSE(st.contains("pdbBlocked"));

  start(owner_with_state());  // restart within the back-off
  clock.advance(20s);
  ASSERT_TRUE(reconcile());
  EXPECT_EQ(evictor->calls().size(), 1u);  // still backing off
  EXPECT_EQ(owner->writes.size(), 1u);

  start();  // control: a new engine without the annotation would evict at once
  ASSERT_TRUE(reconcile());
  EXPECT_EQ(evictor->calls().size(), 2u);

  start(owner_with_state());
  clock.advance(15s);  // past `until`: evictions resume, k stays for the next back-off
  ASSERT_TRUE(reconcile());
  EXPECT_EQ(evictor->calls().size(), 3u);
}

TEST_F(ActuationStateFixture, DryRunWritesNothing) {  // ACT-8
  start({}, /*dry_run=*/true);
  evictor->script("ml", "infer-a", {act::test::FakeEvictor::pdb_blocked()});
  ASSERT_TRUE(reconcile());
  EXPECT_TRUE(evictor->calls().empty());
  EXPECT_EQ(owner->calls, 0);
  start({{kState, R"({"pdbBlocked":{"uid-gone":"app=0.5f"}})"}}, /*dry_run=*/true);
  ASSERT_TRUE(reconcile());
  EXPECT_EQ(owner->calls, 0);  // not even the removal of a stale record
}

TEST_F(ActuationStateFixture, AFailedWriteIsRetriedSoon) {  // ACT-9: the reconcile comes back
  start();
  evictor->script("ml", "infer-a", {act::test::FakeEvictor::pdb_blocked()});
  owner->fail = "conflict";
  auto r = reconcile();
  ASSERT_TRUE(r);
  EXPECT_LE(r->requeue_after, 5s);
  EXPECT_TRUE(owner->writes.empty());
  ASSERT_TRUE(reconcile());
  EXPECT_EQ(state_written(), R"({"pdbBlocked":{"uid-infer-a":"app=0.5f"}})");
}

TEST_F(ActuationStateFixture, AReplicaWithoutTheLeaseSendsNoEvictionAndNoOwnerWrite) {  // ENG-1, ACT-9
  lease = std::make_shared<act::LeaseGuard>(act::write_gate([this] { return holds; }), nullptr,
                                            common::Logger("test"));
  holds = false;  // the lease was lost, the renew deadline has passed
  start({{kState, R"({"pdbBlocked":{"uid-gone":"app=0.5f"}})"}});  // a stale record it would remove
  evictor->script("ml", "infer-a", {act::test::FakeEvictor::pdb_blocked()});
  auto r = reconcile();
  ASSERT_TRUE(r) << r.error();
  EXPECT_TRUE(evictor->calls().empty());
  EXPECT_EQ(owner->calls, 0);
  EXPECT_LE(r->requeue_after, 30s);  // tried again (by the new leader, or by this one if it still leads)
  holds = true;
  clock.advance(30s);
  ASSERT_TRUE(reconcile());
  EXPECT_EQ(evictor->calls().size(), 1u);
  EXPECT_EQ(state_written(), R"({"pdbBlocked":{"uid-infer-a":"app=0.5f"}})");
}

}  // namespace
}  // namespace kubex::controllers
