// observe::read_history (PRO-2): the reload's queries (the PRO-2 count), at most two in flight, answers mapped back to
// workloads and reduced per container, and a failed batch marking its workloads as not refreshed. A fake Querier
// answers by the query's text; the texts themselves are pinned in tests/unit/prom/history_queries_test.cpp.
#include "observe/gpu_history.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "prom/client.h"

namespace kubex::observe {
namespace {

using namespace std::chrono_literals;

class FakeQuerier final : public prom::Querier {
 public:
  std::function<common::Result<prom::Vector>(const std::string&)> answer;
  std::vector<std::string> sent;
  std::atomic<int> in_flight{0}, max_in_flight{0};
  std::mutex mu;
  prom::Options opts;

  common::Result<prom::Vector> instant(const std::string& q) override {
    int now = ++in_flight;
    for (int seen = max_in_flight; now > seen && !max_in_flight.compare_exchange_weak(seen, now);) {
    }
    std::this_thread::sleep_for(2ms);  // let concurrent queries overlap
    {
      std::lock_guard lk(mu);
      sent.push_back(q);
    }
    auto r = answer(q);
    --in_flight;
    return r;
  }
  const prom::Options& options() const override { return opts; }
};

const HistoryReadOptions kNoRetries = [] {
  HistoryReadOptions o;
  o.retry_after.clear();
  return o;
}();

prom::Sample sample(const std::string& ns, const std::string& pod, const std::string& c, double v) {
  return {{{"namespace", ns}, {"pod", pod}, {"container", c}}, v};
}

HistoryRequest request(const std::string& ns, const std::string& name, std::chrono::seconds lm = 345600s,
                       bool whole = true) {
  return {{"Deployment", ns, name, whole}, 345600s, lm};
}

// PRO-2's count: 2 × ⌈workloads/100⌉ + (workloads with a shorter memory lookback), and as many span queries.
TEST(GpuHistoryRead, SendsThePro2NumberOfQueriesTwoAtATime) {
  std::vector<HistoryRequest> requests;
  for (int i = 0; i < 250; ++i) requests.push_back(request("ml", "d" + std::to_string(i)));
  requests.push_back(request("ml", "moved", 7200s));  // an allocation transition 2h ago
  FakeQuerier q;
  q.answer = [](const std::string&) { return prom::Vector{}; };
  HistoryReadResult r = read_history(q, requests, common::TimePoint{} + 1000000s);
  // compute + span: 3 batches × 2; memory + span: 3 batches × 2 (250 share L) + 2 for the moved one.
  EXPECT_EQ(r.queries, 14u);
  EXPECT_EQ(q.sent.size(), 14u);
  EXPECT_LE(q.max_in_flight.load(), 2);  // PRO-2: at most 2 in flight per engine
  EXPECT_EQ(std::count_if(q.sent.begin(), q.sent.end(), [](const auto& s) { return s.find("[7200s") != s.npos; }), 2);
}

// Answers map back by namespace and pattern; each container keeps the maximum over its workload's pods, and the span
// of its oldest sample.
TEST(GpuHistoryRead, MapsAnswersBackAndTakesTheMaximumOverPods) {
  const auto now = common::TimePoint{} + 1000000s;
  FakeQuerier q;
  q.answer = [](const std::string& query) -> common::Result<prom::Vector> {
    prom::Vector v;
    const bool span = query.starts_with("min by");
    const bool memory = query.find("memory_footprint") != std::string::npos;
    if (span) {
      v.samples = {sample("ml", "infer-7d9f-aaaaa", "app", memory ? 1000000 - 7200 : 1000000 - 345000),
                   sample("ml", "infer-7d9f-bbbbb", "app", 1000000 - 600),
                   sample("ml", "web-api-5c-x1", "app", 1000000 - 50)};
    } else {
      v.samples = {sample("ml", "infer-7d9f-aaaaa", "app", memory ? 30 : 22),
                   sample("ml", "infer-7d9f-bbbbb", "app", memory ? 12 : 18),
                   sample("ml", "web-api-5c-x1", "app", 90),
                   sample("other", "infer-7d9f-ccccc", "app", 99)};  // another namespace: not this workload
    }
    return v;
  };
  HistoryReadResult r = read_history(q, {request("ml", "infer"), request("ml", "web-api")}, now);
  ASSERT_TRUE(r.errors.empty());
  const decide::ContainerHistory& h = r.workloads.at("Deployment/ml/infer").at("app");
  EXPECT_EQ(*h.compute_percent, 22);
  EXPECT_EQ(*h.memory_percent, 30);
  EXPECT_EQ(*h.compute_span, 345000s);
  EXPECT_EQ(*h.memory_span, 7200s);
  EXPECT_EQ(*r.workloads.at("Deployment/ml/web-api").at("app").compute_percent, 90);
  EXPECT_EQ(r.workloads.size(), 2u);
}

// A failed query leaves that signal unset and marks the batch's workloads as not refreshed (PRO-7: their previous
// history values stay), while the other signals' answers still count.
TEST(GpuHistoryRead, AFailedQueryMarksItsBatch) {
  FakeQuerier q;
  q.answer = [](const std::string& query) -> common::Result<prom::Vector> {
    if (query.find("memory_footprint") != std::string::npos && !query.starts_with("min by")) {
      return common::fail("Prometheus query to http://p/api/v1/query timed out after 30s");
    }
    prom::Vector v;
    v.samples = {sample("ml", "infer-7d9f-aaaaa", "app", 22)};
    return v;
  };
  HistoryReadResult r = read_history(q, {request("ml", "infer")}, common::TimePoint{} + 1000000s, kNoRetries);
  EXPECT_EQ(r.failed_workloads, std::set<std::string>{"Deployment/ml/infer"});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].find("timed out"), std::string::npos);
  const auto& h = r.workloads.at("Deployment/ml/infer").at("app");
  EXPECT_TRUE(h.compute_percent.has_value());
  EXPECT_FALSE(h.memory_percent.has_value());
}

