// The `gpureactivepolicy` controller's cycle (REA-1, REA-3, REA-10, SEL-7, OBS-1, OBS-5) with fakes for every
// dependency: kubex's objects (status_fakes.h), the workloads and their eligible pods, Prometheus (answers by
// query shape, records what it was sent), and the owner-annotation writer. The decision itself is
// decide/reactive's, table-tested in tests/unit/decide/reactive.
#include "controllers/reactive.h"

#include <gtest/gtest.h>

#include "act/owner_annotations.h"
#include "common/time_format.h"
#include "kube/runtime/metrics.h"
#include "prom/client.h"
#include "annotation_fakes.h"
#include "status_fakes.h"

namespace kubex::controllers {
namespace {

using namespace test;
using namespace std::chrono_literals;
using K = api::Kind;

const json kGpu = {{"nvidia.com/gpu.present", "true"}};
const std::string kKey = "ClusterGpuReactivePolicy/reactive";
const std::string kRequests = "cwgpureactive.rightsizing.kubex.ai/desired-resource-requests";
const std::string kState = "cwgpureactive.rightsizing.kubex.ai/reactive-state";

// Answers every compute query with `compute` and every memory query with `memory` (percent; `per_pod` overrides
// both for a pod) and every stddev_over_time query (TEL-4) with `spread`, for each pod named in the query's pod
// matcher, container "app"; fails while `fail` is set.
class FakePrometheus final : public prom::Querier {
 public:
  explicit FakePrometheus(prom::Options o) : options_(std::move(o)) {}
  common::Result<prom::Vector> instant(const std::string& promql) override {
    queries.push_back(promql);
    if (fail) return common::fail("Prometheus query to " + options_.url + "/api/v1/query failed: connection refused");
    bool compute = promql.find("quantile_over_time") != std::string::npos;
    bool stddev = promql.find("stddev_over_time") != std::string::npos;
    prom::Vector v;
    for (const auto& [ns, pod] : pods) {
      if (promql.find("\"" + ns) == std::string::npos || promql.find(pod) == std::string::npos) continue;
      auto own = per_pod.find(pod);
      double c = own == per_pod.end() ? this->compute : own->second.first;
      double m = own == per_pod.end() ? memory : own->second.second;
      v.samples.push_back({{{"namespace", ns}, {"pod", pod}, {"container", "app"}}, stddev ? spread : compute ? c : m});
    }
    return v;
  }
  const prom::Options& options() const override { return options_; }

  std::vector<std::pair<std::string, std::string>> pods;  // (namespace, pod) with samples
  double compute = 45, memory = 20, spread = 0;
  std::map<std::string, std::pair<double, double>> per_pod;  // pod -> (compute, memory)
  bool fail = false;
  std::vector<std::string> queries;
  prom::Options options_;  // what the connector was given
};

class FakeConnector final : public PrometheusConnector {
 public:
  explicit FakeConnector(std::shared_ptr<FakePrometheus> p) : p_(std::move(p)) {}
  common::Result<std::shared_ptr<prom::Querier>> connect(const prom::Options& o) override {
    urls.push_back(o.url);
    p_->options_ = o;
    return p_;
  }
  std::vector<std::string> urls;

