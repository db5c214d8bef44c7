// The `proactivepolicy` controller with its history source (PRO-1, PRO-2, PRO-7, PRO-8, PRO-9): evaluations run by
// run_due() (the thread's body) against a fake Prometheus that answers the batched PRO-2 queries by their text, the
// owner annotations each workload then gets, the policy's status, and nothing written before the history was
// attempted. The queries' texts are pinned in tests/unit/prom; the arithmetic in tests/unit/decide/proactive.
#include <gtest/gtest.h>

#include <set>

#include "annotation_fakes.h"
#include "common/time_format.h"
#include "config_map_fakes.h"
#include "controllers/proactive_recommendations.h"
#include "kube/runtime/metrics.h"
#include "observe/gpu_history.h"
#include "prom/client.h"
#include "status_fakes.h"
#include "workload_fakes.h"

namespace kubex::controllers {
namespace {

using namespace test;
using namespace std::chrono_literals;
using K = api::Kind;

const std::string kKey = "Deployment/ml/infer";
const std::string kPolicy = "ClusterProactivePolicy/seed";
const std::string kRequests = "cwproactive.rightsizing.kubex.ai/desired-resource-requests";
const std::string kLimits = "cwproactive.rightsizing.kubex.ai/desired-resource-limits";
const std::string kState = "cwproactive.rightsizing.kubex.ai/proactive-state";

// Answers the PRO-2 queries by their text: SM p95 `sm`, memory max `memory`, and samples going back `span`.
class FakeHistory final : public prom::Querier {
 public:
  double sm = 22, memory = 30;
  std::chrono::seconds span = 96h;
  std::optional<common::TimePoint> first_sample;  // when set, the samples start here (the span grows with `now`)
  common::TimePoint now{};
  std::optional<std::string> fail;  // every query fails with this while set
  bool empty = false;               // every query matches nothing (no samples yet)
  std::vector<std::string> sent;

  common::Result<prom::Vector> instant(const std::string& q) override {
    sent.push_back(q);
    if (fail) return common::fail(*fail);
    if (empty) return prom::Vector{};
    double v = 0;
    if (q.find("timestamp(") != std::string::npos) {
      v = std::chrono::duration<double>((first_sample ? *first_sample : now - span).time_since_epoch()).count();
    } else if (q.find("quantile_over_time") != std::string::npos) {
      v = sm;
    } else {
      v = memory;
    }
    prom::Vector out;
    out.samples.push_back({{{"namespace", "ml"}, {"pod", "infer-6d8f7c9b5-x2k4p"}, {"container", "app"}}, v});
    return out;
  }
  const prom::Options& options() const override { return opts_; }

 private:
  prom::Options opts_;
};

class FakeConnector final : public PrometheusConnector {
 public:
  std::shared_ptr<FakeHistory> querier = std::make_shared<FakeHistory>();
  std::optional<std::string> refuse;  // connect() fails with this while set
  common::Result<std::shared_ptr<prom::Querier>> connect(const prom::Options&) override {
    if (refuse) return common::fail(*refuse);
    return std::shared_ptr<prom::Querier>(querier);
  }
};

class FakeSubjects final : public observe::HistorySubjects {
 public:
  std::map<std::string, decide::Allocation> held = {{"app", {decide::kOneGpu, true}}};  // nvidia.com/gpu: 1
  std::map<std::string, decide::Allocation> allocations(const api::WorkloadView&) const override { return held; }
  std::optional<common::TimePoint> start;  // the oldest pod's start
  std::optional<common::TimePoint> oldest_start(const api::WorkloadView&) const override { return start; }
};

json seed_policy() {  // the seed's starter example: GPU Deployments anywhere
  return {{"automationStrategyRef", {{"name", "kai"}}},
          {"scope",
           {{"namespaceSelector", {{"operator", "In"}, {"values", {"*"}}}},
            {"labelSelector", {{"matchLabels", {{"nvidia.com/gpu.present", "true"}}}}},
            {"workloadTypes", {"Deployment"}}}},
          {"safetyChecks", {{"maxAnalysisAgeDays", 5}}}};
}

class ProactiveHistoryFixture : public ::testing::Test {
 protected:
  FakeApi api;
  FakeCache cache{&api};
  FakeCatalogView catalog{&cache};
  common::FakeClock clock;
  kube::Metrics metrics;
  std::shared_ptr<FakeWorkloadViews> workloads = std::make_shared<FakeWorkloadViews>();
  std::shared_ptr<FakeAnnotationWriter> writer = std::make_shared<FakeAnnotationWriter>();
  FakeConfigMaps* config_maps = nullptr;
  FakeConnector* prometheus = nullptr;
  FakeSubjects* subjects = nullptr;
  std::unique_ptr<ProactiveRecommendations> ctl;