// PRO-8: a reload whose queries fail keeps every value; once one query failed nothing more is sent, and every
// workload whose batch was not read counts as not refreshed.
TEST(GpuHistoryRead, StopsSendingAfterAFailure) {
  std::vector<HistoryRequest> requests;
  for (int i = 0; i < 300; ++i) requests.push_back(request("ml", "d" + std::to_string(i)));
  FakeQuerier q;
  q.answer = [](const std::string&) -> common::Result<prom::Vector> { return common::fail("connection refused"); };
  HistoryReadResult r = read_history(q, requests, common::TimePoint{} + 1000000s, kNoRetries);
  EXPECT_LE(r.queries, 2u);  // the two in flight when the first failed
  EXPECT_EQ(r.queries, q.sent.size());
  EXPECT_EQ(r.failed_requests, r.queries);
  EXPECT_EQ(r.failed_workloads.size(), 300u);
}

// Per-batch back-off: a query that fails once is sent again after the first delay and its answer counts; one that
// keeps failing is tried once per delay, then the read stops.
TEST(GpuHistoryRead, AFailedQueryIsRetriedWithBackOff) {
  std::atomic<int> calls{0};
  FakeQuerier q;
  q.answer = [&](const std::string&) -> common::Result<prom::Vector> {
    if (calls++ == 0) return common::fail("connection reset");
    prom::Vector v;
    v.samples = {sample("ml", "infer-7d9f-aaaaa", "app", 22)};
    return v;
  };
  HistoryReadOptions once;
  once.max_in_flight = 1;
  once.retry_after = {1ms, 2ms};
  HistoryReadResult r = read_history(q, {request("ml", "infer")}, common::TimePoint{} + 1000000s, once);
  EXPECT_TRUE(r.errors.empty());
  EXPECT_TRUE(r.failed_workloads.empty());
  EXPECT_EQ(r.queries, 5u);  // 4 queries and the one retry
  EXPECT_EQ(r.failed_requests, 1u);
  EXPECT_TRUE(r.workloads.at("Deployment/ml/infer").at("app").compute_percent.has_value());

  FakeQuerier down;
  down.answer = [](const std::string&) -> common::Result<prom::Vector> { return common::fail("connection refused"); };
  r = read_history(down, {request("ml", "infer")}, common::TimePoint{} + 1000000s, once);
  EXPECT_EQ(r.queries, 3u);  // the first query and its two retries; nothing after
  EXPECT_EQ(r.failed_requests, 3u);
  EXPECT_EQ(r.errors.size(), 1u);
}

TEST(GpuHistoryRead, NoWorkloadsNoQueries) {
  FakeQuerier q;
  q.answer = [](const std::string&) { return prom::Vector{}; };
  EXPECT_EQ(read_history(q, {}, common::TimePoint{}).queries, 0u);
  EXPECT_TRUE(q.sent.empty());
}

}  // namespace
}  // namespace kubex::observe
