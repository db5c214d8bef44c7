// The `proactivepolicy` controller's ConfigMap part (PRO-1, PRO-5, PRO-6, SEL-7, RBK-4, OBS-1, OBS-5) with
// fakes for every dependency: kubex's objects and global-config's status (status_fakes.h), the workloads
// (workload_fakes.h), the owner-annotation writer (annotation_fakes.h) and the ConfigMap source (below:
// documents the test sets, and the events a watch would deliver). The document's parsing and the clamp are
// decide/proactive's, table-tested in tests/unit/decide/proactive.
#include "controllers/proactive_recommendations.h"

#include <gtest/gtest.h>

#include <set>

#include "annotation_fakes.h"
#include "common/time_format.h"
#include "config_map_fakes.h"
#include "kube/runtime/metrics.h"
#include "observe/config_maps.h"
#include "observe/gpu_history.h"
#include "status_fakes.h"
#include "workload_fakes.h"

namespace kubex::controllers {
namespace {

using namespace test;
using namespace std::chrono_literals;
using K = api::Kind;
using Event = observe::ConfigMapEvent;

const json kGpu = {{"nvidia.com/gpu.present", "true"}};
const std::string kKey = "Deployment/ml/infer";
const std::string kClusterRequests = "cwproactive.rightsizing.kubex.ai/desired-resource-requests";
const std::string kRequests = "proactive.rightsizing.kubex.ai/desired-resource-requests";
const std::string kClusterState = "cwproactive.rightsizing.kubex.ai/proactive-state";
const std::string kState = "proactive.rightsizing.kubex.ai/proactive-state";

// PRO-7: the proactive-state of ConfigMap values for `containers`, written at `at`.
std::string configmap_state(const std::vector<std::string>& containers, const std::string& at) {
  json source = json::object();
  for (const auto& c : containers) source[c] = "configmap";
  return json{{"historySpan", json::object()}, {"peak", json::object()}, {"source", source}, {"updatedAt", at}}.dump();
}

json global_config_spec(json proactive = {{"recommendationsConfigMap",
                                           {{"namespace", "kubex"}, {"name", "recs"}}}}) {
  return {{"proactive", std::move(proactive)}, {"recommendationReloadInterval", "30m"}};
}

json proactive_spec(const std::string& strategy, bool cluster) {
  json scope = {{"labelSelector", {{"matchLabels", kGpu}}}, {"workloadTypes", {"Deployment"}}};
  if (cluster) scope["namespaceSelector"] = {{"operator", "In"}, {"values", {"*"}}};
  return {{"automationStrategyRef", {{"name", strategy}}}, {"scope", scope}};
}

// A KAI strategy whose GPU requests stay between 0.1 and 1.
json clamping_strategy() {
  json s = kai_strategy_spec();
  s["enablement"]["gpu"]["requests"]["floor"] = "0.1";
  return s;
}

std::string document(const std::vector<std::tuple<std::string, std::string, json>>& entries) {
  json doc = json::array();
  for (const auto& [name, container, gpu] : entries) {
    doc.push_back({{"namespace", "ml"}, {"kind", "Deployment"}, {"name", name}, {"container", container},
                   {"gpu", gpu}});
  }
  return doc.dump();
}

class ProactiveFixture : public ::testing::Test {
 protected:
  FakeApi api;
  FakeCache cache{&api};
  FakeCatalogView catalog{&cache};
  common::FakeClock clock;
  kube::Metrics metrics;
  std::vector<json> events;
  std::unique_ptr<kube::EventRecorder> recorder;
  std::shared_ptr<FakeWorkloadViews> workloads = std::make_shared<FakeWorkloadViews>();
  std::shared_ptr<FakeAnnotationWriter> writer = std::make_shared<FakeAnnotationWriter>();
  FakeConfigMaps* config_maps = nullptr;
  std::unique_ptr<ProactiveRecommendations> ctl;