 private:
  std::shared_ptr<FakePrometheus> p_;
};

class FakePods final : public observe::SignalPods {
 public:
  std::vector<std::shared_ptr<const api::WorkloadView>> workloads() const override { return list; }
  observe::WorkloadPods eligible(const api::WorkloadView& w, common::Duration, common::TimePoint) const override {
    auto it = pods.find(w.ns.str() + "/" + w.name);
    return it == pods.end() ? observe::WorkloadPods{w.ns.str(), {}} : it->second;
  }
  std::vector<std::shared_ptr<const api::WorkloadView>> list;
  std::map<std::string, observe::WorkloadPods> pods;  // "ns/name" ->
};

std::shared_ptr<const api::WorkloadView> workload(const std::string& ns, const std::string& name,
                                                  json annotations = json::object()) {
  return annotated_deployment(ns, name, kGpu, annotations);
}

observe::WorkloadPods pods_at(const std::string& ns, const std::vector<std::string>& names, decide::Hundredths a) {
  observe::WorkloadPods out{ns, {}};
  for (const auto& n : names) {
    decide::reactive::ContainerInput c;
    c.name = "app";
    c.allocation = a;
    out.pods.push_back({n, {c}, ""});
  }
  return out;
}

class ReactiveFixture : public ::testing::Test {
 protected:
  FakeApi api;
  FakeCache cache{&api};
  FakeCatalogView catalog{&cache};
  common::FakeClock clock;
  kube::Metrics metrics;
  std::shared_ptr<FakePrometheus> prometheus = std::make_shared<FakePrometheus>(prom::Options{});
  FakeConnector* connector = nullptr;
  FakePods* pods = nullptr;
  std::shared_ptr<FakeAnnotationWriter> writer = std::make_shared<FakeAnnotationWriter>();
  std::unique_ptr<ReactiveRecommender> ctl;

  void SetUp() override {
    api.put(kubex_object("ClusterAutomationStrategy", "", "kai", kai_strategy_spec()));
    json reactive = reactive_spec("kai", true);
    reactive["minPodMetricsAge"] = "0s";
    api.put(kubex_object("ClusterGpuReactivePolicy", "", "reactive", reactive));
    api.put(kubex_object("GlobalConfiguration", "", "global-config",
                         {{"prometheus", {{"url", "http://prom.example:9090"}}}}));
    ReactiveDeps d;
    d.catalog = &catalog;
    auto p = std::make_unique<FakePods>();
    pods = p.get();
    d.pods = std::move(p);
    d.annotations = writer;
    d.status = std::make_unique<FakeStatusWriter>(&api);
    auto c = std::make_unique<FakeConnector>(prometheus);
    connector = c.get();
    d.prometheus = std::move(c);
    ReactiveOptions o;
    o.clock = &clock;
    o.metrics = &metrics;
    ctl = std::make_unique<ReactiveRecommender>(std::move(d), o);
  }

  void add(const std::string& ns, const std::string& name, std::vector<std::string> pod_names,
           decide::Hundredths a = 25, json annotations = json::object()) {
    pods->list.push_back(workload(ns, name, annotations));
    pods->pods[ns + "/" + name] = pods_at(ns, pod_names, a);
    for (const auto& p : pod_names) prometheus->pods.push_back({ns, p});
  }

  kube::ReconcileOutcome cycle() {
    cache.sync();
    return ctl->reconcile(kKey);
  }
  json ready() { return api.condition(K::kClusterGpuReactivePolicy, "", "reactive", "Ready"); }
  // The pods of `ns/name` share one GPU (node and KAI group, as observe reads them).
  void share_gpu(const std::string& ns, const std::string& name, const std::string& gpu = "node-a/group-1") {
    for (auto& p : pods->pods[ns + "/" + name].pods) p.gpu = gpu;
  }
};

TEST_F(ReactiveFixture, OneCycleWritesTheRecommendationAndReportsReady) {  // REA-6, REA-9, OBS-1, OBS-5
  add("ml", "infer", {"infer-1"});
  auto r = cycle();
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->requeue_after, std::chrono::minutes(1));  // REA-1: gpuReactiveCheckInterval
  ASSERT_EQ(writer->writes.size(), 1u);
  EXPECT_EQ(writer->writes[0].owner, "ml/infer");
  // min(0.45 × 1.2, 0.25 × 2) = 0.5
  EXPECT_EQ(writer->writes[0].set.at(kRequests), R"({"app":{"gpu":"0.5"}})");
  EXPECT_EQ(writer->writes[0].set.at(kState),
            R"({"baseline":{"app":"0.25"},"driver":"compute","updatedAt":")" + common::format_rfc3339(clock.now()) +
                R"("})");
  EXPECT_EQ(ready()["status"], "True");
  EXPECT_EQ(ready()["reason"], "Reconciled");
  EXPECT_EQ(api.status(K::kClusterGpuReactivePolicy, "", "reactive")["lastEvaluationTime"],
            common::format_rfc3339(clock.now()));
  EXPECT_EQ(connector->urls, std::vector<std::string>{"http://prom.example:9090"});
}

