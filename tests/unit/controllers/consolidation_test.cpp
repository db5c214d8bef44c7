// The consolidation controller whole (SPEC §9 CON-1, CON-7…CON-11, OBS-1, OBS-2) with fakes for its reads and
// writes: a pool snapshot (observe::GpuInventory), the node taints (act::Tainter), evictions (act::Evictor),
// finalizers and the policy status (the same pure merge as act::update_status), and a fake clock.
#include "controllers/consolidation.h"

#include "act/write_gate.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../act/act_fakes.h"
#include "act/finalizers.h"
#include "api/kubex_views.h"
#include "common/clock.h"
#include "decide/policy/scope.h"
#include "global_config_fakes.h"
#include "status_fakes.h"

namespace kubex::controllers {
namespace {

using nlohmann::json;
using test::FakeApi;
using test::FakeStatusWriter;
using test::RecordedEvent;
namespace pk = decide::packing;

constexpr api::Kind kKind = api::Kind::kGpuConsolidationPolicy;

json policy_json(const std::string& name, const std::string& pool, const std::string& requeue = "30s") {
  return {{"apiVersion", "rightsizing.kubex.ai/v1alpha1"},
          {"kind", "GpuConsolidationPolicy"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"experimental", {{"gpuKaiContract", "v1alpha1-2026-07"}}},
            {"nodeSelector", {{"matchLabels", {{"pool", pool}}}}},
            {"utilizationThresholdPercent", 75},
            {"requeueAfter", requeue}}}};
}

// The policies of FakeApi, projected on every call (a cache that is always in sync).
class FakePolicies final : public ConsolidationPolicies {
 public:
  explicit FakePolicies(FakeApi* api) : api_(api) {}
  std::vector<std::shared_ptr<const api::ConsolidationObject>> list() const override {
    std::vector<std::shared_ptr<const api::ConsolidationObject>> out;
    for (const auto& [path, obj] : api_->objects) {
      if (obj.value("kind", "") != "GpuConsolidationPolicy") continue;
      out.push_back(std::static_pointer_cast<const api::ConsolidationObject>(api::project_kubex_object(kKind, obj)));
    }
    return out;
  }

 private:
  FakeApi* api_;
};

class FakeFinalizers final : public act::FinalizerWriter {
 public:
  explicit FakeFinalizers(FakeApi* api) : api_(api) {}
  kube::KResult<void> add(const std::string& path, const std::string& f) override {
    auto it = api_->objects.find(path);
    if (it == api_->objects.end()) return std::unexpected(kube::ApiStatus{404, "NotFound", "", 0});
    json& fin = it->second["metadata"]["finalizers"];
    if (!fin.is_array()) fin = json::array();
    for (const auto& x : fin) {
      if (x == f) return {};
    }
    fin.push_back(f);
    return {};
  }
  kube::KResult<void> remove(const std::string& path, const std::string& f) override {
    auto it = api_->objects.find(path);
    if (it == api_->objects.end()) return {};
    json kept = json::array();
    for (const auto& x : it->second["metadata"].value("finalizers", json::array())) {
      if (x != f) kept.push_back(x);
    }
    it->second["metadata"]["finalizers"] = kept;
    // Like the API server: a deleting object without finalizers is gone.
    if (kept.empty() && it->second["metadata"].contains("deletionTimestamp")) api_->objects.erase(it);
    return {};
  }

 private:
  FakeApi* api_;
};

// The pool as observe::GpuInventory gives it: `pool` with the fake tainter's taints on its nodes, the nodes
// filtered by the policy's selector (CON-1).
class FakeInventory final : public observe::GpuInventory {
 public:
  FakeInventory(const pk::Pool* pool, const act::test::FakeTainter* tainter) : pool_(pool), tainter_(tainter) {}
  pk::Pool pool(const api::LabelSelector& selector, const std::string&) const override {
    pk::Pool out;
    auto taints = tainter_->taints();
    for (pk::PoolNode n : pool_->nodes) {
      if (!decide::policy::selector_matches(selector, n.labels, true)) continue;
      if (auto it = taints.find(n.name); it != taints.end()) {
        n.taints.push_back({pk::kConsolidatingTaint, it->second, "NoSchedule"});
        n.consolidating_policy = it->second;
      }
      out.nodes.push_back(n);
    }
    for (const auto& p : pool_->pods) {
      for (const auto& n : out.nodes) {
        if (n.name == p.node) out.pods.push_back(p);
      }
    }
    return out;
  }
  std::vector<observe::ConsolidationTaint> consolidation_taints() const override {
    std::vector<observe::ConsolidationTaint> out;
    for (const auto& [node, policy] : tainter_->taints()) out.push_back({node, policy});
    return out;
  }

