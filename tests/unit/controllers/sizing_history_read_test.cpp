// observe::read_sizing_history (issue 36, `kubex plan sizing`): one range query per signal and batch (SPEC PRO-2
// "Batching (revised)": never per workload), answers mapped back by namespace and pod pattern (the longest name
// wins), samples in GPUs per REA-4 (fullGPU v/100, currentAllocation v/100 × a_c), the highest over the workload's
// pods per timestamp, and a failed query reported. A fake Querier answers by the query's text; the text itself is
// pinned in tests/unit/prom/sizing_queries_test.cpp.
#include "observe/sizing_history.h"

#include <gtest/gtest.h>

#include "prom/client.h"

namespace kubex::observe {
namespace {

using namespace std::chrono_literals;

class FakeRange final : public prom::Querier {
 public:
  std::function<common::Result<prom::Matrix>(const std::string&)> answer;
  std::vector<std::string> sent;
  prom::Options opts;

  common::Result<prom::Vector> instant(const std::string&) override { return common::fail("instant"); }
  common::Result<prom::Matrix> range(const std::string& q, common::TimePoint, common::TimePoint,
                                     std::chrono::seconds step) override {
    EXPECT_EQ(step, 60s);
    sent.push_back(q);
    return answer(q);
  }
  const prom::Options& options() const override { return opts; }
};

const common::TimePoint kT0{std::chrono::seconds(1'800'000'000)};

prom::RangeSeries series(const std::string& ns, const std::string& pod, const std::string& c,
                         std::vector<std::pair<int, double>> minute_values) {
  prom::RangeSeries s;
  s.labels = {{"namespace", ns}, {"pod", pod}, {"container", c}};
  for (auto [m, v] : minute_values) s.points.push_back({kT0 + std::chrono::minutes(m), v});
  return s;
}

api::ReactiveSpec reactive() {
  api::ReactiveSpec r;
  r.compute.prometheus = {"sm", "fullGPU", "namespace", "pod", "container"};
  r.memory.prometheus = {"mem", "currentAllocation", "namespace", "pod", "container"};
  return r;
}

// PRO-2 batching, REA-4
TEST(SizingHistoryRead, OneQueryPerSignalForAKindsWorkloadsAndSamplesInGpus) {
  FakeRange q;
  q.answer = [](const std::string& text) -> common::Result<prom::Matrix> {
    prom::Matrix m;
    if (text.find("sm{") != std::string::npos) {
      // two pods of `web` at minute 0: the higher one counts; `web-api`'s pod is web-api's, not web's.
      m.series.push_back(series("ml", "web-7d9f-x2z4k", "app", {{0, 20}, {1, 30}}));
      m.series.push_back(series("ml", "web-5c6b-abcde", "app", {{0, 50}}));
      m.series.push_back(series("ml", "web-api-7d9f-x2z4k", "app", {{0, 80}}));
      m.series.push_back(series("ml", "web-7d9f-x2z4k", "sidecar", {{0, 99}}));  // not a GPU container asked for
      m.series.push_back(series("other", "web-7d9f-x2z4k", "app", {{0, 99}}));   // another namespace
    } else {
      m.series.push_back(series("ml", "web-7d9f-x2z4k", "app", {{1, 40}}));  // 40 % of 0.5 = 0.2 GPU
    }
    return m;
  };
  std::vector<SizingSubject> subjects = {{{"Deployment", "ml", "web", false}, "app", 50},
                                         {{"Deployment", "ml", "web-api", false}, "app", 25}};
  SizingRead r = read_sizing_history(q, reactive(), subjects, kT0, kT0 + 1h, 60s);
  EXPECT_TRUE(r.errors.empty());
  ASSERT_EQ(q.sent.size(), 2u);  // one query per signal covers both Deployments
  EXPECT_EQ(r.queries, 2u);
  for (const auto& text : q.sent) EXPECT_NE(text.find("(web|web-api)-[a-z0-9]+-[a-z0-9]+"), std::string::npos);
  const auto& web = r.samples.at("Deployment/ml/web/app");
  ASSERT_EQ(web.size(), 2u);
  EXPECT_EQ(web[0].at, kT0);
  EXPECT_DOUBLE_EQ(*web[0].compute, 0.5);  // fullGPU: v/100, the highest of the two pods
  EXPECT_FALSE(web[0].memory);
  EXPECT_EQ(web[1].at, kT0 + 1min);
  EXPECT_DOUBLE_EQ(*web[1].compute, 0.3);
  EXPECT_DOUBLE_EQ(*web[1].memory, 0.2);  // currentAllocation: v/100 × a_c
  const auto& api = r.samples.at("Deployment/ml/web-api/app");
  ASSERT_EQ(api.size(), 1u);
  EXPECT_DOUBLE_EQ(*api[0].compute, 0.8);
}

// Kinds are batched apart; a failed query is reported and its batch gets no samples.
TEST(SizingHistoryRead, FailedQueryIsReportedAndKindsAreBatchedApart) {
  FakeRange q;
  q.answer = [](const std::string& text) -> common::Result<prom::Matrix> {
    if (text.find("(db)") != std::string::npos) return common::fail("Prometheus range query to x failed: boom");
    prom::Matrix m;
    m.series.push_back(series("ml", "web-7d9f-x2z4k", "app", {{0, 10}}));
    return m;
  };
  std::vector<SizingSubject> subjects = {{{"Deployment", "ml", "web", true}, "app", 100},
                                         {{"StatefulSet", "ml", "db", true}, "app", 100}};
  SizingRead r = read_sizing_history(q, reactive(), subjects, kT0, kT0 + 1h, 60s);
  EXPECT_EQ(q.sent.size(), 4u);  // two kinds × two signals
  ASSERT_EQ(r.errors.size(), 2u);
  EXPECT_EQ(r.errors[0], "Prometheus range query to x failed: boom");
  EXPECT_FALSE(r.samples.count("StatefulSet/ml/db/app"));
  EXPECT_DOUBLE_EQ(*r.samples.at("Deployment/ml/web/app")[0].memory, 0.1);  // 10 % of one GPU
}

}  // namespace
}  // namespace kubex::observe
