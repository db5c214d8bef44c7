// The REA-3 query builders: exact query text, escaping and the 500-pod split.
#include "prom/promql.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace kubex::prom {
namespace {

using namespace std::chrono_literals;

SignalSelector selector(std::string metric, Aggregation agg) {
  return SignalSelector{std::move(metric), "namespace", "pod", "container", agg};
}

const std::vector<PodName> kTwoPods = {{"ns1", "p1"}, {"ns2", "p2"}};

struct QueryCase {
  const char* name;
  const char* metric;
  Reduction reduction;
  Aggregation agg;
  const char* want;
};

// REA-3: compute is the 95th percentile over the window, memory the maximum; `agg` is sum (fullGPU) or avg
// (currentAllocation); a `_total` metric is a counter read as rate(…[1m]) through a [Ws:30s] subquery.
const QueryCase kQueries[] = {
    {"gauge_compute_sum", "gpu_util", Reduction::kQuantile95, Aggregation::kSum,
     R"(sum by (namespace,pod,container) (quantile_over_time(0.95, gpu_util{namespace=~"ns1|ns2",pod=~"p1|p2"}[600s])))"},
    {"gauge_compute_avg", "gpu_util", Reduction::kQuantile95, Aggregation::kAvg,
     R"(avg by (namespace,pod,container) (quantile_over_time(0.95, gpu_util{namespace=~"ns1|ns2",pod=~"p1|p2"}[600s])))"},
    {"gauge_memory_avg", "gpu_mem", Reduction::kMax, Aggregation::kAvg,
     R"(avg by (namespace,pod,container) (max_over_time(gpu_mem{namespace=~"ns1|ns2",pod=~"p1|p2"}[600s])))"},
    {"gauge_memory_sum", "gpu_mem", Reduction::kMax, Aggregation::kSum,
     R"(sum by (namespace,pod,container) (max_over_time(gpu_mem{namespace=~"ns1|ns2",pod=~"p1|p2"}[600s])))"},
    {"counter_compute_sum", "sm_seconds_total", Reduction::kQuantile95, Aggregation::kSum,
     R"(sum by (namespace,pod,container) (quantile_over_time(0.95, rate(sm_seconds_total{namespace=~"ns1|ns2",pod=~"p1|p2"}[1m])[600s:30s])))"},
    {"counter_compute_avg", "sm_seconds_total", Reduction::kQuantile95, Aggregation::kAvg,
     R"(avg by (namespace,pod,container) (quantile_over_time(0.95, rate(sm_seconds_total{namespace=~"ns1|ns2",pod=~"p1|p2"}[1m])[600s:30s])))"},
    {"counter_memory_avg", "mem_bytes_total", Reduction::kMax, Aggregation::kAvg,
     R"(avg by (namespace,pod,container) (max_over_time(rate(mem_bytes_total{namespace=~"ns1|ns2",pod=~"p1|p2"}[1m])[600s:30s])))"},
    // TEL-4: whether a suspect pair's compute series moved.
    {"gauge_compute_stddev", "gpu_util", Reduction::kStddev, Aggregation::kSum,
     R"(sum by (namespace,pod,container) (stddev_over_time(gpu_util{namespace=~"ns1|ns2",pod=~"p1|p2"}[600s])))"},
    {"counter_memory_sum", "mem_bytes_total", Reduction::kMax, Aggregation::kSum,
     R"(sum by (namespace,pod,container) (max_over_time(rate(mem_bytes_total{namespace=~"ns1|ns2",pod=~"p1|p2"}[1m])[600s:30s])))"},
};

class SignalQueryText : public ::testing::TestWithParam<QueryCase> {};

// REA-3
TEST_P(SignalQueryText, IsExact) {
  const auto& c = GetParam();
  EXPECT_EQ(signal_query(selector(c.metric, c.agg), c.reduction, kTwoPods, 600s), c.want);
  auto all = signal_queries(selector(c.metric, c.agg), c.reduction, kTwoPods, 600s);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0], c.want);
}

INSTANTIATE_TEST_SUITE_P(Rea3, SignalQueryText, ::testing::ValuesIn(kQueries),
                         [](const auto& info) { return std::string(info.param.name); });

// REA-3: the label names come from the policy, in the by-clause and in the matchers.
TEST(SignalQuery, UsesThePolicysLabelNames) {
  SignalSelector s{"DCGM_FI_DEV_GPU_UTIL", "exported_namespace", "exported_pod", "exported_container",
                   Aggregation::kSum};
  EXPECT_EQ(signal_query(s, Reduction::kMax, std::vector<PodName>{{"team-a", "web-0"}}, 120s),
            R"(sum by (exported_namespace,exported_pod,exported_container) )"
            R"((max_over_time(DCGM_FI_DEV_GPU_UTIL{exported_namespace=~"team-a",exported_pod=~"web-0"}[120s])))");
}

// SPEC X8: a counter over a 120 s window.
TEST(SignalQuery, CounterWindowIsTheSubqueryRange) {
  auto q = signal_query(selector("kubex_gpu_container_sm_utilization_percent_seconds_total", Aggregation::kSum),
                        Reduction::kQuantile95, std::vector<PodName>{{"a", "b"}}, 120s);
  EXPECT_NE(q.find("rate(kubex_gpu_container_sm_utilization_percent_seconds_total{namespace=~\"a\",pod=~\"b\"}"
                   "[1m])[120s:30s]"),
            std::string::npos)
      << q;
}

