// Physical GPU indices (sim.kubex.ai/gpu-indices) and pod IPs handed out by the kubelet emulation.
#include "sim/cluster/kubelet_devices.h"

#include <gtest/gtest.h>

using namespace kubex::sim::cluster;
using namespace kubex::sim::cluster::kubelet;

namespace {

SimPod pod(const std::string& ns, const std::string& name, const std::string& node) {
  SimPod p;
  p.ns = ns;
  p.name = name;
  p.node = node;
  p.phase = "Running";
  return p;
}

}  // namespace

TEST(KubeletDevices, CidrAddresses) {
  EXPECT_EQ(cidr_address("10.244.3.0/24", 5), "10.244.3.5");
  EXPECT_EQ(cidr_address("10.244.3.17/24", 2), "10.244.3.2");
  EXPECT_EQ(cidr_address("10.244.0.0/16", 300), "10.244.1.44");
  EXPECT_EQ(cidr_address("10.244.3.0/24", 255), "");
  EXPECT_EQ(cidr_address("bogus", 2), "");
  EXPECT_EQ(cidr_address("10.0.0.300/24", 2), "");
  EXPECT_EQ(format_indices({0, 1}), "0,1");
}

TEST(KubeletDevices, ExclusiveGpusAreLowestFreeAndNeverShared) {
  NodeDevices d;
  d.set_node("n1", {"10.0.0.2", "10.244.0.0/24", 3});
  auto a = d.allocate_exclusive("a/p1", "n1", 2);
  ASSERT_TRUE(a.ok);
  EXPECT_EQ(a.indices, (std::vector<int>{0, 1}));
  EXPECT_EQ(d.allocate_exclusive("a/p1", "n1", 2).indices, a.indices);  // idempotent
  auto b = d.allocate_exclusive("a/p2", "n1", 2);
  EXPECT_FALSE(b.ok);
  EXPECT_EQ(b.used, 2);
  EXPECT_EQ(d.allocate_exclusive("a/p3", "n1", 1).indices, std::vector<int>{2});
  d.release("a/p1");
  EXPECT_EQ(d.allocate_exclusive("a/p2", "n1", 2).indices, (std::vector<int>{0, 1}));

  // Indices recorded in annotations (a restarted simulator) are respected.
  NodeDevices r;
  r.set_node("n1", {"", "", 2});
  SimPod held = pod("a", "old", "n1");
  held.gpu_whole = 1;
  held.annotations[kGpuIndicesAnnotation] = "0";
  r.observe(held);
  EXPECT_EQ(r.allocate_exclusive("a/new", "n1", 1).indices, std::vector<int>{1});
  held.phase = "Succeeded";
  r.observe(held);  // terminal pods release their GPUs
  EXPECT_EQ(r.allocate_exclusive("a/newer", "n1", 1).indices, std::vector<int>{0});
}

TEST(KubeletDevices, FractionGroupsShareTheirReservationsGpu) {
  NodeDevices d;
  d.set_node("n1", {"", "", 2});
  int index = -1;
  EXPECT_EQ(d.group_index("n1", "g1", index), NodeDevices::GroupState::kNoReservation);
  SimPod res = pod(kubex::api::keys::kDefaultReservationNamespace, "gpu-reservation-n1-abcde", "n1");
  res.labels[kubex::api::keys::kGpuGroupLabel] = "g1";
  res.gpu_whole = 1;
  res.phase = "Pending";
  d.observe(res);
  EXPECT_EQ(d.group_index("n1", "g1", index), NodeDevices::GroupState::kPending);
  SimPod whole = pod("a", "w", "n1");
  whole.gpu_whole = 1;
  EXPECT_EQ(d.allocate_exclusive(whole.key(), "n1", 1).indices, std::vector<int>{0});
  EXPECT_EQ(d.allocate_exclusive(res.key(), "n1", 1).indices, std::vector<int>{1});
  ASSERT_EQ(d.group_index("n1", "g1", index), NodeDevices::GroupState::kKnown);
  EXPECT_EQ(index, 1);
  EXPECT_EQ(d.shared_fallback("n1"), 0);  // both held: the first
  d.release(res.key());
  EXPECT_EQ(d.group_index("n1", "g1", index), NodeDevices::GroupState::kNoReservation);
  EXPECT_EQ(d.shared_fallback("n1"), 1);
}

TEST(KubeletDevices, PodIpsComeFromThePodCidrAndAreReused) {
  NodeDevices d;
  d.set_node("n1", {"10.0.0.2", "10.244.7.0/24", 0});
  EXPECT_EQ(d.allocate_ip("a/p1", "n1"), "10.244.7.2");
  EXPECT_EQ(d.allocate_ip("a/p2", "n1"), "10.244.7.3");
  EXPECT_EQ(d.allocate_ip("a/p1", "n1"), "10.244.7.2");
  d.release("a/p1");
  EXPECT_EQ(d.allocate_ip("a/p3", "n1"), "10.244.7.2");
}
