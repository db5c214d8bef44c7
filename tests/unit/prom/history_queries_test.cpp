// PRO-2's batched history queries: the exact text of each, the batches (≤ 100 workloads of one kind), and how a
// result's pod is mapped back to its workload (namespace and the kind's pattern; the longest name wins).
#include "prom/history_queries.h"

#include <gtest/gtest.h>

namespace kubex::prom {
namespace {

using namespace std::chrono_literals;

TEST(HistoryQueries, PinnedTextOfEachSignal) {
  std::vector<HistoryWorkload> batch = {
      {"Deployment", "ml", "infer", true}, {"Deployment", "team.a", "web", false}, {"Deployment", "ml", "chat", false}};
  const std::string sel = R"({namespace=~"ml|team\\.a",pod=~"(chat|infer|web)-[a-z0-9]+-[a-z0-9]+"})";
  EXPECT_EQ(history_query(HistorySignal::kCompute, batch, 345600s),
            "sum by (namespace,pod,container) (quantile_over_time(0.95, kubex_gpu_container_sm_utilization_percent" +
                sel + "[345600s]))");
  // KAI pods averaged, whole-GPU pods summed (PRO-2), one query joined with `or`.
  EXPECT_EQ(history_query(HistorySignal::kMemory, batch, 345600s),
            R"(avg by (namespace,pod,container) (max_over_time(kubex_gpu_container_memory_footprint_percent{namespace=~"ml|team\\.a",pod=~"(chat|web)-[a-z0-9]+-[a-z0-9]+"}[345600s])) or )"
            R"(sum by (namespace,pod,container) (max_over_time(kubex_gpu_container_memory_footprint_percent{namespace=~"ml",pod=~"(infer)-[a-z0-9]+-[a-z0-9]+"}[345600s])))");
  EXPECT_EQ(history_query(HistorySignal::kComputeSpan, batch, 3600s),
            "min by (namespace,pod,container) (min_over_time(timestamp(kubex_gpu_container_sm_utilization_percent" +
                sel + ")[3600s:5m]))");
  EXPECT_EQ(history_query(HistorySignal::kMemorySpan, {{"Model", "ml", "opt", false}}, 7200s),
            R"(min by (namespace,pod,container) (min_over_time(timestamp(kubex_gpu_container_memory_footprint_percent{namespace=~"ml",pod=~"model-(opt)-[a-z0-9]+-[a-z0-9]+"})[7200s:5m])))");
}

TEST(HistoryQueries, PodPatternPerKind) {
  EXPECT_EQ(pod_pattern("StatefulSet")->suffix, "-[0-9]+");
  EXPECT_EQ(pod_pattern("StrimziPodSet")->suffix, "-[0-9]+");
  EXPECT_EQ(pod_pattern("Job")->suffix, "-[a-z0-9]+");
  EXPECT_EQ(pod_pattern("DaemonSet")->suffix, "-[a-z0-9]+");
  EXPECT_EQ(pod_pattern("CronJob")->suffix, "-[0-9]+-[a-z0-9]+");
  EXPECT_EQ(pod_pattern("Rollout")->suffix, "-[a-z0-9]+-[a-z0-9]+");
  EXPECT_EQ(pod_pattern("Model")->prefix, "model-");
  EXPECT_FALSE(pod_pattern("AnalysisRun"));
}

// ≤ 100 workloads per query, per kind: 250 Deployments and 3 StatefulSets give 3 + 1 batches; the PRO-2 count of a
// reload is then 2 × 4 queries (compute, memory) plus the span queries batched the same way.
TEST(HistoryQueries, BatchesOfAHundredPerKind) {
  std::vector<HistoryWorkload> all;
  for (int i = 0; i < 250; ++i) all.push_back({"Deployment", "ns" + std::to_string(i % 9), "d" + std::to_string(i), false});
  for (int i = 0; i < 3; ++i) all.push_back({"StatefulSet", "db", "s" + std::to_string(i), true});
  all.push_back({"AnalysisRun", "x", "run", false});  // no pattern: not batched
  all.push_back(all.front());                          // a repeat counts once
  auto batches = history_batches(all);
  ASSERT_EQ(batches.size(), 4u);
  EXPECT_EQ(batches[0].size(), 100u);
  EXPECT_EQ(batches[1].size(), 100u);
  EXPECT_EQ(batches[2].size(), 50u);
  EXPECT_EQ(batches[3].size(), 3u);
  EXPECT_EQ(batches[3][0].kind, "StatefulSet");
}

TEST(HistoryQueries, ResultsMapBackByNamespaceAndPattern) {
  std::vector<HistoryWorkload> batch = {{"Deployment", "ml", "web", false},
                                        {"Deployment", "ml", "web-api", false},
                                        {"Deployment", "other", "web-api", false}};
  auto owner = [&](std::string_view ns, std::string_view pod) {
    const HistoryWorkload* w = history_owner(batch, ns, pod);
    return w ? w->ns + "/" + w->name : std::string("-");
  };
  EXPECT_EQ(owner("ml", "web-api-7d9f8c-x2z4k"), "ml/web-api");  // the longest name wins
  EXPECT_EQ(owner("ml", "web-7d9f8c-x2z4k"), "ml/web");
  EXPECT_EQ(owner("ml", "web-api-x2z4k"), "ml/web");   // only web's pattern: web-<api>-<x2z4k>
  EXPECT_EQ(owner("other", "web-api-5c-9"), "other/web-api");
  EXPECT_EQ(owner("ml", "web-7d9f8c"), "-");           // one token short
  EXPECT_EQ(owner("ml", "web-7D9F-x2"), "-");          // upper case is outside [a-z0-9]
  EXPECT_EQ(owner("third", "web-7d9f8c-x2z4k"), "-");  // namespace matched exactly
  std::vector<HistoryWorkload> sts = {{"StatefulSet", "db", "pg", true}, {"CronJob", "db", "nightly", false}};
  EXPECT_EQ(history_owner(sts, "db", "pg-12")->name, "pg");
  EXPECT_EQ(history_owner(sts, "db", "pg-a1"), nullptr);
  EXPECT_EQ(history_owner(sts, "db", "nightly-29100000-abcde")->name, "nightly");
}

}  // namespace
}  // namespace kubex::prom