// REA-3: the matchers list each namespace and pod name once, sorted.
TEST(SignalQuery, MatchersAreSortedAndUnique) {
  std::vector<PodName> pods = {{"b", "x"}, {"a", "y"}, {"b", "y"}, {"a", "x"}};
  EXPECT_EQ(signal_query(selector("m", Aggregation::kSum), Reduction::kMax, pods, 60s),
            R"(sum by (namespace,pod,container) (max_over_time(m{namespace=~"a|b",pod=~"x|y"}[60s])))");
}

TEST(IsCounter, NameEndsInTotal) {
  EXPECT_TRUE(is_counter("a_total"));
  EXPECT_TRUE(is_counter("kubex_gpu_container_sm_utilization_percent_seconds_total"));
  EXPECT_FALSE(is_counter("a_totals"));
  EXPECT_FALSE(is_counter("total"));
  EXPECT_FALSE(is_counter("DCGM_FI_DEV_GPU_UTIL"));
}

// REA-3: "regex characters escaped".
TEST(RegexEscape, EscapesEveryRe2Metacharacter) {
  EXPECT_EQ(regex_escape("web-0"), "web-0");
  EXPECT_EQ(regex_escape("a.b"), R"(a\.b)");
  EXPECT_EQ(regex_escape(R"(\.+*?()|[]{}^$)"), R"(\\\.\+\*\?\(\)\|\[\]\{\}\^\$)");
  EXPECT_EQ(regex_escape(""), "");
}

TEST(StringLiteral, EscapesBackslashAndQuote) {
  EXPECT_EQ(string_literal("abc"), R"("abc")");
  EXPECT_EQ(string_literal(R"(a\.b)"), R"("a\\.b")");
  EXPECT_EQ(string_literal(R"(say "hi")"), R"("say \"hi\"")");
  EXPECT_EQ(string_literal("a\nb\tc\r"), R"("a\nb\tc\r")");
  EXPECT_EQ(string_literal(""), R"("")");
}

// REA-3: regex escaping first, then string-literal escaping: pod `a.b` is "a\\.b" in the query text.
TEST(SignalQuery, EscapesNamesForRegexThenString) {
  auto q = signal_query(selector("m", Aggregation::kSum), Reduction::kMax,
                        std::vector<PodName>{{"ns.x", "a.b"}, {"ns.x", "c+d"}}, 600s);
  EXPECT_EQ(q, R"(sum by (namespace,pod,container) (max_over_time(m{namespace=~"ns\\.x",pod=~"a\\.b|c\\+d"}[600s])))");
}

// REA-3: at most 500 pods per query, never one query per pod. 1001 pods -> 3 queries.
TEST(SignalQueries, SplitsIntoChunksOfAtMost500Pods) {
  std::vector<PodName> pods;
  // Namespace n0 holds pods 0..599, n1 600..999, n2 the last one; given in reverse to show the sort.
  for (int i = 1000; i >= 0; --i) {
    char name[16];
    std::snprintf(name, sizeof name, "p%04d", i);
    pods.push_back({i < 600 ? "n0" : i < 1000 ? "n1" : "n2", name});
  }
  pods.push_back(pods.front());  // a duplicate is counted once
  auto queries = signal_queries(selector("m", Aggregation::kSum), Reduction::kMax, pods, 600s);
  ASSERT_EQ(queries.size(), 3u);
  auto count_pods = [](const std::string& q) {
    auto start = q.find("pod=~\"") + 6;
    auto end = q.find('"', start);
    return std::count(q.begin() + static_cast<long>(start), q.begin() + static_cast<long>(end), '|') + 1;
  };
  EXPECT_EQ(count_pods(queries[0]), 500);
  EXPECT_EQ(count_pods(queries[1]), 500);
  EXPECT_EQ(count_pods(queries[2]), 1);
  // Sorted by (ns, name): the first chunk is n0's p0000..p0499, the second n0's p0500..p0599 and n1's
  // p0600..p0999, the third n2's p1000. Each namespace matcher names only its chunk's namespaces.
  EXPECT_NE(queries[0].find(R"(namespace=~"n0",pod=~"p0000|p0001|)"), std::string::npos);
  EXPECT_NE(queries[0].find(R"(|p0499"})"), std::string::npos);
  EXPECT_NE(queries[1].find(R"(namespace=~"n0|n1",pod=~"p0500|)"), std::string::npos);
  EXPECT_NE(queries[1].find(R"(|p0999"})"), std::string::npos);
  EXPECT_NE(queries[2].find(R"(namespace=~"n2",pod=~"p1000"})"), std::string::npos);
}

TEST(SignalQueries, ExactlyFiveHundredPodsIsOneQuery) {
  std::vector<PodName> pods;
  for (int i = 0; i < 500; ++i) pods.push_back({"ns", "p" + std::to_string(i)});
  EXPECT_EQ(signal_queries(selector("m", Aggregation::kSum), Reduction::kMax, pods, 600s).size(), 1u);
  pods.push_back({"ns", "one-more"});
  EXPECT_EQ(signal_queries(selector("m", Aggregation::kSum), Reduction::kMax, pods, 600s).size(), 2u);
}

// REA-3: no eligible pods, no query (never one whose matchers select every series).
TEST(SignalQueries, NoPodsNoQueries) {
  EXPECT_TRUE(signal_queries(selector("m", Aggregation::kSum), Reduction::kMax, {}, 600s).empty());
}

}  // namespace
}  // namespace kubex::prom