TEST_F(ReactiveFixture, FourQueriesPerPolicyWhateverThePodCount) {  // REA-3
  add("ml", "a", {"a-1", "a-2"});
  add("team", "b", {"b-1"});
  ASSERT_TRUE(cycle());
  EXPECT_EQ(prometheus->queries.size(), 4u);  // compute and memory, upsize and scale-back windows
  for (const auto& q : prometheus->queries) {
    EXPECT_NE(q.find(R"(namespace=~"ml|team")"), std::string::npos) << q;
    EXPECT_NE(q.find(R"(pod=~"a-1|a-2|b-1")"), std::string::npos) << q;
  }
}

TEST_F(ReactiveFixture, MoreThanFiveHundredPodsSplitTheQueries) {  // REA-3: ≤ 500 pods per query
  std::vector<std::string> names;
  for (int i = 0; i < 1200; ++i) names.push_back("p-" + std::to_string(i));
  add("ml", "big", names);
  ASSERT_TRUE(cycle());
  EXPECT_EQ(prometheus->queries.size(), 4u * 3u);
}

TEST_F(ReactiveFixture, PrometheusDownChangesNothingAndRecovers) {  // REA-10, OBS-1
  add("ml", "infer", {"infer-1"});
  prometheus->fail = true;
  auto r = cycle();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->requeue_after, std::chrono::minutes(1));
  EXPECT_TRUE(writer->writes.empty());
  EXPECT_EQ(ready()["status"], "False");
  EXPECT_EQ(ready()["reason"], "PrometheusQueryFailed");
  EXPECT_EQ(ready()["message"],
            "Prometheus query to http://prom.example:9090/api/v1/query failed: connection refused");
  EXPECT_EQ(prometheus->queries.size(), 1u);  // the read stops at the first failure

  prometheus->fail = false;
  clock.advance(1min);
  ASSERT_TRUE(cycle());
  EXPECT_EQ(ready()["status"], "True");
  EXPECT_EQ(writer->writes.size(), 1u);
}

TEST_F(ReactiveFixture, OneCyclePerIntervalAndAtOnceWhenTheSpecChanges) {  // REA-1
  add("ml", "infer", {"infer-1"});
  ASSERT_TRUE(cycle());
  ASSERT_EQ(prometheus->queries.size(), 4u);
  clock.advance(20s);
  auto r = cycle();  // early (e.g. a duplicate wake-up): nothing sent, requeued for the rest
  ASSERT_TRUE(r);
  EXPECT_EQ(prometheus->queries.size(), 4u);
  EXPECT_EQ(r->requeue_after, 40s);
  clock.advance(40s);
  ASSERT_TRUE(cycle());
  EXPECT_EQ(prometheus->queries.size(), 8u);
  // A spec change (new generation) is evaluated at once.
  clock.advance(5s);
  json spec = reactive_spec("kai", true);
  spec["minPodMetricsAge"] = "0s";
  spec["weight"] = 3;
  api.put(kubex_object("ClusterGpuReactivePolicy", "", "reactive", spec));
  ASSERT_TRUE(cycle());
  EXPECT_EQ(prometheus->queries.size(), 12u);
}

