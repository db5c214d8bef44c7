// The `policystatus` controller: AutomationStrategyResolved / Ready / matchedWorkloads / lastEvaluationTime
// of the managing policies (OBS-1), StrategyNotFound then StrategyResolved events (OBS-2), strategy changes
// reaching the policies that reference them, SEL-3 counting over the caches, VAL-6 requeues, and no
// clobbering of the reactive recommender's PrometheusQueryFailed. Fake API and caches (fakes.h), fake clock.
#include "controllers/policy_status.h"

#include <gtest/gtest.h>

#include <set>

#include "common/time_format.h"
#include "kube/runtime/metrics.h"
#include "status_fakes.h"
#include "workload_fakes.h"

namespace kubex::controllers {
namespace {

using namespace test;
using namespace std::chrono_literals;
using K = api::Kind;

const json kGpu = {{"nvidia.com/gpu.present", "true"}};

// Whatever the workload reads throw stays inside the reconcile.
class ThrowingWorkloads final : public observe::WorkloadViews {
 public:
  std::vector<std::shared_ptr<const api::WorkloadView>> list() const override { throw std::bad_alloc(); }
  std::shared_ptr<const api::WorkloadView> find(const std::string&) const override { throw std::bad_alloc(); }
  std::vector<decide::policy::TargetContainer> target_containers(const api::WorkloadView&) const override {
    throw std::bad_alloc();
  }
};

class PolicyFixture : public ::testing::Test {
 protected:
  FakeApi api;
  FakeCache cache{&api};
  FakeCatalogView cache_view{&cache};
  common::FakeClock clock;
  std::vector<json> events;
  kube::Metrics metrics;
  std::shared_ptr<FakeWorkloadViews> workloads = std::make_shared<FakeWorkloadViews>();
  std::unique_ptr<kube::EventRecorder> recorder;
  std::shared_ptr<PolicyStatusController> ctl;

  void SetUp() override { restart(); }

  void restart() {
    kube::EventRecorderOptions eo;
    eo.clock = &clock;
    recorder = std::make_unique<kube::EventRecorder>(std::make_unique<FakeEventSink>(&events), eo);
    PolicyStatusDeps d;
    d.writer = std::make_unique<FakeStatusWriter>(&api);
    d.events = recorder.get();
    d.catalog = &cache_view;
    d.workloads = workloads;
    d.clock = &clock;
    d.metrics = &metrics;
    ctl = std::make_shared<PolicyStatusController>(std::move(d));
  }

  kube::ReconcileOutcome reconcile(const std::string& key) {
    cache.sync();
    auto r = ctl->reconcile(key);
    recorder->flush();
    return r;
  }

  // Every key waiting in the controller's queue (including the coalesced workload events, due after 1s).
  std::set<std::string> queued() {
    clock.advance(PolicyStatusController::kWorkloadCoalesce);
    std::set<std::string> out;
    while (auto k = ctl->controller().queue().try_get()) {
      out.insert(*k);
      ctl->controller().queue().done(*k);
    }
    return out;
  }
};

TEST_F(PolicyFixture, MissingStrategyThenCreatedFlipsWithoutRestart) {  // OBS-1, OBS-2, API-3, VAL-6
  api.put(kubex_object("GpuReactivePolicy", "ml", "reactive", reactive_spec("gpu")));
  workloads->items = {deployment("ml", "train", kGpu)};
  auto r = reconcile("GpuReactivePolicy/ml/reactive");
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->requeue_after, std::chrono::minutes(5));  // not valid (SEL-4): VAL-6 requeue
  const std::string missing = "AutomationStrategy \"gpu\" not found in namespace \"ml\"";
  json resolved = api.condition(K::kGpuReactivePolicy, "ml", "reactive", "AutomationStrategyResolved");
  EXPECT_EQ(resolved["status"], "False");
  EXPECT_EQ(resolved["reason"], "StrategyNotFound");
  EXPECT_EQ(resolved["message"], missing);
  json ready = api.condition(K::kGpuReactivePolicy, "ml", "reactive", "Ready");
  EXPECT_EQ(ready["status"], "False");
  EXPECT_EQ(ready["reason"], "StrategyNotFound");
  json status = api.status(K::kGpuReactivePolicy, "ml", "reactive");
  EXPECT_EQ(status["matchedWorkloads"], 1);  // the scope evaluates even while the strategy is missing
  EXPECT_EQ(status["lastEvaluationTime"], common::format_rfc3339(clock.now()));
  EXPECT_EQ(status["observedGeneration"], 1);
  EXPECT_EQ(summarize(events),
            (std::vector<std::vector<std::string>>{{"Warning", "StrategyNotFound", missing}}));
  EXPECT_EQ(events[0]["involvedObject"]["kind"], "GpuReactivePolicy");
  EXPECT_EQ(events[0]["involvedObject"]["namespace"], "ml");