 private:
  const pk::Pool* pool_;
  const act::test::FakeTainter* tainter_;
};

pk::PoolNode node(const std::string& name, const std::string& pool = "t4", int gpus = 1) {
  pk::PoolNode n;
  n.name = name;
  n.gpu_capacity = gpus;
  n.cpu_millis = 16000;
  n.memory_bytes = 64LL << 30;
  n.labels = {{"pool", pool}};
  n.ready = true;
  return n;
}

pk::PoolPod pod(const std::string& name, const std::string& on, int hundredths) {
  pk::PoolPod p;
  p.ns = "ml";
  p.name = name;
  p.node = on;
  p.fraction = hundredths;
  p.cpu_millis = 100;
  p.memory_bytes = 1 << 20;
  return p;
}

class ConsolidationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // SPEC §9 example: n1 0.5 + 0.25, n2 0.25, n3 0.5 (one T4 each).
    pool.nodes = {node("n1"), node("n2"), node("n3")};
    pool.pods = {pod("p1a", "n1", 50), pod("p1b", "n1", 25), pod("p2", "n2", 25), pod("p3", "n3", 50)};
    api.put(policy_json("t4", "t4"));
    make();
  }
  void make(bool dry_run = false) {
    evictor = std::make_shared<act::test::FakeEvictor>();
    evictor->dry_run = dry_run;
    ConsolidationDeps d;
    d.policies = std::make_shared<FakePolicies>(&api);
    d.inventory = std::make_unique<FakeInventory>(&pool, tainter.get());
    d.tainter = lease ? act::gated_tainter(tainter, lease) : tainter;  // ENG-1: as the engine wires it
    d.evictor = lease ? act::gated_evictor(evictor, lease) : evictor;
    d.status = std::make_shared<FakeStatusWriter>(&api);
    d.finalizers = std::make_shared<FakeFinalizers>(&api);
    events_recorder = test::recorder(&events, &clock);
    d.events = events_recorder.get();
    ConsolidationOptions o;
    o.dry_run = dry_run;
    o.clock = &clock;
    ctrl = std::make_unique<ConsolidationController>(std::move(d), o);
  }
  json status(const std::string& name = "t4") { return api.status(kKind, "", name); }
  json available(const std::string& name = "t4") { return api.condition(kKind, "", name, "Available"); }
  std::vector<std::string> reasons() {
    events_recorder->flush();
    std::vector<std::string> out;
    for (const auto& e : events) out.push_back(e.kind + "/" + e.name + ":" + e.type + ":" + e.reason);
    return out;
  }
  // The pods of `from` move to `to` (what the scheduler does after the evictions).
  void move_pods(const std::string& from, const std::string& to) {
    for (auto& p : pool.pods) {
      if (p.node == from) p.node = to;
    }
  }
  bool has_event(const std::string& text) {
    auto r = reasons();
    return std::find(r.begin(), r.end(), text) != r.end();
  }

  common::FakeClock clock;
  FakeApi api;
  pk::Pool pool;
  std::shared_ptr<act::test::FakeTainter> tainter = std::make_shared<act::test::FakeTainter>();
  std::shared_ptr<act::test::FakeEvictor> evictor;
  std::vector<RecordedEvent> events;
  std::unique_ptr<kube::EventRecorder> events_recorder;
  std::unique_ptr<ConsolidationController> ctrl;
  std::shared_ptr<act::LeaseGuard> lease;  // null: no lease check
};

