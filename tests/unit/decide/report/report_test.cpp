#include "decide/report/report.h"

#include <gtest/gtest.h>

#include "decide/actuation/actuation.h"
#include "decide/actuation/rollback.h"

using namespace kubex::decide;
using namespace kubex::decide::report;
using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

namespace {

const kubex::common::TimePoint kNow = kubex::common::TimePoint{} + hours(24 * 365 * 50);

actuation::Original original_whole(const char* request, const char* limit = nullptr) {
  actuation::Original o;
  actuation::OriginalContainer c;
  if (request) c.gpu_request = request;
  if (limit) c.gpu_limit = limit;
  o.containers["app"] = c;
  return o;
}

RunningPod pod(const std::string& name, Hundredths held, const std::string& node = "n1",
               std::optional<Price> price = std::nullopt, hours age = hours(48)) {
  return {name, node, held, kNow - age, std::move(price)};
}

WindowUsage usage(double sm, double memory, hours span) { return {true, sm, memory, seconds(span)}; }

}  // namespace

// RPT-1: "as written" is the template as its user wrote it (RBK-1 `original`), one pod's worth.
TEST(ReportWritten, OriginalGivesOnePodsGpus) {
  actuation::Original fraction;
  fraction.gpu_fraction = "0.5";
  EXPECT_EQ(written_gpus(fraction), 50);                       // a KAI-native template
  EXPECT_EQ(written_gpus(original_whole("1")), 100);           // nvidia.com/gpu: 1
  EXPECT_EQ(written_gpus(original_whole(nullptr, "2")), 200);  // the limit when there is no request
  EXPECT_EQ(written_gpus(actuation::Original{}), 0);           // asks for no GPU
}

// RPT-1, issue 26 item 5: as written × the replicas running NOW, so a Deployment written with 2 replicas and
// scaled to 1 counts one template's worth. The demo's chat-vllm: 1 GPU as written, one pod at 0.45.
TEST(ReportSummary, AsWrittenCountsTheReplicasRunningNow) {
  WorkloadInput chat{"ml", "Deployment", "chat-vllm", true, 100, {pod("chat-a", 45)}, {}};
  WorkloadInput train{"ml", "Deployment", "train", true, 100, {pod("train-a", 40), pod("train-b", 40)}, {}};
  WorkloadInput batch{"ml", "Job", "batch", true, 100, {pod("batch-a", 50)}, {}};
  WorkloadInput embed{"ml", "Deployment", "embed", true, 100, {pod("embed-a", 50)}, {}};
  Summary s = summarize({chat, train, batch, embed}, IdleRule{}, hours(24), kNow);
  ASSERT_EQ(s.workloads.size(), 4u);
  EXPECT_EQ(s.cluster.as_written, 500);  // 1 + 2 + 1 + 1
  EXPECT_EQ(s.cluster.held, 225);
  const WorkloadRow& c = s.workloads[0];  // by namespace, kind, name: chat-vllm, embed, train, then Job/batch
  EXPECT_EQ(c.name, "chat-vllm");
  EXPECT_EQ(c.as_written, 100);
  EXPECT_EQ(c.held, 45);
  EXPECT_EQ(c.saved_gpus(), 55);
  EXPECT_NEAR(s.cluster.saved_percent(), 55.0, 1e-9);
}

// RPT-1: a workload that neither holds nor asks for a GPU is not listed; a terminating or pending pod holds
// nothing (the input only carries running pods).
TEST(ReportSummary, WorkloadsWithoutGpusAreLeftOut) {
  WorkloadInput web{"web", "Deployment", "nginx", false, 0, {pod("nginx-a", 0)}, {}};
  Summary s = summarize({web}, IdleRule{}, hours(24), kNow);
  EXPECT_TRUE(s.workloads.empty());
  EXPECT_EQ(s.cluster.workloads, 0);
}