TEST_F(ReactiveFixture, OnlyTheWinnerEvaluatesAndTheOtherPrefixGoes) {  // SEL-5, SEL-7
  // A namespaced reactive policy (priority 120) wins ml/infer; the cluster policy's cycle leaves it alone.
  api.put(kubex_object("AutomationStrategy", "ml", "kai", kai_strategy_spec()));
  json ns_spec = reactive_spec("kai");
  ns_spec["minPodMetricsAge"] = "0s";
  api.put(kubex_object("GpuReactivePolicy", "ml", "reactive", ns_spec));
  add("ml", "infer", {"infer-1"}, 25, {{kRequests, R"({"app":{"gpu":"0.3"}})"}});
  ASSERT_TRUE(cycle());
  EXPECT_TRUE(prometheus->queries.empty());
  EXPECT_TRUE(writer->writes.empty());

  cache.sync();
  ASSERT_TRUE(ctl->reconcile("GpuReactivePolicy/ml/reactive"));
  ASSERT_EQ(writer->writes.size(), 1u);
  EXPECT_EQ(writer->writes[0].set.at("gpureactive.rightsizing.kubex.ai/desired-resource-requests"),
            R"({"app":{"gpu":"0.5"}})");
  EXPECT_EQ(writer->writes[0].remove, std::vector<std::string>{kRequests});
}

TEST_F(ReactiveFixture, InvalidPolicyDoesNothing) {  // SEL-4
  json spec = reactive_spec("missing", true);
  api.put(kubex_object("ClusterGpuReactivePolicy", "", "reactive", spec));
  add("ml", "infer", {"infer-1"});
  auto r = cycle();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->requeue_after, 0s);
  EXPECT_TRUE(prometheus->queries.empty());
  EXPECT_TRUE(writer->writes.empty());
}

TEST_F(ReactiveFixture, NoEligiblePodsSendsNoQueryAndWritesNothing) {  // REA-2, X7
  pods->list.push_back(workload("ml", "infer"));
  ASSERT_TRUE(cycle());
  EXPECT_TRUE(prometheus->queries.empty());
  EXPECT_TRUE(writer->writes.empty());
  EXPECT_EQ(ready()["status"], "True");
}

TEST_F(ReactiveFixture, QueriesAreCounted) {  // OBS-5 kubex_prometheus_queries_total
  add("ml", "infer", {"infer-1"});
  ASSERT_TRUE(cycle());
  prometheus->fail = true;
  clock.advance(1min);
  ASSERT_TRUE(cycle());
  std::string text = metrics.render();
  EXPECT_NE(text.find(R"(kubex_prometheus_queries_total{phase="reactive",result="success"} 4)"), std::string::npos) << text;
  EXPECT_NE(text.find(R"(kubex_prometheus_queries_total{phase="reactive",result="error"} 1)"), std::string::npos) << text;
  EXPECT_NE(text.find(R"(kubex_gpu_recommendations_total{direction="initial",policy_kind="ClusterGpuReactivePolicy"} 1)"),
            std::string::npos)
      << text;
}

TEST_F(ReactiveFixture, CopiedSamplesOnOneGpuRecommendNothingAndSayMetricsNotPerPod) {  // TEL-4
  add("ml", "infer", {"infer-1", "infer-2"});
  share_gpu("ml", "infer");
  prometheus->spread = 6.5;  // the series moves and both sharers read the same: the device's value, copied
  ASSERT_TRUE(cycle());
  EXPECT_TRUE(writer->writes.empty());  // no recommendation from either pod
  EXPECT_EQ(prometheus->queries.size(), 5u);  // the four REA-3 queries and one for the suspects' spread
  EXPECT_NE(prometheus->queries[4].find(R"(stddev_over_time(kubex_gpu_container_sm_utilization_percent{namespace=~"ml",pod=~"infer-1|infer-2"}[600s]))"),
            std::string::npos)
      << prometheus->queries[4];
  EXPECT_EQ(ready()["status"], "False");
  EXPECT_EQ(ready()["reason"], "MetricsNotPerPod");
  EXPECT_EQ(ready()["message"],
            "metric \"kubex_gpu_container_sm_utilization_percent\" gives pods ml/infer-1 and ml/infer-2 on one GPU the "
            "same series (the device's value copied onto each pod, as DCGM's per-pod mode does); no recommendation "
            "for 2 pods sharing a GPU: use kubex gpu-exporter or another per-process source");

  // The source turns per process: the condition clears and the workload is recommended for.
  prometheus->per_pod["infer-2"] = {30, 15};
  clock.advance(1min);
  ASSERT_TRUE(cycle());
  EXPECT_EQ(prometheus->queries.size(), 9u);  // no suspects: four queries
  EXPECT_EQ(ready()["status"], "True");
  EXPECT_EQ(ready()["reason"], "Reconciled");
  ASSERT_EQ(writer->writes.size(), 1u);
  EXPECT_EQ(writer->writes[0].set.at(kRequests), R"({"app":{"gpu":"0.5"}})");
}