  void SetUp() override {
    kube::EventRecorderOptions eo;
    eo.clock = &clock;
    recorder = std::make_unique<kube::EventRecorder>(std::make_unique<FakeEventSink>(&events), eo);
    api.put(kubex_object("ClusterAutomationStrategy", "", "kai", clamping_strategy()));
    api.put(kubex_object("ClusterProactivePolicy", "", "baseline", proactive_spec("kai", true)));
    api.put(kubex_object("GlobalConfiguration", "", "global-config", global_config_spec()));
    ProactiveDeps d;
    d.catalog = &catalog;
    d.workloads = workloads;
    d.annotations = writer;
    d.status = std::make_unique<FakeStatusWriter>(&api);
    auto cm = std::make_unique<FakeConfigMaps>();
    config_maps = cm.get();
    d.config_maps = std::move(cm);
    d.events = recorder.get();
    ProactiveOptions o;
    o.clock = &clock;
    o.metrics = &metrics;
    ctl = std::make_unique<ProactiveRecommendations>(std::move(d), o);
    workloads->containers[kKey] = {{"app", true}, {"side", false}};
    infer();
  }

  void infer(json annotations = json::object()) {
    workloads->items = {annotated_deployment("ml", "infer", kGpu, annotations)};
  }

  kube::ReconcileOutcome reconcile(const std::string& key) {
    cache.sync();
    auto r = ctl->reconcile(key);
    recorder->flush();
    return r;
  }
  kube::ReconcileOutcome reload() { return reconcile(ProactiveRecommendations::kReload); }

  std::set<std::string> queued() {
    std::set<std::string> out;
    while (auto k = ctl->queue().try_get()) {
      out.insert(*k);
      ctl->queue().done(*k);
    }
    return out;
  }
  json loaded() {
    return api.condition(K::kGlobalConfiguration, "", "global-config", "RecommendationsLoaded");
  }
  json reload_status() {
    return api.status(K::kGlobalConfiguration, "", "global-config").value("recommendationReload", json());
  }
};

TEST_F(ProactiveFixture, LoadsReportsAndWritesClampedValues) {  // PRO-6, PRO-5, OBS-1, OBS-5
  config_maps->put("kubex/recs", "11",
                   {{"recommendations.json",
                     document({{"infer", "app", "1.5"}, {"infer", "side", 0.05}, {"other", "app", "0.3"}})}});
  auto r = reload();
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->requeue_after, 30min);  // recommendationReloadInterval (PRO-1)
  EXPECT_EQ(loaded()["status"], "True");
  EXPECT_EQ(loaded()["reason"], "Loaded");
  EXPECT_EQ(loaded()["message"], "loaded 3 recommendations from ConfigMap kubex/recs");
  EXPECT_EQ(reload_status()["lastCount"], 3);
  EXPECT_EQ(reload_status()["lastTime"], common::format_rfc3339(clock.now()));
  EXPECT_EQ(config_maps->followed, std::vector<std::string>{"kubex/recs"});  // its changes reload too
  EXPECT_EQ(queued(), std::set<std::string>{kKey});                           // every workload re-evaluated

  ASSERT_TRUE(reconcile(kKey));
  ASSERT_EQ(writer->writes.size(), 1u);
  EXPECT_EQ(writer->writes[0].what, "proactive recommendations");
  // Clamped by the winning policy's strategy: ceiling 1, floor 0.1.
  const std::string state = configmap_state({"app", "side"}, common::format_rfc3339(clock.now()));
  EXPECT_EQ(writer->writes[0].set, (std::map<std::string, std::string>{
                                       {kClusterRequests, R"({"app":{"gpu":"1"},"side":{"gpu":"0.1"}})"},
                                       {kClusterState, state}}));
  std::string text = metrics.render();
  EXPECT_NE(text.find(R"(kubex_gpu_recommendations_total{direction="initial",)"
                      R"(policy_kind="ClusterProactivePolicy"} 2)"),
            std::string::npos)
      << text;