  // Requeue after 5m: same conditions, no second event.
  clock.advance(5min);
  reconcile("GpuReactivePolicy/ml/reactive");
  EXPECT_EQ(events.size(), 1u);
  EXPECT_EQ(api.status(K::kGpuReactivePolicy, "ml", "reactive")["lastEvaluationTime"],
            common::format_rfc3339(clock.now()));

  // A strategy of that name elsewhere changes nothing; the right one enqueues the policy.
  api.put(kubex_object("AutomationStrategy", "other", "gpu", kai_strategy_spec()));
  cache.sync();
  ctl->strategy_changed(K::kAutomationStrategy, "other", "gpu");
  ctl->strategy_changed(K::kClusterAutomationStrategy, "", "gpu");
  EXPECT_TRUE(queued().empty());
  api.put(kubex_object("AutomationStrategy", "ml", "gpu", kai_strategy_spec()));
  cache.sync();
  ctl->strategy_changed(K::kAutomationStrategy, "ml", "gpu");
  EXPECT_EQ(queued(), std::set<std::string>{"GpuReactivePolicy/ml/reactive"});

  const json stamped_while_invalid = api.status(K::kGpuReactivePolicy, "ml", "reactive")["lastEvaluationTime"];
  clock.advance(1min);
  r = reconcile("GpuReactivePolicy/ml/reactive");
  EXPECT_EQ(r->requeue_after, common::Duration::zero());
  // REA-1: valid now, the policy is evaluated by its reactive cycles, which write lastEvaluationTime (`kubex
  // explain` counts the next cycle from it); this controller leaves it alone.
  EXPECT_EQ(api.status(K::kGpuReactivePolicy, "ml", "reactive")["lastEvaluationTime"], stamped_while_invalid);
  resolved = api.condition(K::kGpuReactivePolicy, "ml", "reactive", "AutomationStrategyResolved");
  EXPECT_EQ(resolved["status"], "True");
  EXPECT_EQ(resolved["reason"], "Resolved");
  ready = api.condition(K::kGpuReactivePolicy, "ml", "reactive", "Ready");
  EXPECT_EQ(ready["status"], "True");
  EXPECT_EQ(ready["reason"], "Reconciled");
  EXPECT_EQ(summarize(events), (std::vector<std::vector<std::string>>{
                                   {"Warning", "StrategyNotFound", missing},
                                   {"Normal", "StrategyResolved", "AutomationStrategy \"gpu\" resolved"}}));

  // A restart re-reconciles everything and repeats no event.
  restart();
  reconcile("GpuReactivePolicy/ml/reactive");
  EXPECT_EQ(events.size(), 2u);

