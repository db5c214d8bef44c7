// The demo's live view and report (issue 6 item 7): what a user reads must match the pods.
#include "sim/demo/view.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace kubex::sim::demo {
namespace {

using nlohmann::json;

json running_pod(const std::string& ns, const std::string& name, const json& annotations,
                 const json& resources, const std::string& node, const std::string& scheduler = "") {
  json pod = {
      {"metadata",
       {{"namespace", ns},
        {"name", name},
        {"labels", {{"pod-template-hash", "5d9f8"}}},
        {"annotations", annotations},
        {"ownerReferences", {{{"kind", "ReplicaSet"}, {"name", "chat-5d9f8"}, {"controller", true}}}}}},
      {"spec", {{"nodeName", node}, {"containers", {{{"name", "c"}, {"resources", resources}}}}}},
      {"status", {{"phase", "Running"}, {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
  if (!scheduler.empty()) pod["spec"]["schedulerName"] = scheduler;
  return pod;
}

TEST(DemoView, RowsCarryShareDeviceQueueAndSkipNonGpuAndReservationPods) {
  json fraction =
      running_pod("ml", "chat-5d9f8-aaaaa", {{"gpu-fraction", "0.4"}, {"sim.kubex.ai/gpu-indices", "1"}},
                  json::object(), "t4-node-0", "kai-scheduler");
  fraction["metadata"]["labels"]["kai.scheduler/queue"] = "kubex-unlimited-gpu-queue";
  fraction["spec"]["containers"][0]["args"] = {"--model", "m", "--gpu-memory-utilization=0.36"};
  json whole = running_pod("ml", "train-5d9f8-bbbbb", {{"sim.kubex.ai/gpu-indices", "0,1"}},
                           {{"limits", {{"nvidia.com/gpu", "2"}}}}, "t4-node-1");
  json cpu_only = running_pod("ml", "web-5d9f8-ccccc", json::object(), json::object(), "cpu-node-0");
  json reservation =
      running_pod("kai-resource-reservation", "gpu-reservation-t4-node-0-x",
                  {{"sim.kubex.ai/gpu-indices", "1"}}, {{"limits", {{"nvidia.com/gpu", "1"}}}}, "t4-node-0");
  json pending = running_pod("ml", "a-pending", {{"gpu-fraction", "0.5"}}, json::object(), "");
  pending["status"] = {
      {"phase", "Pending"},
      {"conditions", {{{"type", "PodScheduled"}, {"status", "False"}, {"reason", "Unschedulable"}}}}};
  json list = {{"items", {whole, fraction, cpu_only, reservation, pending}}};

  auto rows = pod_rows(list, "kai-resource-reservation");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].name, "a-pending");
  EXPECT_EQ(rows[0].status, "Unschedulable");
  EXPECT_EQ(rows[0].device, "");
  EXPECT_EQ(rows[1].name, "chat-5d9f8-aaaaa");
  EXPECT_EQ(rows[1].owner, "Deployment/chat");
  EXPECT_TRUE(rows[1].fraction);
  EXPECT_DOUBLE_EQ(rows[1].gpus, 0.4);
  EXPECT_EQ(rows[1].device, "t4-node-0/gpu1");
  EXPECT_EQ(rows[1].queue, "kubex-unlimited-gpu-queue");
  EXPECT_EQ(rows[1].scheduler, "kai-scheduler");
  EXPECT_EQ(rows[1].vllm_utilization, "0.36");
  EXPECT_FALSE(rows[2].fraction);
  EXPECT_DOUBLE_EQ(rows[2].gpus, 2);
  EXPECT_EQ(rows[2].device, "t4-node-1/gpu0,t4-node-1/gpu1");
  EXPECT_EQ(rows[2].scheduler, "default-scheduler");

  std::string table = render_rows(rows);
  EXPECT_NE(table.find("0.4 (share)"), std::string::npos) << table;
  EXPECT_NE(table.find("2 (whole)"), std::string::npos) << table;
  EXPECT_EQ(table.find(" \n"), std::string::npos) << "no trailing spaces";
  EXPECT_EQ(render_summary(rows, 6), "GPU pods 2/3 running · GPUs requested 2.9 · 3 of 6 GPUs occupied");
}

TEST(DemoView, WorkloadsAsWritten) {
  json d = {{"kind", "Deployment"},
            {"metadata", {{"name", "train"}, {"namespace", "ml"}}},
            {"spec",
             {{"replicas", 2},
              {"template",
               {{"spec", {{"containers", {{{"resources", {{"limits", {{"nvidia.com/gpu", 1}}}}}}}}}}}}}}};
  auto w = written_workload(d);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->owner, "Deployment/train");
  EXPECT_EQ(w->ns, "ml");
  EXPECT_DOUBLE_EQ(w->gpus(), 2);
  EXPECT_FALSE(w->fraction);
  json kai = {{"kind", "Deployment"},
              {"spec", {{"template", {{"metadata", {{"annotations", {{"gpu-fraction", "0.25"}}}}}}}}}};
  w = written_workload(kai);
  ASSERT_TRUE(w);
  EXPECT_DOUBLE_EQ(w->gpus(), 0.25);  // replicas default to 1
  EXPECT_TRUE(w->fraction);
  json model = {{"kind", "Model"}, {"spec", {{"minReplicas", 1}}}};
  ASSERT_TRUE(written_workload(model));
  EXPECT_DOUBLE_EQ(written_workload(model)->gpus(), 1);
  EXPECT_FALSE(written_workload({{"kind", "ClusterStaticPolicy"}}));
  json no_gpu = {{"kind", "Deployment"},
                 {"spec", {{"template", {{"spec", {{"containers", json::array()}}}}}}}};
  EXPECT_FALSE(written_workload(no_gpu));
}


}  // namespace
}  // namespace kubex::sim::demo
