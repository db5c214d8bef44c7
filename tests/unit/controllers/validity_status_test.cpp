// The `strategy` controller: Valid of strategies, PolicyEvaluation and GlobalConfiguration, Available of
// invalid GpuConsolidationPolicies (OBS-1), their events (OBS-2), singleton names (API-4) and VAL-6 (invalid
// objects re-validated, 5m requeue, errors as values). Fake API and caches (fakes.h), fake clock.
#include "controllers/validity_status.h"

#include <gtest/gtest.h>

#include "status_fakes.h"
#include "kube/runtime/metrics.h"

namespace kubex::controllers {
namespace {

using namespace test;
using namespace std::chrono_literals;
using K = api::Kind;

class ExplodingObjects final : public observe::KubexObjects {
 public:
  common::ObjectPtr object(K, const std::string&) const override { throw std::runtime_error("cache exploded"); }
};

class ValidityFixture : public ::testing::Test {
 protected:
  FakeApi api;
  FakeCache cache{&api};
  FakeKubexObjects objects{&cache};
  common::FakeClock clock;
  std::vector<json> events;
  kube::Metrics metrics;
  std::unique_ptr<kube::EventRecorder> recorder;
  std::shared_ptr<ValidityStatusController> ctl;

  void SetUp() override { restart(); }

  // A new controller over the same API (what an engine restart sees).
  void restart(const std::string& gc_name = "global-config") {
    kube::EventRecorderOptions eo;
    eo.clock = &clock;
    recorder = std::make_unique<kube::EventRecorder>(std::make_unique<FakeEventSink>(&events), eo);
    ValidityStatusDeps d;
    d.writer = std::make_unique<FakeStatusWriter>(&api);
    d.events = recorder.get();
    d.objects = &objects;
    d.global_config_name = gc_name;
    d.clock = &clock;
    d.metrics = &metrics;
    ctl = std::make_shared<ValidityStatusController>(std::move(d));
  }

  kube::ReconcileOutcome reconcile(const std::string& key) {
    cache.sync();
    auto r = ctl->reconcile(key);
    recorder->flush();
    return r;
  }
};

TEST_F(ValidityFixture, StrategyValidThenInvalidThenFixed) {  // OBS-1, OBS-2, VAL-1, VAL-6, API-1
  api.put(kubex_object("ClusterAutomationStrategy", "", "kai", kai_strategy_spec()));
  auto r = reconcile("ClusterAutomationStrategy/kai");
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->requeue_after, common::Duration::zero());  // valid: nothing to come back for
  json c = api.condition(K::kClusterAutomationStrategy, "", "kai", "Valid");
  EXPECT_EQ(c["status"], "True");
  EXPECT_EQ(c["reason"], "Valid");
  EXPECT_EQ(c["observedGeneration"], 1);
  EXPECT_EQ(api.status(K::kClusterAutomationStrategy, "", "kai")["observedGeneration"], 1);
  EXPECT_TRUE(events.empty());

  // The edit drops the contract: VAL-3 InvalidContract with the validator's message, one Warning event.
  json spec = kai_strategy_spec();
  spec.erase("experimental");
  api.put(kubex_object("ClusterAutomationStrategy", "", "kai", spec));
  r = reconcile("ClusterAutomationStrategy/kai");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->requeue_after, std::chrono::minutes(5));  // VAL-6
  const std::string msg =
      "spec.experimental.gpuKaiContract: must be \"v1alpha1-2026-07\" when spec.enablement.overrideScheduler "
      "is "
      "\"kai\" or spec.kai is set";
  c = api.condition(K::kClusterAutomationStrategy, "", "kai", "Valid");
  EXPECT_EQ(c["status"], "False");
  EXPECT_EQ(c["reason"], "InvalidContract");
  EXPECT_EQ(c["message"], msg);
  EXPECT_EQ(c["observedGeneration"], 2);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(summarize(events)[0], (std::vector<std::string>{"Warning", "InvalidContract", msg}));
  EXPECT_EQ(events[0]["involvedObject"]["kind"], "ClusterAutomationStrategy");
  EXPECT_EQ(events[0]["involvedObject"]["name"], "kai");
  EXPECT_EQ(events[0]["involvedObject"]["uid"], "uid-kai");

