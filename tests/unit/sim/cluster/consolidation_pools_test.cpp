// kubex-sim for consolidation (issue 17 item 5, SPEC CON-6a): pools of different GPU shapes from --config (T4 x 1 and
// L4 x 4 with labels, taints, CPU and memory), and KAI-like placement of fractions that honours a consolidation taint
// added at run time, CPU requests, and never puts more than 1.00 on one GPU of a multi-GPU node.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/cluster/config.h"
#include "sim/cluster/sched_placement.h"

using namespace kubex::sim::cluster;
using namespace kubex::sim::cluster::sched;
using nlohmann::json;

namespace {

TEST(ConsolidationPools, MixedPoolsFromConfig) {
  auto c = ClusterConfig::parse(json::parse(R"({"nodePools": [
      {"name": "t4", "count": 3, "gpusPerNode": 1, "gpuProduct": "Tesla-T4", "cpu": "8", "memory": "32Gi",
       "labels": {"pool": "t4"}},
      {"name": "l4", "count": 2, "gpusPerNode": 4, "gpuProduct": "NVIDIA-L4", "gpuMemoryMiB": 23034, "cpu": 48,
       "memory": "192Gi", "labels": {"pool": "l4"},
       "taints": [{"key": "dedicated", "value": "inference", "effect": "NoSchedule"}]}]})"));
  ASSERT_TRUE(c.has_value()) << c.error().str();
  ASSERT_EQ(c->pools.size(), 2u);
  EXPECT_EQ(c->pools[0].gpus_per_node, 1);
  EXPECT_EQ(c->pools[0].labels.at("pool"), "t4");
  EXPECT_EQ(c->pools[1].gpus_per_node, 4);
  EXPECT_EQ(c->pools[1].gpu_product, "NVIDIA-L4");
  EXPECT_EQ(c->pools[1].cpu, "48");
  EXPECT_EQ(c->pools[1].memory, "192Gi");
  ASSERT_EQ(c->pools[1].taints.size(), 1u);
  EXPECT_EQ(c->pools[1].taints[0].effect, "NoSchedule");
  auto bad = ClusterConfig::parse(json::parse(
      R"({"nodePools": [{"name": "x", "gpusPerNode": 4, "taints": [{"key": "k", "effect": "Sometimes"}]}]})"));
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().str().find("nodePools[0].taints[0]"), std::string::npos);
}

PlacementNode l4(const std::string& name) {
  PlacementNode n;
  n.name = name;
  n.labels = {{"kubernetes.io/hostname", name}, {"pool", "l4"}};
  n.cpu_milli = 16000;
  n.memory_bytes = 64LL << 30;
  n.gpus = 4;
  return n;
}

PlacementPod fraction(int hundredths, std::int64_t cpu_milli = 100) {
  PlacementPod p;
  p.fraction = hundredths;
  p.cpu_milli = cpu_milli;
  p.memory_bytes = 256LL << 20;
  return p;
}

// Places `p` and records it in the node's use, as the ledger would (a new group on the next GPU index).
Decision bind_pod(const PlacementPod& p, std::vector<PlacementNode>& nodes, std::map<std::string, NodeUse>& use) {
  std::vector<NodeSlot> slots;
  for (const auto& n : nodes) slots.push_back({&n, &use[n.name]});
  Decision d = place(p, slots, Strategy::kKai);
  if (!d.scheduled) return d;
  NodeUse& u = use[d.node];
  u.cpu_milli += p.cpu_milli;
  u.memory_bytes += p.memory_bytes;
  ++u.pods;
  if (d.new_group) {
    u.groups.push_back({"g" + std::to_string(u.groups.size()), p.fraction, 1, static_cast<int>(u.groups.size())});
  } else {
    for (auto& g : u.groups) {
      if (g.id == d.group) {
        g.hundredths += p.fraction;
        ++g.members;
      }
    }
  }
  return d;
}

TEST(ConsolidationPools, FractionsOnFourGpuNodesNeverExceedOneGpu) {  // CON-3 vocabulary, DESIGN §5
  std::vector<PlacementNode> nodes = {l4("l4-0"), l4("l4-1")};
  std::map<std::string, NodeUse> use;
  for (int size : {70, 60, 50, 40, 30, 30, 25, 25, 20, 15, 10, 45, 35, 55}) {
    Decision d = bind_pod(fraction(size), nodes, use);
    ASSERT_TRUE(d.scheduled) << size << ": " << d.message;
  }
  for (const auto& [node, u] : use) {
    EXPECT_LE(u.gpus_held(), 4);
    for (const auto& g : u.groups) EXPECT_LE(g.hundredths, 100) << node << " " << g.id;
  }
}

TEST(ConsolidationPools, ConsolidationTaintAndCpuSteerFractions) {  // CON-6a, CON-7 taint honoured by the scheduler
  std::vector<PlacementNode> nodes = {l4("l4-0"), l4("l4-1")};
  std::map<std::string, NodeUse> use;
  ASSERT_EQ(bind_pod(fraction(50), nodes, use).node, "l4-0");  // binpack: the first node by name
  ASSERT_EQ(bind_pod(fraction(30), nodes, use).node, "l4-0");  // joins the fullest group that fits
  // l4-0 is being drained: its taint keeps new fractions away, though its group has room.
  nodes[0].taints.push_back({"rightsizing.kubex.ai/consolidating", "pool-l4", "NoSchedule"});
  Decision d = bind_pod(fraction(20), nodes, use);
  ASSERT_TRUE(d.scheduled);
  EXPECT_EQ(d.node, "l4-1");
  // Its CPU is what limits a fraction: 15 cores are not free on l4-1 any more, and l4-0 is tainted.
  Decision cpu = bind_pod(fraction(10, 15950), nodes, use);
  EXPECT_FALSE(cpu.scheduled);
  EXPECT_NE(cpu.message.find("Insufficient cpu"), std::string::npos) << cpu.message;
  EXPECT_NE(cpu.message.find("untolerated taint {rightsizing.kubex.ai/consolidating: pool-l4}"), std::string::npos)
      << cpu.message;
  // Once the taint is gone, the same pod fits next to the drained node's group (15.95 of its 16 cores).
  nodes[0].taints.clear();
  use["l4-0"].cpu_milli = 0;
  Decision after = bind_pod(fraction(10, 15950), nodes, use);
  ASSERT_TRUE(after.scheduled) << after.message;
  EXPECT_EQ(after.node, "l4-0");
}

}  // namespace