// RPT-2: idle needs the minimum holding, at least 1h of data, p95 SM < smPercent % of a GPU and memory <
// memoryPercent % of what it holds; each miss says why.
TEST(ReportIdle, EveryConditionOfTheRule) {
  const IdleRule rule;  // 5 %, 10 %, 0.25 GPU
  struct Case {
    const char* name;
    Hundredths held;
    WindowUsage u;
    bool idle;
    const char* why;
  } cases[] = {
      {"idle", 50, usage(0.01, 0.02, hours(2)), true, "p95 SM use 0.01 GPU"},
      {"under the minimum", 20, usage(0.0, 0.0, hours(2)), false, "under the 0.25 GPU"},
      {"no data", 50, WindowUsage{true, std::nullopt, std::nullopt, std::nullopt}, false, "no data"},
      {"prometheus down", 50, WindowUsage{}, false, "no data"},
      {"under an hour", 50, usage(0.01, 0.02, hours(0)), false, "less than 1h of data"},
      // RPT-2, issue 34 item 7: samples of one signal, or without a span yet, are not "no data" (the usage
      // columns show them); they are less than an hour of data.
      {"SM samples only", 50, WindowUsage{true, 0.01, std::nullopt, std::nullopt}, false, "less than 1h of data"},
      {"no span yet", 50, WindowUsage{true, 0.01, 0.02, std::nullopt}, false, "less than 1h of data"},
      {"busy SM", 50, usage(0.05, 0.02, hours(2)), false, "p95 SM use 0.05 GPU is not below 5%"},
      {"memory used", 50, usage(0.01, 0.05, hours(2)), false, "max memory footprint 0.05 GPU is not below 10%"},
      {"at the minimum", 25, usage(0.0, 0.0, hours(2)), true, ""},
  };
  for (const auto& c : cases) {
    WorkloadInput w{"ns", "Deployment", "w", false, c.held, {pod("w-a", c.held)}, c.u};
    std::string why;
    EXPECT_EQ(is_idle(w, c.held, rule, &why), c.idle) << c.name;
    EXPECT_NE(why.find(c.why), std::string::npos) << c.name << ": " << why;
  }
}

// RPT-1, issue 34 item 7: rows round to two decimals and the totals are the sums of the rounded rows, so the
// rows printed add up to the total printed (three rows of 1/3 GPU-hour each: 0.33 × 3 = 0.99, not 1).
TEST(ReportSummary, RowGpuHoursAddUpToTheTotal) {
  const Price usd{1.0, "USD"};
  std::vector<WorkloadInput> ws;
  for (const char* name : {"a", "b", "c"}) {
    // written 1 GPU, held 0 for a third of an hour: 1/3 GPU-hour saved each.
    ws.push_back({"ns", "Deployment", name, true, 100, {pod(std::string(name) + "-1", 0, "n1", usd)},
                  WindowUsage{true, 0.5, 0.5, seconds(1200)}});
  }
  Summary s = summarize(ws, IdleRule{}, hours(24), kNow);
  ASSERT_EQ(s.workloads.size(), 3u);
  double rows = 0, money = 0;
  for (const auto& r : s.workloads) {
    EXPECT_DOUBLE_EQ(r.gpu_hours_saved, 0.33) << r.name;
    rows += r.gpu_hours_saved;
    money += r.saved.at("USD");
  }
  EXPECT_EQ(format_hours(s.cluster.gpu_hours_saved), format_hours(rows));
  EXPECT_EQ(format_hours(s.cluster.gpu_hours_saved), "0.99");
  EXPECT_EQ(format_money(s.cluster.saved), "0.99 USD");
  EXPECT_EQ(format_hours(s.namespaces.at(0).gpu_hours_saved), "0.99");
  EXPECT_NEAR(money, 0.99, 1e-9);
}