  // VAL-6: the requeue re-validates and writes nothing new; no second event, also not after a restart.
  int writes = api.writes;
  clock.advance(5min);
  r = reconcile("ClusterAutomationStrategy/kai");
  EXPECT_EQ(r->requeue_after, std::chrono::minutes(5));
  restart();
  r = reconcile("ClusterAutomationStrategy/kai");
  EXPECT_EQ(r->requeue_after, std::chrono::minutes(5));
  EXPECT_EQ(api.writes, writes);
  EXPECT_EQ(events.size(), 1u);

  api.put(kubex_object("ClusterAutomationStrategy", "", "kai", kai_strategy_spec()));
  r = reconcile("ClusterAutomationStrategy/kai");
  EXPECT_EQ(api.condition(K::kClusterAutomationStrategy, "", "kai", "Valid")["status"], "True");
  EXPECT_EQ(api.condition(K::kClusterAutomationStrategy, "", "kai", "Valid")["observedGeneration"], 3);
  EXPECT_EQ(r->requeue_after, common::Duration::zero());
  EXPECT_EQ(events.size(), 1u);  // OBS-2 has no event for becoming valid
}

TEST_F(ValidityFixture, NamespacedStrategyInvalidSpec) {  // OBS-1 InvalidSpec, VAL-4 message
  json spec = kai_strategy_spec();
  spec["kai"] = {{"queue", "Not_A_Label"}};
  api.put(kubex_object("AutomationStrategy", "ml", "gpu", spec));
  auto r = reconcile("AutomationStrategy/ml/gpu");
  ASSERT_TRUE(r);
  json c = api.condition(K::kAutomationStrategy, "ml", "gpu", "Valid");
  EXPECT_EQ(c["reason"], "InvalidSpec");
  EXPECT_EQ(c["message"], "spec.kai.queue: must be a valid RFC 1123 label");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["metadata"]["namespace"], "ml");
}

TEST_F(ValidityFixture, SingletonsAndOtherNames) {  // API-4, VAL-4 singletons, OBS-1
  api.put(kubex_object("GlobalConfiguration", "", "global-config", json::object()));
  api.put(kubex_object("GlobalConfiguration", "", "other", json::object()));
  api.put(kubex_object("PolicyEvaluation", "", "policy-evaluation", json::object()));
  api.put(kubex_object("PolicyEvaluation", "", "precedence", json::object()));
  ASSERT_TRUE(reconcile("GlobalConfiguration/global-config"));
  ASSERT_TRUE(reconcile("GlobalConfiguration/other"));
  ASSERT_TRUE(reconcile("PolicyEvaluation/policy-evaluation"));
  auto r = reconcile("PolicyEvaluation/precedence");
  EXPECT_EQ(r->requeue_after, std::chrono::minutes(5));
  EXPECT_EQ(api.condition(K::kGlobalConfiguration, "", "global-config", "Valid")["status"], "True");
  EXPECT_EQ(api.condition(K::kPolicyEvaluation, "", "policy-evaluation", "Valid")["status"], "True");
  json c = api.condition(K::kGlobalConfiguration, "", "other", "Valid");
  EXPECT_EQ(c["status"], "False");
  EXPECT_EQ(c["reason"], "InvalidSpec");
  EXPECT_EQ(c["message"], "metadata.name: must be \"global-config\"");
  EXPECT_EQ(api.condition(K::kPolicyEvaluation, "", "precedence", "Valid")["message"],
            "metadata.name: must be \"policy-evaluation\"");
  EXPECT_EQ(summarize(events),
            (std::vector<std::vector<std::string>>{
                {"Warning", "InvalidSpec", "metadata.name: must be \"global-config\""},
                {"Warning", "InvalidSpec", "metadata.name: must be \"policy-evaluation\""}}));
  // An invalid global-config: Valid=False and a Warning InvalidSpec.
  api.put(kubex_object("GlobalConfiguration", "", "global-config", {{"gpuReactiveCheckInterval", "10s"}}));
  reconcile("GlobalConfiguration/global-config");
  c = api.condition(K::kGlobalConfiguration, "", "global-config", "Valid");
  EXPECT_EQ(c["message"], "spec.gpuReactiveCheckInterval: must be at least 1m");
  EXPECT_EQ(summarize(events).back(),
            (std::vector<std::string>{"Warning", "InvalidSpec",
                                      "spec.gpuReactiveCheckInterval: must be at least 1m"}));
  // The other writers' GlobalConfiguration conditions stay.
  api.at(K::kGlobalConfiguration, "", "global-config")["status"]["conditions"].push_back(
      {{"type", "KaiQueuesReady"}, {"status", "True"}, {"reason", "QueuesReady"}, {"message", ""}});
  api.put(kubex_object("GlobalConfiguration", "", "global-config", json::object()));
  reconcile("GlobalConfiguration/global-config");
  EXPECT_EQ(api.condition(K::kGlobalConfiguration, "", "global-config", "Valid")["status"], "True");
  EXPECT_EQ(api.condition(K::kGlobalConfiguration, "", "global-config", "KaiQueuesReady")["reason"],
            "QueuesReady");
}