  // Deleting the strategy: back to StrategyNotFound, with its event.
  api.erase(K::kAutomationStrategy, "ml", "gpu");
  cache.sync();
  ctl->strategy_changed(K::kAutomationStrategy, "ml", "gpu");
  EXPECT_EQ(queued(), std::set<std::string>{"GpuReactivePolicy/ml/reactive"});
  reconcile("GpuReactivePolicy/ml/reactive");
  EXPECT_EQ(summarize(events).back(), (std::vector<std::string>{"Warning", "StrategyNotFound", missing}));
}

TEST_F(PolicyFixture, ClusterPolicyAndInvalidStrategy) {  // OBS-1 StrategyInvalid / InvalidContract, SEL-4
  json bad = kai_strategy_spec();
  bad["experimental"]["gpuKaiContract"] = "v1alpha1-2026-04";
  api.put(kubex_object("ClusterAutomationStrategy", "", "kai", bad));
  api.put(kubex_object("ClusterGpuReactivePolicy", "", "reactive", reactive_spec("kai", true)));
  auto r = reconcile("ClusterGpuReactivePolicy/reactive");
  EXPECT_EQ(r->requeue_after, std::chrono::minutes(5));
  const std::string msg =
      "ClusterAutomationStrategy \"kai\" is invalid: spec.experimental.gpuKaiContract: unsupported value "
      "\"v1alpha1-2026-04\": the only accepted GPU/KAI contract is \"v1alpha1-2026-07\"";
  json resolved = api.condition(K::kClusterGpuReactivePolicy, "", "reactive", "AutomationStrategyResolved");
  EXPECT_EQ(resolved["reason"], "InvalidContract");
  EXPECT_EQ(resolved["message"], msg);
  EXPECT_EQ(api.condition(K::kClusterGpuReactivePolicy, "", "reactive", "Ready")["reason"],
            "InvalidContract");
  EXPECT_EQ(summarize(events), (std::vector<std::vector<std::string>>{{"Warning", "InvalidContract", msg}}));

  // Missing cluster strategy: the cluster form of the message.
  api.erase(K::kClusterAutomationStrategy, "", "kai");
  reconcile("ClusterGpuReactivePolicy/reactive");
  EXPECT_EQ(
      api.condition(K::kClusterGpuReactivePolicy, "", "reactive", "AutomationStrategyResolved")["message"],
      "ClusterAutomationStrategy \"kai\" not found");
}

TEST_F(PolicyFixture, OwnInvalidSpecIsReportedAndRequeued) {  // VAL-1, VAL-6, OBS-1
  api.put(kubex_object("AutomationStrategy", "ml", "gpu", kai_strategy_spec()));
  json spec = reactive_spec("gpu");
  spec["scope"]["labelSelector"]["matchLabels"] = {{"bad key!", "x"}};  // a rule only the validator checks
  api.put(kubex_object("GpuReactivePolicy", "ml", "reactive", spec));
  auto r = reconcile("GpuReactivePolicy/ml/reactive");
  EXPECT_EQ(r->requeue_after, std::chrono::minutes(5));
  json ready = api.condition(K::kGpuReactivePolicy, "ml", "reactive", "Ready");
  EXPECT_EQ(ready["status"], "False");
  EXPECT_EQ(ready["reason"], "InvalidSpec");
  cache.sync();
  auto cached =
      std::static_pointer_cast<const api::PolicyObject>(cache.get(K::kGpuReactivePolicy, "ml/reactive"));
  EXPECT_EQ(ready["message"], cached->parsed.report.message());  // the validator's message
  EXPECT_NE(ready["message"].get<std::string>().find("spec.scope.labelSelector.matchLabels"),
            std::string::npos);
  // The strategy is fine: the reference resolves.
  EXPECT_EQ(api.condition(K::kGpuReactivePolicy, "ml", "reactive", "AutomationStrategyResolved")["status"],
            "True");
  EXPECT_EQ(summarize(events), (std::vector<std::vector<std::string>>{
                                   {"Normal", "StrategyResolved", "AutomationStrategy \"gpu\" resolved"},
                                   {"Warning", "InvalidSpec", cached->parsed.report.message()}}));
}

TEST_F(PolicyFixture, PrometheusQueryFailedBelongsToTheRecommender) {  // OBS-1 Ready, REA
  api.put(kubex_object("AutomationStrategy", "ml", "gpu", kai_strategy_spec()));
  api.put(kubex_object("GpuReactivePolicy", "ml", "reactive", reactive_spec("gpu")));
  api.at(K::kGpuReactivePolicy, "ml", "reactive")["status"] = {{"conditions",
                                                                {{{"type", "Ready"},
                                                                  {"status", "False"},
                                                                  {"reason", "PrometheusQueryFailed"},
                                                                  {"message", "connection refused"}}}}};
  reconcile("GpuReactivePolicy/ml/reactive");
  json ready = api.condition(K::kGpuReactivePolicy, "ml", "reactive", "Ready");
  EXPECT_EQ(ready["reason"], "PrometheusQueryFailed");
  EXPECT_EQ(ready["message"], "connection refused");
  EXPECT_EQ(api.condition(K::kGpuReactivePolicy, "ml", "reactive", "AutomationStrategyResolved")["status"],
            "True");

  // An invalid policy says so, whatever the recommender last reported.
  json spec = reactive_spec("gpu");
  spec["minPodMetricsAge"] = "30s";
  api.put(kubex_object("GpuReactivePolicy", "ml", "reactive", spec));
  reconcile("GpuReactivePolicy/ml/reactive");
  ready = api.condition(K::kGpuReactivePolicy, "ml", "reactive", "Ready");
  EXPECT_EQ(ready["reason"], "InvalidSpec");
  EXPECT_EQ(ready["message"], "spec.minPodMetricsAge: must be zero or at least 1m");
}

TEST_F(PolicyFixture, MatchedWorkloadsFollowTheCaches) {  // OBS-1 matchedWorkloads, SEL-1, SEL-3
  api.put(kubex_object("ClusterAutomationStrategy", "", "kai", kai_strategy_spec()));
  api.put(kubex_object("ClusterGpuReactivePolicy", "", "reactive", reactive_spec("kai", true)));
  api.put(kubex_object("GpuReactivePolicy", "ml", "local", reactive_spec("gpu")));
  workloads->items = {deployment("ml", "a", kGpu), deployment("team", "b", kGpu),
               deployment("ml", "plain", json::object()), deployment("kube-system", "sys", kGpu)};
  reconcile("ClusterGpuReactivePolicy/reactive");
  EXPECT_EQ(api.status(K::kClusterGpuReactivePolicy, "", "reactive")["matchedWorkloads"], 2);
  reconcile("GpuReactivePolicy/ml/local");
  EXPECT_EQ(api.status(K::kGpuReactivePolicy, "ml", "local")["matchedWorkloads"], 1);

  // Workload events reach exactly the policies whose scope matches the workload (before or after).
  cache.sync();
  auto c = deployment("team", "c", kGpu);
  ctl->workload_changed(nullptr, c.get());
  EXPECT_FALSE(ctl->controller().queue().try_get());  // coalesced: not before 1s
  EXPECT_EQ(queued(), std::set<std::string>{"ClusterGpuReactivePolicy/reactive"});
  auto d = deployment("ml", "d", kGpu);
  ctl->workload_changed(nullptr, d.get());
  EXPECT_EQ(queued(),
            (std::set<std::string>{"ClusterGpuReactivePolicy/reactive", "GpuReactivePolicy/ml/local"}));
  auto unlabeled = deployment("ml", "e", json::object());
  ctl->workload_changed(nullptr, unlabeled.get());
  EXPECT_TRUE(queued().empty());
  ctl->workload_changed(d.get(), unlabeled.get());  // lost its label: both counts change
  EXPECT_EQ(queued().size(), 2u);

  workloads->items.push_back(c);
  reconcile("ClusterGpuReactivePolicy/reactive");
  EXPECT_EQ(api.status(K::kClusterGpuReactivePolicy, "", "reactive")["matchedWorkloads"], 3);
  auto gone = workloads->items.front();  // ml/a deleted
  workloads->items.erase(workloads->items.begin());
  ctl->workload_changed(gone.get(), nullptr);
  EXPECT_EQ(queued(),
            (std::set<std::string>{"ClusterGpuReactivePolicy/reactive", "GpuReactivePolicy/ml/local"}));
  reconcile("ClusterGpuReactivePolicy/reactive");
  EXPECT_EQ(api.status(K::kClusterGpuReactivePolicy, "", "reactive")["matchedWorkloads"], 2);

  // global-config's protected namespaces change what counts; a change reaches every policy.
  api.put(
      kubex_object("GlobalConfiguration", "", "global-config", {{"protectedNamespacePatterns", {"team"}}}));
  cache.sync();
  ctl->all_changed();
  EXPECT_EQ(queued(),
            (std::set<std::string>{"ClusterGpuReactivePolicy/reactive", "GpuReactivePolicy/ml/local"}));
  reconcile("ClusterGpuReactivePolicy/reactive");
  EXPECT_EQ(api.status(K::kClusterGpuReactivePolicy, "", "reactive")["matchedWorkloads"],
            1);  // kube-system/sys
}

TEST_F(PolicyFixture, StaleCacheDoesNotClaimANewerGeneration) {  // API-1 observedGeneration
  api.put(kubex_object("AutomationStrategy", "ml", "gpu", kai_strategy_spec()));
  api.put(kubex_object("GpuReactivePolicy", "ml", "reactive", reactive_spec("gpu")));
  cache.sync();
  json spec = reactive_spec("gpu");
  spec["weight"] = 5;
  api.put(kubex_object("GpuReactivePolicy", "ml", "reactive", spec));  // generation 2, not cached yet
  auto r = ctl->reconcile("GpuReactivePolicy/ml/reactive");
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->requeue);
  EXPECT_TRUE(api.status(K::kGpuReactivePolicy, "ml", "reactive").is_null());
  r = reconcile("GpuReactivePolicy/ml/reactive");  // the cache caught up
  EXPECT_EQ(api.status(K::kGpuReactivePolicy, "ml", "reactive")["observedGeneration"], 2);
  EXPECT_EQ(api.condition(K::kGpuReactivePolicy, "ml", "reactive", "Ready")["observedGeneration"], 2);
}