  // In sync: nothing to write.
  infer({{kClusterRequests, R"({"app":{"gpu":"1"},"side":{"gpu":"0.1"}})"}, {kClusterState, state}});
  ASSERT_TRUE(reconcile(kKey));
  EXPECT_EQ(writer->writes.size(), 1u);
}

TEST_F(ProactiveFixture, OnlyTheWinnersPrefixIsWritten) {  // SEL-7, SEL-5
  // Both proactive kinds have priority 70: the weight puts the namespaced one first.
  api.put(kubex_object("AutomationStrategy", "ml", "kai", clamping_strategy()));
  json local = proactive_spec("kai", false);
  local["weight"] = 5;
  api.put(kubex_object("ProactivePolicy", "ml", "local", local));
  config_maps->put("kubex/recs", "11", {{"recommendations.json", document({{"infer", "app", "0.4"}})}});
  ASSERT_TRUE(reload());
  infer({{kClusterRequests, R"({"app":{"gpu":"0.3"}})"}});
  ASSERT_TRUE(reconcile(kKey));
  ASSERT_EQ(writer->writes.size(), 1u);
  EXPECT_EQ(writer->writes[0].set,
            (std::map<std::string, std::string>{{kRequests, R"({"app":{"gpu":"0.4"}})"},
                                                {kState, configmap_state({"app"}, common::format_rfc3339(clock.now()))}}));
  // The cluster prefix is the static controller's to remove (SEL-7 stale keys); this one writes its own.
  EXPECT_TRUE(writer->writes[0].remove.empty());
}

TEST_F(ProactiveFixture, RemovedWhenNoValidProactivePolicyOrNoValue) {  // PRO-5, PRO-6, RBK-4
  config_maps->put("kubex/recs", "11", {{"recommendations.json", document({{"other", "app", "0.4"}})}});
  ASSERT_TRUE(reload());
  // Matched, but the document has no value for it any more.
  infer({{kClusterRequests, R"({"app":{"gpu":"0.3"}})"}});
  ASSERT_TRUE(reconcile(kKey));
  ASSERT_EQ(writer->writes.size(), 1u);
  EXPECT_TRUE(writer->writes[0].set.empty());
  EXPECT_EQ(writer->writes[0].remove, std::vector<std::string>{kClusterRequests});

  // Invalid policy (its strategy is gone): on hold, nothing is written.
  api.erase(K::kClusterAutomationStrategy, "", "kai");
  ASSERT_TRUE(reconcile(kKey));
  EXPECT_EQ(writer->writes.size(), 1u);
  EXPECT_EQ(writer->calls, 1);

  // No proactive policy matches any more: both proactive prefixes go.
  api.erase(K::kClusterProactivePolicy, "", "baseline");
  infer({{kClusterRequests, R"({"app":{"gpu":"0.3"}})"}, {kRequests, R"({"app":{"gpu":"0.2"}})"},
         {"static.rightsizing.kubex.ai/desired-resource-requests", R"({"app":{"gpu":"0.5"}})"}});
  ASSERT_TRUE(reconcile(kKey));
  ASSERT_EQ(writer->writes.size(), 2u);
  EXPECT_TRUE(writer->writes[1].set.empty());
  EXPECT_EQ(writer->writes[1].remove, (std::vector<std::string>{kRequests, kClusterRequests}));
}

TEST_F(ProactiveFixture, ReloadFailuresKeepTheLastGoodSet) {  // PRO-6, OBS-2
  config_maps->put("kubex/recs", "11", {{"recommendations.json", document({{"infer", "app", "0.4"}})}});
  ASSERT_TRUE(reload());
  const json good = reload_status();

  // Not an array: InvalidRecommendations, lastError, an event; the values stay.
  clock.advance(30min);
  config_maps->put("kubex/recs", "12", {{"recommendations.json", "{\"not\": \"a list\"}"}});
  ASSERT_TRUE(reload());
  EXPECT_EQ(loaded()["status"], "False");
  EXPECT_EQ(loaded()["reason"], "InvalidRecommendations");
  // OBS-1/PRO-6: the message names the ConfigMap and the key once (issue 26: it said the key twice).
  const std::string invalid = "ConfigMap kubex/recs: recommendations.json: must be a JSON array";
  EXPECT_EQ(loaded()["message"], invalid);
  EXPECT_EQ(reload_status()["lastError"], invalid);
  EXPECT_EQ(reload_status()["lastErrorTime"], common::format_rfc3339(clock.now()));
  EXPECT_EQ(reload_status()["lastCount"], good["lastCount"]);  // the last success is still reported
  ASSERT_TRUE(reconcile(kKey));
  ASSERT_EQ(writer->writes.size(), 1u);
  EXPECT_EQ(writer->writes[0].set.at(kClusterRequests), R"({"app":{"gpu":"0.4"}})");

  // The key is missing, then the whole ConfigMap.
  config_maps->put("kubex/recs", "13", {{"other.json", "[]"}});
  ASSERT_TRUE(reload());
  EXPECT_EQ(loaded()["reason"], "ConfigMapNotFound");
  EXPECT_EQ(loaded()["message"], "ConfigMap kubex/recs has no key recommendations.json");
  config_maps->maps.clear();
  ASSERT_TRUE(reload());
  EXPECT_EQ(loaded()["reason"], "ConfigMapNotFound");
  EXPECT_EQ(loaded()["message"], "ConfigMap kubex/recs not found");
  const std::vector<std::vector<std::string>> failed = {
      {"Warning", "RecommendationReloadFailed", invalid},
      {"Warning", "RecommendationReloadFailed", "ConfigMap kubex/recs has no key recommendations.json"},
      {"Warning", "RecommendationReloadFailed", "ConfigMap kubex/recs not found"}};
  EXPECT_EQ(summarize(events), failed);
  EXPECT_EQ(events[0]["involvedObject"]["kind"], "GlobalConfiguration");
  infer();
  ASSERT_TRUE(reconcile(kKey));
  ASSERT_EQ(writer->writes.size(), 2u);
  EXPECT_EQ(writer->writes[1].set.at(kClusterRequests), R"({"app":{"gpu":"0.4"}})");

  // An API error: the reconcile fails (rate-limited retry) and the status says nothing new.
  const json before = api.status(K::kGlobalConfiguration, "", "global-config");
  config_maps->fail = kube::ApiStatus{500, "InternalError", "etcd is down", 0};
  auto r = reload();
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().find("reading ConfigMap kubex/recs: "), std::string::npos) << r.error();
  EXPECT_NE(r.error().find("etcd is down"), std::string::npos) << r.error();
  EXPECT_EQ(api.status(K::kGlobalConfiguration, "", "global-config"), before);
}

