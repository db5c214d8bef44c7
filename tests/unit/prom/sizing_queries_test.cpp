// `kubex plan sizing`'s range queries (issue 36): the policy's own metric and label names, REA-3's aggregation
// (sum for fullGPU, avg for currentAllocation) and counter form, and PRO-2's batch matchers (pod-name alternation +
// the kind's suffix, namespace alternation: never one query per workload).
#include "prom/sizing_queries.h"

#include <gtest/gtest.h>

namespace kubex::prom {
namespace {

using namespace std::chrono_literals;

SignalSelector signal(std::string metric, Aggregation agg) {
  return {std::move(metric), "exported_namespace", "exported_pod", "exported_container", agg};
}

// PRO-2 "Batching (revised)", REA-3
TEST(SizingQueries, OneQueryPerBatchWithThePolicysLabelsAndAggregation) {
  std::vector<HistoryWorkload> batch = {{"Deployment", "ml", "infer", true}, {"Deployment", "team.a", "web", false}};
  EXPECT_EQ(sizing_range_query(signal("DCGM_FI_PROF_SM_ACTIVE", Aggregation::kSum), batch, 60s),
            R"(sum by (exported_namespace,exported_pod,exported_container) (max_over_time(DCGM_FI_PROF_SM_ACTIVE{exported_namespace=~"ml|team\\.a",exported_pod=~"(infer|web)-[a-z0-9]+-[a-z0-9]+"}[60s])))");
  EXPECT_EQ(sizing_range_query(signal("mem", Aggregation::kAvg), {{"StatefulSet", "ml", "db", false}}, 60s),
            R"(avg by (exported_namespace,exported_pod,exported_container) (max_over_time(mem{exported_namespace=~"ml",exported_pod=~"(db)-[0-9]+"}[60s])))");
}

// REA-3: a `_total` metric is a counter, read as rate(…[1m]).
TEST(SizingQueries, CounterIsReadThroughRate) {
  EXPECT_EQ(sizing_range_query(signal("sm_seconds_total", Aggregation::kSum), {{"Job", "b", "train", false}}, 60s),
            R"(sum by (exported_namespace,exported_pod,exported_container) (rate(sm_seconds_total{exported_namespace=~"b",exported_pod=~"(train)-[a-z0-9]+"}[1m])))");
}

// The history queries keep their text: the matchers are the same builder with PRO-2's label names.
TEST(SizingQueries, HistoryMatchersAreTheHistoryQueriesMatchers) {
  std::vector<HistoryWorkload> batch = {{"Model", "ml", "opt", false}, {"Model", "ml", "opt", false}};
  EXPECT_EQ(history_matchers(batch, "namespace", "pod"), R"(namespace=~"ml",pod=~"model-(opt)-[a-z0-9]+-[a-z0-9]+")");
}

}  // namespace
}  // namespace kubex::prom