  void SetUp() override {
    clock.set(*common::parse_rfc3339("2026-12-04T12:00:00Z"));
    api.put(kubex_object("ClusterAutomationStrategy", "", "kai", kai_strategy_spec()));
    api.put(kubex_object("ClusterProactivePolicy", "", "seed", seed_policy()));
    api.put(kubex_object("GlobalConfiguration", "", "global-config",
                         {{"proactive", {{"recommendationsConfigMap", {{"namespace", "kubex"}, {"name", "recs"}}}}}}));
    ProactiveDeps d;
    d.catalog = &catalog;
    d.workloads = workloads;
    d.annotations = writer;
    d.status = std::make_unique<FakeStatusWriter>(&api);
    auto cm = std::make_unique<FakeConfigMaps>();
    config_maps = cm.get();
    d.config_maps = std::move(cm);
    auto pc = std::make_unique<FakeConnector>();
    prometheus = pc.get();
    prometheus->querier->now = clock.now();
    d.prometheus = std::move(pc);
    auto subj = std::make_unique<FakeSubjects>();
    subjects = subj.get();
    d.subjects = std::move(subj);
    d.policy_status = std::make_unique<FakeStatusWriter>(&api);
    ProactiveOptions o;
    o.clock = &clock;
    o.metrics = &metrics;
    o.history_retry_after.clear();  // no back-off sleeps in unit tests (observe's tests cover it)
    ctl = std::make_unique<ProactiveRecommendations>(std::move(d), o);
    workloads->containers[kKey] = {{"app", true}};
    infer();
    recommendations("[]");
  }
  void TearDown() override { ctl->stop(); }