// OBS-1, PRO-6: an InvalidRecommendations message names the ConfigMap, then the key once, then what is wrong (issue 26:
// "… key recommendations.json: recommendations.json: …" repeated its prefix).
TEST_F(ProactiveFixture, InvalidRecommendationsMessagesNameTheKeyOnce) {
  config_maps->put("kubex/recs", "11", {{"recommendations.json", "not json"}});
  ASSERT_TRUE(reload());
  EXPECT_EQ(loaded()["reason"], "InvalidRecommendations");
  EXPECT_EQ(loaded()["message"], "ConfigMap kubex/recs: recommendations.json: not valid JSON");
  config_maps->put("kubex/recs", "12", {{"recommendations.json", "{}"}});
  ASSERT_TRUE(reload());
  EXPECT_EQ(loaded()["message"], "ConfigMap kubex/recs: recommendations.json: must be a JSON array");
  EXPECT_EQ(reload_status()["lastError"], "ConfigMap kubex/recs: recommendations.json: must be a JSON array");
}

TEST_F(ProactiveFixture, ConfigMapChangesReloadButReplaysDoNot) {  // PRO-1, PRO-6
  config_maps->put("kubex/recs", "11", {{"recommendations.json", document({{"infer", "app", "0.4"}})}});
  ASSERT_TRUE(reload());
  queued();
  ASSERT_TRUE(config_maps->handler);
  config_maps->handler(Event{Event::Type::kAdded, "11"});  // a reconnect replays the version read
  EXPECT_TRUE(queued().empty());
  config_maps->handler(Event{Event::Type::kModified, "12"});
  EXPECT_EQ(queued(), std::set<std::string>{ProactiveRecommendations::kReload});
  config_maps->handler(Event{Event::Type::kDeleted, "12"});
  EXPECT_EQ(queued(), std::set<std::string>{ProactiveRecommendations::kReload});
  ASSERT_TRUE(reload());
  EXPECT_EQ(config_maps->followed.size(), 1u);  // the same location is followed once
}