TEST_F(ValidityFixture, ConfiguredSingletonName) {  // API-4 with --global-config-name
  restart("cluster-settings");
  api.put(kubex_object("GlobalConfiguration", "", "global-config", json::object()));
  // (The CRD shipped allows only global-config; the engine still judges names by its flag.)
  api.put(kubex_object("GlobalConfiguration", "", "cluster-settings", json::object()));
  reconcile("GlobalConfiguration/global-config");
  reconcile("GlobalConfiguration/cluster-settings");
  EXPECT_EQ(api.condition(K::kGlobalConfiguration, "", "global-config", "Valid")["message"],
            "metadata.name: must be \"cluster-settings\"");
  EXPECT_EQ(api.condition(K::kGlobalConfiguration, "", "cluster-settings", "Valid")["status"], "True");
}

TEST_F(ValidityFixture, ConsolidationAvailableFromValidation) {  // CON-11, OBS-1, VAL-6, issue 12 item 10
  const json good = {{"experimental", {{"gpuKaiContract", "v1alpha1-2026-07"}}},
                     {"nodeSelector", {{"matchLabels", {{"pool", "a"}}}}}};
  json bad = good;
  bad.erase("experimental");
  // A valid policy says that this engine does not consolidate, instead of nothing.
  api.put(kubex_object("GpuConsolidationPolicy", "", "pool-a", good));
  auto r = reconcile("GpuConsolidationPolicy/pool-a");
  EXPECT_EQ(r->requeue_after, common::Duration::zero());
  json c = api.condition(K::kGpuConsolidationPolicy, "", "pool-a", "Available");
  EXPECT_EQ(c["status"], "Unknown");
  EXPECT_EQ(c["reason"], "NotEvaluated");
  int writes = api.writes;
  reconcile("GpuConsolidationPolicy/pool-a");
  EXPECT_EQ(api.writes, writes);  // unchanged: no second write

  api.put(kubex_object("GpuConsolidationPolicy", "", "pool-a", bad));
  r = reconcile("GpuConsolidationPolicy/pool-a");
  EXPECT_EQ(r->requeue_after, std::chrono::minutes(5));
  c = api.condition(K::kGpuConsolidationPolicy, "", "pool-a", "Available");
  EXPECT_EQ(c["status"], "False");
  EXPECT_EQ(c["reason"], "InvalidContract");
  EXPECT_EQ(c["message"], "spec.experimental: required");
  EXPECT_EQ(
      summarize(events),
      (std::vector<std::vector<std::string>>{{"Warning", "InvalidContract", "spec.experimental: required"}}));

  // Fixed: validation's condition becomes NotEvaluated again.
  api.put(kubex_object("GpuConsolidationPolicy", "", "pool-a", good));
  reconcile("GpuConsolidationPolicy/pool-a");
  EXPECT_EQ(api.condition(K::kGpuConsolidationPolicy, "", "pool-a", "Available")["reason"], "NotEvaluated");

  // The consolidation controller's own Available is never touched.
  api.at(K::kGpuConsolidationPolicy, "", "pool-a")["status"]["conditions"] = {
      {{"type", "Available"}, {"status", "True"}, {"reason", "NoCandidate"}, {"message", "pool: 3 nodes"}}};
  writes = api.writes;
  reconcile("GpuConsolidationPolicy/pool-a");
  EXPECT_EQ(api.writes, writes);

  // Not even when the cache is behind the consolidation controller's write (the write keeps its reason).
  api.put(kubex_object("GpuConsolidationPolicy", "", "pool-b", good));
  reconcile("GpuConsolidationPolicy/pool-b");
  cache.sync();  // the cache now holds NotEvaluated; the controller then writes Draining
  api.at(K::kGpuConsolidationPolicy, "", "pool-b")["status"]["conditions"] = {
      {{"type", "Available"}, {"status", "True"}, {"reason", "Draining"}, {"message", "draining node n2"}}};
  EXPECT_TRUE(ctl->reconcile("GpuConsolidationPolicy/pool-b").has_value());
  EXPECT_EQ(api.condition(K::kGpuConsolidationPolicy, "", "pool-b", "Available")["reason"], "Draining");
}