TEST_F(ConsolidationTest, AReplicaWithoutTheLeaseNeitherTaintsNorEvicts) {  // ENG-1, ACT-9
  bool holds = false;
  lease = std::make_shared<act::LeaseGuard>(act::write_gate([&holds] { return holds; }), nullptr,
                                            common::Logger("test"));
  make();
  auto r = ctrl->reconcile("t4");  // the refused taint is an error: the reconcile is tried again
  EXPECT_FALSE(r.has_value());
  EXPECT_TRUE(tainter->calls().empty());
  EXPECT_TRUE(tainter->taints().empty());
  EXPECT_TRUE(evictor->calls().empty());
  holds = true;
  ASSERT_TRUE(ctrl->reconcile("t4").has_value());
  EXPECT_EQ(tainter->taints(), (std::map<std::string, std::string>{{"n2", "t4"}}));
}

TEST_F(ConsolidationTest, DrainsTheFirstFeasibleCandidate) {  // CON-7, CON-11, SPEC §9 example step 1-2
  auto r = ctrl->reconcile("t4");
  ASSERT_TRUE(r.has_value()) << r.error();
  EXPECT_EQ(tainter->taints(), (std::map<std::string, std::string>{{"n2", "t4"}}));
  ASSERT_EQ(evictor->called_keys(), std::vector<std::string>{"ml/p2"});
  EXPECT_EQ(evictor->calls()[0].reason, act::EvictionReason::kConsolidation);
  json s = status();
  EXPECT_EQ(s["drainingNode"], "n2");
  EXPECT_TRUE(s.contains("drainStartTime"));
  EXPECT_EQ(s["poolNodes"], 3);
  EXPECT_EQ(s["gpuCapacity"], 3);
  EXPECT_EQ(s["gpuAllocated"], "1.50");
  EXPECT_EQ(s["estimatedReclaimableGPUs"], 1);
  EXPECT_TRUE(s.contains("lastEvaluationTime"));
  EXPECT_EQ(available()["status"], "True");
  EXPECT_EQ(available()["reason"], "Draining");
  EXPECT_EQ(ctrl->draining("t4"), "n2");
  EXPECT_TRUE(has_event("GpuConsolidationPolicy/t4:Normal:DrainStarted"));
  EXPECT_TRUE(has_event("Node/n2:Normal:DrainStarted"));
  // CON-9: the finalizer is on the policy.
  EXPECT_EQ(api.at(kKind, "", "t4")["metadata"]["finalizers"], json::array({"rightsizing.kubex.ai/consolidation-cleanup"}));
}

TEST_F(ConsolidationTest, EndOfDrainRemovesTheTaintAndReportsDrained) {  // CON-8, then CON-10 (example step 3)
  ASSERT_TRUE(ctrl->reconcile("t4").has_value());
  clock.advance(std::chrono::seconds(5));
  // Still there: evicted again (CON-7 (3)), still Draining, no new candidate looked at (CON-9).
  ASSERT_TRUE(ctrl->reconcile("t4").has_value());
  EXPECT_EQ(evictor->called_keys(), (std::vector<std::string>{"ml/p2", "ml/p2"}));
  EXPECT_EQ(available()["reason"], "Draining");
  EXPECT_EQ(tainter->adds(), 1);
  move_pods("n2", "n1");
  clock.advance(std::chrono::seconds(5));
  ASSERT_TRUE(ctrl->reconcile("t4").has_value());
  EXPECT_TRUE(tainter->taints().empty());
  json s = status();
  EXPECT_EQ(s["lastDrainedNode"], "n2");
  EXPECT_TRUE(s.contains("lastDrainTime"));
  EXPECT_FALSE(s.contains("drainingNode"));
  EXPECT_FALSE(s.contains("drainStartTime"));
  EXPECT_EQ(available()["reason"], "Drained");
  EXPECT_EQ(ctrl->draining("t4"), "");
  EXPECT_TRUE(has_event("GpuConsolidationPolicy/t4:Normal:DrainCompleted"));
  EXPECT_TRUE(has_event("Node/n2:Normal:DrainCompleted"));
  // Next reconcile: n3's 0.5 does not fit on n1 (full) and n2 is empty, so no candidate (CON-10).
  clock.advance(std::chrono::seconds(30));
  ASSERT_TRUE(ctrl->reconcile("t4").has_value());
  EXPECT_EQ(available()["reason"], "NoCandidate");
  EXPECT_EQ(available()["message"],
            "pool: 3 nodes, 3 GPUs, 1.50 allocated; best candidate n3 (50%): pod ml/p3 (0.5) does not fit");
  EXPECT_TRUE(tainter->taints().empty());
}