// RPT-3: saved = (as written − held) × hours × price, idle = held × hours × price, priced by each pod's node;
// pods on unpriced nodes have no cost; the hours are the data span (or the pod's age), at most the window.
TEST(ReportCost, SavedAndIdleCostPerPricedPod) {
  const Price usd{2.0, "USD"};
  WorkloadInput idle{"a", "Deployment", "idle-chat", false, 50, {pod("idle-a", 50, "n1", usd)},
                     usage(0.01, 0.01, hours(3))};
  WorkloadInput sized{"b", "Deployment", "chat", true, 100,
                      {pod("chat-a", 40, "n1", usd), pod("chat-b", 40, "n2", std::nullopt)}, {}};
  Summary s = summarize({sized, idle}, IdleRule{}, hours(24), kNow);
  ASSERT_EQ(s.workloads.size(), 2u);
  const WorkloadRow& i = s.workloads[0];  // idle first
  EXPECT_EQ(i.name, "idle-chat");
  EXPECT_TRUE(i.idle);
  EXPECT_DOUBLE_EQ(i.hours, 3);                // the span of its data
  EXPECT_DOUBLE_EQ(i.gpu_hours_held, 1.5);     // 0.5 GPU × 3 h
  EXPECT_DOUBLE_EQ(i.idle_cost.at("USD"), 3);  // × 2.00 USD
  const WorkloadRow& c = s.workloads[1];
  EXPECT_FALSE(c.idle);
  EXPECT_DOUBLE_EQ(c.hours, 24);  // pods 48 h old, capped at the window
  EXPECT_DOUBLE_EQ(c.gpu_hours_saved, 0.6 * 24 * 2);
  EXPECT_DOUBLE_EQ(c.saved.at("USD"), 0.6 * 24 * 2.0);  // only chat-a's node is priced
  EXPECT_TRUE(c.idle_cost.empty());
  EXPECT_EQ(format_money(s.cluster.saved), "28.80 USD");
  EXPECT_EQ(format_money(s.cluster.idle_cost), "3.00 USD");
  EXPECT_EQ(s.cluster.idle_workloads, 1);
  ASSERT_EQ(s.namespaces.size(), 2u);
  EXPECT_EQ(s.namespaces[0].ns, "a");
  EXPECT_DOUBLE_EQ(s.namespaces[1].gpu_hours_saved, 0.6 * 24 * 2);
}

// RPT-3: the first entry whose nodeSelector matches prices the node; an empty selector matches every node.
TEST(ReportCost, FirstMatchingPriceWins) {
  kubex::api::GpuHourPrice a100, any;
  a100.node_selector.present = true;
  a100.node_selector.match_labels = {{"nvidia.com/gpu.product", "A100"}};
  a100.price = 3.5;
  any.price = 0.35;
  any.currency = "EUR";
  EXPECT_EQ(node_price({a100, any}, {{"nvidia.com/gpu.product", "A100"}}), (Price{3.5, "USD"}));
  EXPECT_EQ(node_price({a100, any}, {{"nvidia.com/gpu.product", "Tesla-T4"}}), (Price{0.35, "EUR"}));
  EXPECT_EQ(node_price({a100}, {{"nvidia.com/gpu.product", "Tesla-T4"}}), std::nullopt);
  EXPECT_EQ(format_money({{"EUR", 1.0}, {"USD", 12.5}}), "1.00 EUR + 12.50 USD");
}

// RPT-4: pods per GPU from GPU groups (a shared device), whole-GPU pods and the empty devices.
TEST(ReportPodsPerGpu, GroupsShareADevice) {
  std::map<std::string, std::int64_t> nodes = {{"n1", 2}, {"n2", 1}, {"n3", 4}};
  std::vector<DevicePod> pods = {{"n1", "g1", 45, 0}, {"n1", "g1", 30, 0}, {"n1", "g1", 20, 0},
                                 {"n1", "g2", 50, 0}, {"n2", "", 0, 1},    {"n3", "", 0, 2},
                                 {"elsewhere", "", 0, 1}};
  EXPECT_EQ(pods_per_gpu(nodes, pods), (std::map<int, int>{{0, 2}, {1, 4}, {3, 1}}));
}

// RPT-5: kubex_workload_gpus counts running, not terminating pods.
TEST(ReportWorkloadGpus, RunningPodsOnly) {
  actuation::Original o = original_whole("1");
  auto facts = [](const char* phase, bool terminating, Hundredths v) {
    actuation::PodFacts p;
    p.phase = phase;
    p.terminating = terminating;
    p.live = {{"app", v, v < 100}};
    return p;
  };
  std::vector<actuation::PodFacts> pods = {facts("Running", false, 45), facts("Running", true, 40),
                                           facts("Pending", false, 45), facts("Running", false, 45)};
  EXPECT_EQ(workload_gpus(&o, pods), (WorkloadGpus{200, 90}));
  EXPECT_EQ(workload_gpus(nullptr, pods), (WorkloadGpus{0, 90}));
}