TEST_F(ProactiveFixture, NoConfigMapConfiguredClearsTheConditionAndTheValues) {  // PRO-6
  config_maps->put("kubex/recs", "11", {{"recommendations.json", document({{"infer", "app", "0.4"}})}});
  ASSERT_TRUE(reload());
  ASSERT_FALSE(loaded().is_null());
  queued();

  api.put(kubex_object("GlobalConfiguration", "", "global-config", global_config_spec(json::object())));
  ASSERT_TRUE(reload());
  EXPECT_TRUE(loaded().is_null());  // RecommendationsLoaded removed
  EXPECT_EQ(config_maps->followed, (std::vector<std::string>{"kubex/recs", ""}));
  EXPECT_EQ(queued(), std::set<std::string>{kKey});
  infer({{kClusterRequests, R"({"app":{"gpu":"0.4"}})"}});
  ASSERT_TRUE(reconcile(kKey));
  ASSERT_EQ(writer->writes.size(), 1u);
  EXPECT_EQ(writer->writes[0].remove, std::vector<std::string>{kClusterRequests});

  // Already clear: no status write, no re-evaluation.
  const int writes = api.writes;
  ASSERT_TRUE(reload());
  EXPECT_EQ(api.writes, writes);
  EXPECT_TRUE(queued().empty());
}

// Issue 24 item 4: a starting engine (restart, new leader) writes nothing before its first load has an answer, so a
// ConfigMap value on a workload is never removed and written again a second later; a read error holds it back too.
TEST_F(ProactiveFixture, NothingIsWrittenBeforeTheFirstLoadHasAnAnswer) {  // PRO-1, PRO-6
  config_maps->put("kubex/recs", "11", {{"recommendations.json", document({{"infer", "app", "0.4"}})}});
  infer({{kClusterRequests, R"({"app":{"gpu":"0.4"}})"},
         {kClusterState, configmap_state({"app"}, "2026-01-01T00:00:00Z")}});
  // The workload's event comes before the reload (as an informer's initial list does): nothing happens.
  ASSERT_TRUE(reconcile(kKey));
  EXPECT_EQ(writer->calls, 0);
  // The first reload fails (API error): still nothing, and no workload is queued.
  config_maps->fail = kube::ApiStatus{500, "InternalError", "etcd is down", 0};
  ASSERT_FALSE(reload());
  ASSERT_TRUE(reconcile(kKey));
  EXPECT_EQ(writer->calls, 0);
  EXPECT_TRUE(queued().empty());
  // Once loaded, every workload is evaluated: the value is already there, so nothing is written.
  config_maps->fail.reset();
  ASSERT_TRUE(reload());
  EXPECT_EQ(queued(), std::set<std::string>{kKey});
  ASSERT_TRUE(reconcile(kKey));
  EXPECT_TRUE(writer->writes.empty());
  EXPECT_EQ(metrics.render().find("kubex_gpu_recommendations_total{"), std::string::npos) << "nothing counted as new";
}

// A definitive first answer (the ConfigMap is missing) also lets the workloads be evaluated: its values go.
TEST_F(ProactiveFixture, AMissingConfigMapIsAnAnswerToo) {  // PRO-6, PRO-7
  infer({{kClusterRequests, R"({"app":{"gpu":"0.4"}})"}});
  ASSERT_TRUE(reconcile(kKey));
  EXPECT_EQ(writer->calls, 0);
  ASSERT_TRUE(reload());
  EXPECT_EQ(loaded()["reason"], "ConfigMapNotFound");
  EXPECT_EQ(queued(), std::set<std::string>{kKey});
  ASSERT_TRUE(reconcile(kKey));
  ASSERT_EQ(writer->writes.size(), 1u);
  EXPECT_EQ(writer->writes[0].remove, std::vector<std::string>{kClusterRequests});
}

TEST_F(ProactiveFixture, StopStopsFollowing) {
  config_maps->put("kubex/recs", "11", {{"recommendations.json", "[]"}});
  ASSERT_TRUE(reload());
  ctl->stop();
  EXPECT_EQ(config_maps->stops, 1);
  ASSERT_TRUE(reload());  // after a restart the location is followed again
  EXPECT_EQ(config_maps->followed, (std::vector<std::string>{"kubex/recs", "kubex/recs"}));
}

}  // namespace
}  // namespace kubex::controllers