TEST_F(ConsolidationTest, DrainBlockedAfterTheTimeout) {  // CON-8
  evictor->script("ml", "p2", {act::test::FakeEvictor::pdb_blocked()});
  ASSERT_TRUE(ctrl->reconcile("t4").has_value());
  clock.advance(std::chrono::minutes(9));
  ASSERT_TRUE(ctrl->reconcile("t4").has_value());  // a 429 is retried (CON-7 (3))
  EXPECT_EQ(evictor->called_keys().size(), 2u);
  EXPECT_EQ(available()["reason"], "Draining");
  EXPECT_NE(available()["message"].get<std::string>().find("refused by a PodDisruptionBudget"), std::string::npos);
  clock.advance(std::chrono::minutes(1));
  ASSERT_TRUE(ctrl->reconcile("t4").has_value());
  EXPECT_TRUE(tainter->taints().empty());
  EXPECT_EQ(available()["reason"], "DrainBlocked");
  EXPECT_NE(available()["message"].get<std::string>().find("ml/p2"), std::string::npos);
  EXPECT_FALSE(status().contains("drainingNode"));
  EXPECT_FALSE(status().contains("lastDrainedNode"));
  EXPECT_TRUE(has_event("GpuConsolidationPolicy/t4:Warning:DrainBlocked"));
}

TEST_F(ConsolidationTest, EmptyPoolIsNoMatchingNodeSelector) {  // CON-1
  api.put(policy_json("none", "a100"));
  ASSERT_TRUE(ctrl->reconcile("none").has_value());
  EXPECT_EQ(available("none")["status"], "False");
  EXPECT_EQ(available("none")["reason"], "NoMatchingNodeSelector");
  EXPECT_EQ(status("none")["poolNodes"], 0);
  EXPECT_TRUE(tainter->calls().empty());
  EXPECT_TRUE(evictor->calls().empty());
}

TEST_F(ConsolidationTest, NoCandidateNamesTheReason) {  // CON-10
  pool.pods = {pod("p1", "n1", 80), pod("p2", "n2", 90), pod("p3", "n3", 85)};
  ASSERT_TRUE(ctrl->reconcile("t4").has_value());
  EXPECT_EQ(available()["reason"], "NoCandidate");
  EXPECT_EQ(available()["message"], "pool: 3 nodes, 3 GPUs, 2.55 allocated; no node below 75% with movable GPU pods");
  EXPECT_TRUE(tainter->calls().empty());
}

TEST_F(ConsolidationTest, DryRunWouldDrainWithoutTaintOrEviction) {  // CON-11
  make(/*dry_run=*/true);
  ASSERT_TRUE(ctrl->reconcile("t4").has_value());
  EXPECT_TRUE(tainter->calls().empty());
  EXPECT_TRUE(evictor->calls().empty());
  EXPECT_EQ(available()["reason"], "WouldDrain");
  EXPECT_NE(available()["message"].get<std::string>().find("n2"), std::string::npos);
  EXPECT_FALSE(status().contains("drainingNode"));
  EXPECT_TRUE(has_event("GpuConsolidationPolicy/t4:Normal:WouldDrain"));
}

TEST_F(ConsolidationTest, OneDrainAtATimeAcrossPolicies) {  // CON-9
  api.put(policy_json("all", "t4"));  // overlaps "t4": the same nodes
  ASSERT_TRUE(ctrl->reconcile("t4").has_value());
  EXPECT_EQ(ctrl->draining("t4"), "n2");
  ASSERT_TRUE(ctrl->reconcile("all").has_value());
  EXPECT_EQ(ctrl->draining("all"), "");
  EXPECT_EQ(tainter->adds(), 1);  // never a second taint while one drain runs
  EXPECT_EQ(evictor->called_keys(), std::vector<std::string>{"ml/p2"});
  // Once "t4" is done, "all" may drain, but never a node another policy has tainted.
  move_pods("n2", "n1");
  ASSERT_TRUE(ctrl->reconcile("t4").has_value());
  tainter->set("n3", "t4");  // e.g. another engine's drain: the node is skipped (CON-7 (1))
  ASSERT_TRUE(ctrl->reconcile("all").has_value());
  for (const auto& c : tainter->calls()) EXPECT_FALSE(c.op == "add" && c.policy == "all" && c.node == "n3");
  EXPECT_EQ(ctrl->draining("all"), "");
}