TEST_F(ReactiveFixture, EqualFlatSamplesOfSharersAreStillPerPod) {  // TEL-4: equal constant demand (kubex-sim)
  add("ml", "infer", {"infer-1", "infer-2"});
  share_gpu("ml", "infer");
  prometheus->spread = 0;
  ASSERT_TRUE(cycle());
  EXPECT_EQ(prometheus->queries.size(), 5u);
  EXPECT_EQ(ready()["reason"], "Reconciled");
  ASSERT_EQ(writer->writes.size(), 1u);
}

TEST_F(ReactiveFixture, EqualSamplesOnDifferentGpusAreNotCompared) {  // TEL-4
  add("ml", "a", {"a-1"});
  add("ml", "b", {"b-1"});
  share_gpu("ml", "a", "node-a/group-1");
  share_gpu("ml", "b", "node-a/group-2");
  prometheus->spread = 6.5;
  ASSERT_TRUE(cycle());
  EXPECT_EQ(prometheus->queries.size(), 4u);
  EXPECT_EQ(ready()["reason"], "Reconciled");
  EXPECT_EQ(writer->writes.size(), 2u);
}

TEST_F(ReactiveFixture, OnlyTheCopiedPodsLeaveTheirWorkloadsCycle) {  // TEL-4, OBS-4
  // infer-1 and other-1 share a GPU and read its copied series; infer-2 is on another GPU and drives the upsize.
  add("ml", "infer", {"infer-1", "infer-2"});
  add("ml", "other", {"other-1"});
  share_gpu("ml", "infer");
  share_gpu("ml", "other");
  pods->pods["ml/infer"].pods[1].gpu = "node-b/group-9";
  prometheus->per_pod["infer-1"] = {90, 20};
  prometheus->per_pod["other-1"] = {90, 20};
  prometheus->spread = 4;
  ASSERT_TRUE(cycle());
  EXPECT_EQ(ready()["reason"], "MetricsNotPerPod");
  EXPECT_NE(ready()["message"].get<std::string>().find("pods ml/infer-1 and ml/other-1 on one GPU"), std::string::npos);
  ASSERT_EQ(writer->writes.size(), 1u);  // infer from infer-2 (45 %): 0.5; nothing for other
  EXPECT_EQ(writer->writes[0].owner, "ml/infer");
  EXPECT_EQ(writer->writes[0].set.at(kRequests), R"({"app":{"gpu":"0.5"}})");
}

TEST_F(ReactiveFixture, PrometheusFailureWinsOverMetricsNotPerPod) {  // REA-10, TEL-4
  add("ml", "infer", {"infer-1", "infer-2"});
  share_gpu("ml", "infer");
  prometheus->spread = 6.5;
  ASSERT_TRUE(cycle());
  EXPECT_EQ(ready()["reason"], "MetricsNotPerPod");
  prometheus->fail = true;
  clock.advance(1min);
  ASSERT_TRUE(cycle());
  EXPECT_EQ(ready()["reason"], "PrometheusQueryFailed");
}

}  // namespace
}  // namespace kubex::controllers