  void infer(json annotations = json::object()) {
    workloads->items = {annotated_deployment("ml", "infer", {{"nvidia.com/gpu.present", "true"}}, annotations)};
  }
  void recommendations(const std::string& doc) {
    static int rv = 0;
    config_maps->put("kubex/recs", std::to_string(++rv), {{"recommendations.json", doc}});
  }
  // Holds what the last write set and removed, as the owner would.
  void apply_last_write() {
    json a = json::object();
    for (const auto& w : workloads->items) {
      for (const auto& [k, v] : w->annotations) a[k.str()] = v.str();
    }
    const auto& w = writer->writes.back();
    for (const auto& [k, v] : w.set) a[k] = v;
    for (const auto& k : w.remove) a.erase(k);
    infer(a);
  }
  kube::ReconcileOutcome reconcile(const std::string& key) {
    cache.sync();
    return ctl->reconcile(key);
  }
  std::size_t evaluate() {
    cache.sync();
    prometheus->querier->now = clock.now();
    return ctl->history()->run_due();
  }
  json ready() { return api.condition(K::kClusterProactivePolicy, "", "seed", "Ready"); }
  json status() { return api.status(K::kClusterProactivePolicy, "", "seed"); }
};

// PRO-9 end to end in the controller: 4 days of a whole GPU at SM p95 22 % and memory max 30 % give 0.36 under
// cwproactive, the peak 0.3 as limits.gpu, a history state, and a policy that says it evaluated one workload.
TEST_F(ProactiveHistoryFixture, Pro9WholeGpuDeploymentGetsItsFirstFractionFromHistory) {
  ASSERT_TRUE(reconcile(ProactiveRecommendations::kReload));  // ConfigMap loaded
  ASSERT_TRUE(reconcile(kKey));
  EXPECT_TRUE(writer->writes.empty()) << "nothing is written before the policy's history was attempted";

  EXPECT_EQ(evaluate(), 1u);
  EXPECT_EQ(prometheus->querier->sent.size(), 4u);  // compute, memory and their spans: one batch
  ASSERT_TRUE(reconcile(kKey));
  ASSERT_EQ(writer->writes.size(), 1u);
  const auto& set = writer->writes[0].set;
  EXPECT_EQ(set.at(kRequests), R"({"app":{"gpu":"0.36"}})");
  EXPECT_EQ(set.at(kLimits), R"({"app":{"gpu":"0.3"}})");
  EXPECT_EQ(set.at(kState), R"({"historySpan":{"app":"96h"},"peak":{"app":"0.3"},"source":{"app":"history"},)"
                            R"("updatedAt":"2026-12-04T12:00:00Z"})");
  EXPECT_EQ(ready()["status"], "True");
  EXPECT_EQ(ready()["reason"], "Reconciled");
  EXPECT_EQ(status()["lastEvaluationTime"], "2026-12-04T12:00:00Z");
  EXPECT_EQ(status()["recommendedWorkloads"], 1);
  std::string text = metrics.render();
  EXPECT_NE(text.find(R"(kubex_prometheus_queries_total{phase="proactive",result="success"} 4)"), std::string::npos)
      << text;

  // Nothing is due again before recommendationReloadInterval (1h).
  clock.advance(59min);
  EXPECT_EQ(evaluate(), 0u);
  clock.advance(1min);
  EXPECT_EQ(evaluate(), 1u);
}

// PRO-9: with 40 minutes of history nothing is written (NO_DATA), and the evaluation still completes.
TEST_F(ProactiveHistoryFixture, FortyMinutesOfHistoryWritesNothing) {
  prometheus->querier->span = 40min;
  ASSERT_TRUE(reconcile(ProactiveRecommendations::kReload));
  evaluate();
  ASSERT_TRUE(reconcile(kKey));
  EXPECT_TRUE(writer->writes.empty() || writer->writes.back().set.empty());
  EXPECT_EQ(status()["recommendedWorkloads"], 0);
  EXPECT_EQ(ready()["status"], "True");
}

// PRO-7: a ConfigMap entry overrides history; its removal returns to the history value at once.
TEST_F(ProactiveHistoryFixture, ConfigMapOverridesHistoryAndItsRemovalReturnsToIt) {
  recommendations(R"([{"namespace":"ml","kind":"Deployment","name":"infer","container":"app","gpu":"0.5"}])");
  ASSERT_TRUE(reconcile(ProactiveRecommendations::kReload));
  evaluate();
  ASSERT_TRUE(reconcile(kKey));
  ASSERT_EQ(writer->writes.size(), 1u);
  EXPECT_EQ(writer->writes[0].set.at(kRequests), R"({"app":{"gpu":"0.5"}})");
  EXPECT_NE(writer->writes[0].set.at(kState).find(R"("source":{"app":"configmap"})"), std::string::npos);
  EXPECT_EQ(writer->writes[0].set.at(kLimits), R"({"app":{"gpu":"0.3"}})");  // the history's peak (KAI-2's p)
  apply_last_write();

  recommendations("[]");
  ASSERT_TRUE(reconcile(ProactiveRecommendations::kReload));
  ASSERT_TRUE(reconcile(kKey));
  ASSERT_EQ(writer->writes.size(), 2u);
  EXPECT_EQ(writer->writes[1].set.at(kRequests), R"({"app":{"gpu":"0.36"}})");
  EXPECT_FALSE(writer->writes[1].set.count(kLimits));  // the same peak: nothing to write
}

// PRO-8: Prometheus down keeps every value, says Ready=False/PrometheusQueryFailed ("no GPU history: …" when history
// is the only source), leaves lastEvaluationTime alone, retries after 1m then 2m, and recovers without a restart.
TEST_F(ProactiveHistoryFixture, PrometheusDownKeepsValuesAndRetriesWithBackOff) {
  api.put(kubex_object("GlobalConfiguration", "", "global-config", json::object()));  // history is the only source
  ASSERT_TRUE(reconcile(ProactiveRecommendations::kReload));
  evaluate();
  ASSERT_TRUE(reconcile(kKey));
  apply_last_write();
  const std::size_t writes = writer->writes.size();
  const json evaluated_at = status()["lastEvaluationTime"];

  clock.advance(1h);
  prometheus->querier->fail = "connection refused";
  EXPECT_EQ(evaluate(), 1u);
  EXPECT_EQ(ready()["status"], "False");
  EXPECT_EQ(ready()["reason"], "PrometheusQueryFailed");
  EXPECT_EQ(ready()["message"], "no GPU history: connection refused");
  EXPECT_EQ(status()["lastEvaluationTime"], evaluated_at);
  EXPECT_EQ(status()["recommendedWorkloads"], 1);  // the kept value
  ASSERT_TRUE(reconcile(kKey));
  EXPECT_EQ(writer->writes.size(), writes) << "a failed read never lowers or removes a value";

  clock.advance(59s);
  EXPECT_EQ(evaluate(), 0u);
  clock.advance(1s);
  EXPECT_EQ(evaluate(), 1u);  // 1m
  clock.advance(119s);
  EXPECT_EQ(evaluate(), 0u);
  clock.advance(1s);
  EXPECT_EQ(evaluate(), 1u);  // then 2m

  prometheus->querier->fail.reset();
  clock.advance(4min);
  EXPECT_EQ(evaluate(), 1u);
  EXPECT_EQ(ready()["status"], "True");
  EXPECT_EQ(status()["lastEvaluationTime"], common::format_rfc3339(clock.now()));
}

// PRO-2: the memory lookback is trimmed at the last allocation transition of the RBK-1 history, in the query sent.
TEST_F(ProactiveHistoryFixture, MemoryLookbackStartsAtTheLastAllocationTransition) {
  infer({{"rightsizing.kubex.ai/rollback-state",
          R"({"phase":"Managed","history":[{"at":"2026-12-04T06:00:00Z","container":"app","from":"1","to":"0.36"}]})"}});
  ASSERT_TRUE(reconcile(ProactiveRecommendations::kReload));
  evaluate();
  std::size_t trimmed = 0;
  for (const auto& q : prometheus->querier->sent) {
    if (q.find("kubex_gpu_container_memory_footprint_percent") != std::string::npos) {
      EXPECT_NE(q.find("[21600s"), std::string::npos) << q;  // 6h, not 5 days
      ++trimmed;
    }
  }
  EXPECT_EQ(trimmed, 2u);  // its own memory query and span
  EXPECT_EQ(prometheus->querier->sent.size(), 4u);
}

// PRO-1: a workload that first matches after the evaluation is evaluated on its own, batched, and then written.
TEST_F(ProactiveHistoryFixture, WorkloadThatFirstMatchesIsEvaluated) {
  workloads->items.clear();
  ASSERT_TRUE(reconcile(ProactiveRecommendations::kReload));
  evaluate();
  infer();
  ASSERT_TRUE(reconcile(kKey));  // asks for its history
  EXPECT_TRUE(writer->writes.empty() || writer->writes.back().set.empty());
  EXPECT_EQ(evaluate(), 1u);
  ASSERT_TRUE(reconcile(kKey));
  ASSERT_FALSE(writer->writes.empty());
  EXPECT_EQ(writer->writes.back().set.at(kRequests), R"({"app":{"gpu":"0.36"}})");
}

// Issue 34 item 11, PRO-1/PRO-2: a workload with 37 minutes of history is read again when its history first covers
// the 1h span (23m later, plus the 5s margin), in one batched read, and gets its value then, not at the hourly reload.
TEST_F(ProactiveHistoryFixture, TooLittleHistoryIsReadAgainWhenItCoversTheSpan) {
  prometheus->querier->first_sample = clock.now() - 37min;
  ASSERT_TRUE(reconcile(ProactiveRecommendations::kReload));
  EXPECT_EQ(evaluate(), 1u);  // the regular evaluation: 37m, no value
  ASSERT_TRUE(reconcile(kKey));
  EXPECT_TRUE(writer->writes.empty() || writer->writes.back().set.empty());
  const std::size_t sent = prometheus->querier->sent.size();

  clock.advance(23min);
  EXPECT_EQ(evaluate(), 0u) << "59m55s of history: not yet";
  clock.advance(5s);
  EXPECT_EQ(evaluate(), 1u) << "the read is due when the history covers 1h";
  EXPECT_EQ(prometheus->querier->sent.size(), sent + 4) << "one batched read (PRO-2), not one query per signal+workload";
  ASSERT_TRUE(reconcile(kKey));
  ASSERT_FALSE(writer->writes.empty());
  EXPECT_EQ(writer->writes.back().set.at(kRequests), R"({"app":{"gpu":"0.36"}})");
  EXPECT_NE(writer->writes.back().set.at(kState).find(R"("updatedAt":"2026-12-04T12:23:05Z")"), std::string::npos);
  EXPECT_EQ(status()["lastEvaluationTime"], "2026-12-04T12:23:05Z");

  // Nothing more until the regular reload, which stays hourly.
  clock.advance(36min);
  EXPECT_EQ(evaluate(), 0u);
  clock.advance(55s);
  EXPECT_EQ(evaluate(), 1u);  // 13:00
}

// A workload with no samples yet is read an hour after its oldest pod started; a read that still finds too little
// (its first samples came later) schedules the next one from the samples, at least a minute later.
TEST_F(ProactiveHistoryFixture, NoSamplesYetIsReadAnHourAfterThePodStarted) {
  subjects->start = clock.now() - 10min;
  prometheus->querier->empty = true;
  ASSERT_TRUE(reconcile(ProactiveRecommendations::kReload));
  EXPECT_EQ(evaluate(), 1u);
  prometheus->querier->empty = false;
  prometheus->querier->first_sample = clock.now() - 9min;  // the first scrape came a minute after the start
  clock.advance(50min);
  EXPECT_EQ(evaluate(), 0u);
  clock.advance(5s);
  EXPECT_EQ(evaluate(), 1u);  // 12:50:05: 59m05s of samples, no value yet
  ASSERT_TRUE(reconcile(kKey));
  EXPECT_TRUE(writer->writes.empty() || writer->writes.back().set.empty());
  clock.advance(59s);
  EXPECT_EQ(evaluate(), 0u);
  clock.advance(1s);
  EXPECT_EQ(evaluate(), 1u);  // 12:51:05, the first sample + 1h + 5s
  ASSERT_TRUE(reconcile(kKey));
  ASSERT_FALSE(writer->writes.empty());
  EXPECT_EQ(writer->writes.back().set.at(kRequests), R"({"app":{"gpu":"0.36"}})");
}

}  // namespace
}  // namespace kubex::controllers