TEST_F(ConsolidationTest, PoliciesOverDisjointPoolsDrainSideBySide) {  // CON-9 is per policy
  // A second pool "a10" shaped like the T4 one: its policy's drain does not wait for the T4 drain.
  pool.nodes.push_back(node("m1", "a10"));
  pool.nodes.push_back(node("m2", "a10"));
  pool.pods.push_back(pod("q1", "m1", 50));
  pool.pods.push_back(pod("q2", "m2", 25));
  api.put(policy_json("a10", "a10"));
  ASSERT_TRUE(ctrl->reconcile("t4").has_value());
  ASSERT_TRUE(ctrl->reconcile("a10").has_value());
  EXPECT_EQ(ctrl->draining("t4"), "n2");
  EXPECT_EQ(ctrl->draining("a10"), "m2");
  EXPECT_EQ(available("a10")["reason"], "Draining");
  EXPECT_EQ(evictor->called_keys(), (std::vector<std::string>{"ml/p2", "ml/q2"}));
}

TEST_F(ConsolidationTest, TaintConflictIsRetriedOnTheNextReconcile) {  // CON-7 (1): resourceVersion-guarded
  tainter->conflicts = 1;
  ASSERT_TRUE(ctrl->reconcile("t4").has_value());
  EXPECT_TRUE(tainter->taints().empty());
  EXPECT_TRUE(evictor->calls().empty());
  EXPECT_EQ(ctrl->draining("t4"), "");
  ASSERT_TRUE(ctrl->reconcile("t4").has_value());
  EXPECT_EQ(ctrl->draining("t4"), "n2");
}

TEST_F(ConsolidationTest, DeletingThePolicyRemovesItsTaint) {  // CON-9 finalizer
  ASSERT_TRUE(ctrl->reconcile("t4").has_value());
  ASSERT_EQ(tainter->taints().size(), 1u);
  api.at(kKind, "", "t4")["metadata"]["deletionTimestamp"] = "2027-01-15T08:00:00Z";
  ASSERT_TRUE(ctrl->reconcile("t4").has_value());
  EXPECT_TRUE(tainter->taints().empty());
  EXPECT_EQ(api.objects.count(api::object_path(kKind, "", "t4")), 0u);  // finalizer released
  EXPECT_EQ(ctrl->draining("t4"), "");
}

TEST_F(ConsolidationTest, SweepRemovesOrphanedTaints) {  // CON-9
  tainter->set("n3", "gone-policy");
  tainter->set("n1", "t4");  // a known policy's taint is left for that policy to handle until it reconciled
  ASSERT_TRUE(ctrl->reconcile(ConsolidationController::kSweep).has_value());
  EXPECT_EQ(tainter->taints(), (std::map<std::string, std::string>{{"n1", "t4"}}));
}

TEST_F(ConsolidationTest, DryRunSweepWritesNothing) {  // CON-11, CON-9
  make(/*dry_run=*/true);
  tainter->set("n3", "gone-policy");
  ASSERT_TRUE(ctrl->reconcile(ConsolidationController::kSweep).has_value());
  EXPECT_TRUE(tainter->calls().empty());
  EXPECT_EQ(tainter->taints().size(), 1u);
}

TEST_F(ConsolidationTest, DrainRecoveredFromStatusAfterRestart) {  // CON-9: still one drain after a restart
  ASSERT_TRUE(ctrl->reconcile("t4").has_value());
  make();  // a new engine (leader): memory is gone, status and taint remain
  ASSERT_TRUE(ctrl->reconcile("t4").has_value());
  EXPECT_EQ(ctrl->draining("t4"), "n2");
  EXPECT_EQ(tainter->adds(), 1);
  EXPECT_EQ(available()["reason"], "Draining");
}