TEST_F(PolicyFixture, ErrorsAreValues) {  // VAL-6, ENG-2, OBS-5
  for (const char* key :
       {"", "x", "GpuReactivePolicy/ml", "GpuReactivePolicy/ml/gone", "AutomationStrategy/ml/s"}) {
    auto r = reconcile(key);
    ASSERT_TRUE(r) << key;
  }
  api.put(kubex_object("GpuReactivePolicy", "ml", "reactive", reactive_spec("gpu")));
  api.fail = kube::ApiStatus{0, "Transport", "connection reset", 0};
  cache.sync();
  EXPECT_EQ(ctl->controller().reconcile_key("GpuReactivePolicy/ml/reactive"), "error");
  api.fail.reset();
  PolicyStatusDeps d;
  d.writer = std::make_unique<FakeStatusWriter>(&api);
  d.catalog = &cache_view;
  d.workloads = std::make_shared<ThrowingWorkloads>();
  PolicyStatusController throwing(std::move(d));
  EXPECT_FALSE(throwing.reconcile("GpuReactivePolicy/ml/reactive"));
  EXPECT_EQ(ctl->name(), "policystatus");
  EXPECT_EQ(ctl->controller().reconcile_key("GpuReactivePolicy/ml/reactive"), "requeue_after");
  std::string text = metrics.render();
  EXPECT_NE(text.find(R"(controller_runtime_reconcile_total{controller="policystatus",result="error"} 1)"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find(R"(controller_runtime_reconcile_total{controller="policystatus",result="requeue_after"} 1)"),
      std::string::npos);
}

}  // namespace
}  // namespace kubex::controllers