TEST_F(ValidityFixture, ErrorsAreValuesAndGoneObjectsAreNoWork) {  // VAL-6, ENG-2
  // Keys that name nothing of ours.
  for (const char* key :
       {"", "garbage", "Pod/ml/x", "ClusterAutomationStrategy/ml/x", "AutomationStrategy//x",
        "AutomationStrategy/ml/", "StaticPolicy/ml/p", "ClusterAutomationStrategy/missing"}) {
    auto r = reconcile(key);
    ASSERT_TRUE(r) << key;
    EXPECT_EQ(r->requeue_after, common::Duration::zero()) << key;
  }
  // Cached but deleted on the server meanwhile.
  api.put(kubex_object("ClusterAutomationStrategy", "", "kai", kai_strategy_spec()));
  cache.sync();
  api.erase(K::kClusterAutomationStrategy, "", "kai");
  EXPECT_TRUE(ctl->reconcile("ClusterAutomationStrategy/kai"));
  // API errors: an error outcome (the controller's rate-limited retry), never an exception.
  api.put(kubex_object("ClusterAutomationStrategy", "", "kai", kai_strategy_spec()));
  api.fail = kube::ApiStatus{500, "InternalError", "etcd is down", 0};
  auto r = reconcile("ClusterAutomationStrategy/kai");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("etcd is down"), std::string::npos);
  api.fail.reset();
  // Whatever the dependencies throw stays inside the reconcile.
  ValidityStatusDeps d;
  d.writer = std::make_unique<FakeStatusWriter>(&api);
  ExplodingObjects exploding;
  d.objects = &exploding;
  ValidityStatusController throwing(std::move(d));
  auto t = throwing.reconcile("ClusterAutomationStrategy/kai");
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().find("cache exploded"), std::string::npos);
}

TEST_F(ValidityFixture, ReconcilesCountUnderTheStrategyController) {  // OBS-5
  api.put(
      kubex_object("ClusterAutomationStrategy", "", "bad", {{"enablement", {{"overrideScheduler", "kai"}}}}));
  cache.sync();
  EXPECT_EQ(ctl->name(), "strategy");
  EXPECT_EQ(ctl->controller().reconcile_key("ClusterAutomationStrategy/bad"), "requeue_after");
  std::string text = metrics.render();
  EXPECT_NE(
      text.find(R"(controller_runtime_reconcile_total{controller="strategy",result="requeue_after"} 1)"),
      std::string::npos)
      << text;
}

}  // namespace
}  // namespace kubex::controllers