TEST_F(ConsolidationTest, ItsOwnTaintWithoutDrainingNodeIsTheDrainUnderWayAfterRestart) {  // CON-7, CON-9
  // The leader died between the taint (CON-7 (1)) and the drainingNode write (CON-7 (2)), or that write failed:
  // the next leader finds the policy's taint on n2 and no drainingNode. n4 would be the next candidate (20 %, its
  // pod fits elsewhere); tainting it too would be two drains of one policy at once.
  pool.nodes.push_back(node("n4"));
  pool.pods.push_back(pod("p4", "n4", 20));
  tainter->set("n2", "t4");
  make();
  ASSERT_TRUE(ctrl->reconcile("t4").has_value());
  EXPECT_EQ(tainter->taints(), (std::map<std::string, std::string>{{"n2", "t4"}}));
  EXPECT_EQ(tainter->adds(), 0);
  EXPECT_EQ(ctrl->draining("t4"), "n2");
  EXPECT_EQ(available()["reason"], "Draining");
  EXPECT_EQ(status()["drainingNode"], "n2");
  EXPECT_EQ(evictor->called_keys(), std::vector<std::string>{"ml/p2"});  // the drain goes on
  // The sweep leaves the taint of the drain under way alone.
  ASSERT_TRUE(ctrl->reconcile(ConsolidationController::kSweep).has_value());
  EXPECT_EQ(tainter->taints(), (std::map<std::string, std::string>{{"n2", "t4"}}));
}

TEST_F(ConsolidationTest, InvalidPolicyIsLeftToValidation) {  // CON-11: InvalidSpec/InvalidContract stay
  json bad = policy_json("bad", "t4");
  bad["spec"]["experimental"]["gpuKaiContract"] = "none";
  api.put(bad);
  ASSERT_TRUE(ctrl->reconcile("bad").has_value());
  EXPECT_TRUE(available("bad").is_null());
  EXPECT_TRUE(tainter->calls().empty());
}

}  // namespace
}  // namespace kubex::controllers

namespace kubex::controllers {
namespace {

TEST_F(ConsolidationTest, ADestinationFilledDuringTheDrainAbortsItBeforeTheNextEviction) {  // CON-7a
  evictor->script("ml", "p2", {act::test::FakeEvictor::pdb_blocked()});
  ASSERT_TRUE(ctrl->reconcile("t4").has_value());
  ASSERT_EQ(tainter->taints(), (std::map<std::string, std::string>{{"n2", "t4"}}));
  ASSERT_EQ(evictor->called_keys().size(), 1u);  // refused by a PDB: p2 is still on n2
  // Meanwhile new pods fill the room p2 was to take (n1 at 1.00, n3 at 1.00).
  pool.pods.push_back(pod("new1", "n1", 25));
  pool.pods.push_back(pod("new3", "n3", 50));
  clock.advance(std::chrono::seconds(5));
  ASSERT_TRUE(ctrl->reconcile("t4").has_value());
  EXPECT_EQ(evictor->called_keys().size(), 1u) << "no eviction once the drain no longer fits";
  EXPECT_TRUE(tainter->taints().empty());
  EXPECT_EQ(available()["reason"], "DrainAborted");
  EXPECT_EQ(available()["message"], "drain of node n2 aborted: pod ml/p2 (0.25) does not fit; its taint was removed");
  EXPECT_FALSE(status().contains("drainingNode"));
  EXPECT_EQ(ctrl->draining("t4"), "");
  EXPECT_TRUE(has_event("GpuConsolidationPolicy/t4:Warning:DrainAborted"));
}

TEST_F(ConsolidationTest, StatusListsTheGpuModelsOfThePool) {  // CON-5a
  for (auto& n : pool.nodes) n.labels["nvidia.com/gpu.product"] = n.name == "n3" ? "L4" : "T4";
  ASSERT_TRUE(ctrl->reconcile("t4").has_value());
  EXPECT_EQ(status()["gpuModels"], json::parse(R"([{"product":"L4","nodes":1},{"product":"T4","nodes":2}])"));
}

}  // namespace
}  // namespace kubex::controllers
