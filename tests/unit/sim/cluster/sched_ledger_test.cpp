// The schedulers' shared occupancy ledger: holdings from pods, assumptions while a binding is in flight,
// GPU groups with their reservation pods (SPEC CON-2/CON-3 accounting) and garbage collection of empty groups.
#include "sim/cluster/sched_ledger.h"

#include <gtest/gtest.h>

using namespace kubex::sim::cluster;
using namespace kubex::sim::cluster::sched;

namespace {

SimPod pod(const std::string& ns, const std::string& name, const std::string& node) {
  SimPod p;
  p.ns = ns;
  p.name = name;
  p.uid = name + "-uid";
  p.node = node;
  p.phase = node.empty() ? "Pending" : "Running";
  return p;
}

SimPod fraction_pod(const std::string& name, const std::string& node, double f, const std::string& group) {
  SimPod p = pod("ml", name, node);
  p.gpu_fraction = f;
  if (!group.empty()) p.labels[kubex::api::keys::kGpuGroupLabel] = group;
  return p;
}

SimPod reservation(const std::string& name, const std::string& node, const std::string& group) {
  SimPod p = pod(kubex::api::keys::kDefaultReservationNamespace, name, node);
  p.labels[kubex::api::keys::kGpuGroupLabel] = group;
  p.gpu_whole = 1;
  return p;
}

SimNode node(const std::string& name, int gpus) {
  SimNode n;
  n.name = name;
  n.gpus = gpus;
  n.cpu_milli = 8000;
  n.memory_bytes = 32LL << 30;
  return n;
}

}  // namespace

TEST(SchedLedger, HoldingsOfPods) {
  SimPod whole = pod("a", "w", "n1");
  whole.gpu_whole = 2;
  whole.cpu_milli = 500;
  auto h = Ledger::holding_of(whole);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->gpus, 2);
  EXPECT_EQ(h->cpu_milli, 500);
  EXPECT_EQ(h->nonzero_memory_bytes, 200LL << 20);  // kube-scheduler's default for scoring

  auto r = Ledger::holding_of(reservation("gpu-reservation-n1-abcde", "n1", "g1"));
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->reservation);
  EXPECT_EQ(r->gpus, 0);  // its GPU counts through the group
  EXPECT_EQ(r->group, "g1");

  auto f = Ledger::holding_of(fraction_pod("f", "n1", 0.25, "g1"));
  ASSERT_TRUE(f);
  EXPECT_EQ(f->fraction, 25);

  SimPod done = pod("a", "done", "n1");
  done.phase = "Succeeded";
  EXPECT_FALSE(Ledger::holding_of(done));
  EXPECT_FALSE(Ledger::holding_of(pod("a", "pending", "")));
}

TEST(SchedLedger, GroupsCountOneGpuEachAndEmptyGroupsAreCollected) {
  Ledger l;
  int freed = 0, emptied = 0;
  l.on_capacity_freed([&] { ++freed; });
  l.on_group_emptied([&] { ++emptied; });
  l.upsert_node(node("n1", 2));
  l.upsert_pod(reservation("gpu-reservation-n1-aaaaa", "n1", "g1"));
  l.upsert_pod(fraction_pod("f1", "n1", 0.5, "g1"));
  l.upsert_pod(fraction_pod("f2", "n1", 0.25, "g1"));
  NodeUse u = l.use_of("n1");
  ASSERT_EQ(u.groups.size(), 1u);
  EXPECT_EQ(u.groups[0].hundredths, 75);
  EXPECT_EQ(u.groups[0].members, 2);
  EXPECT_EQ(u.gpus_held(), 1);
  EXPECT_EQ(u.pods, 3);

  freed = 0;
  l.remove_pod("ml/f1");
  EXPECT_EQ(freed, 1);
  EXPECT_EQ(emptied, 0);
  EXPECT_TRUE(l.claim_empty_groups().empty());
  SimPod f2 = fraction_pod("f2", "n1", 0.25, "g1");
  f2.phase = "Succeeded";  // terminal pods hold nothing
  l.upsert_pod(f2);
  EXPECT_EQ(emptied, 1);
  EXPECT_EQ(l.claim_empty_groups(), std::vector<std::string>{"kai-resource-reservation/gpu-reservation-n1-aaaaa"});
  EXPECT_TRUE(l.claim_empty_groups().empty());  // claimed once
  EXPECT_TRUE(l.use_of("n1").groups[0].dying);
  l.remove_pod("kai-resource-reservation/gpu-reservation-n1-aaaaa");
  EXPECT_EQ(l.use_of("n1").gpus_held(), 0);
}

TEST(SchedLedger, AssumptionsSurviveTheUnboundLabelPatchAndAreConfirmedByTheBinding) {
  Ledger l;
  l.upsert_node(node("n1", 1));
  PlacementPod p;
  p.fraction = 40;
  Decision d = l.schedule("ml/f1", p, Strategy::kKai, "g1", "abcde");
  ASSERT_TRUE(d.scheduled);
  EXPECT_TRUE(d.new_group);
  EXPECT_EQ(d.group, "g1");
  EXPECT_EQ(l.use_of("n1").gpus_held(), 1);
  EXPECT_TRUE(l.confirmed_keys().empty());
  // Held while its binding is in flight: the scheduler loop must not place it a second time.
  EXPECT_TRUE(l.holds("ml/f1"));
  EXPECT_FALSE(l.holds("ml/f2"));

  // KAI's label patch shows the pod unbound with its group label: the assumption stays.
  l.upsert_pod(fraction_pod("f1", "", 0.4, "g1"));
  EXPECT_EQ(l.use_of("n1").groups.at(0).hundredths, 40);
  // A second decision sees the assumed group.
  Decision d2 = l.schedule("ml/f2", p, Strategy::kKai, "g2", "fghij");
  ASSERT_TRUE(d2.scheduled);
  EXPECT_EQ(d2.group, "g1");
  EXPECT_FALSE(d2.new_group);
  // The feed confirms reservation and binding.
  l.upsert_pod(reservation("gpu-reservation-n1-abcde", "n1", "g1"));
  l.upsert_pod(fraction_pod("f1", "n1", 0.4, "g1"));
  EXPECT_EQ(l.use_of("n1").groups.at(0).hundredths, 80);
  EXPECT_EQ(l.confirmed_keys().size(), 2u);

  // A failed binding drops the assumption; confirmed holdings stay.
  l.forget("ml/f2");
  l.forget("ml/f1");
  EXPECT_EQ(l.use_of("n1").groups.at(0).hundredths, 40);
  EXPECT_EQ(l.use_of("n1").groups.at(0).members, 1);
  EXPECT_FALSE(l.holds("ml/f2"));
  EXPECT_TRUE(l.holds("ml/f1"));
  l.remove_pod("ml/f1");
  EXPECT_FALSE(l.holds("ml/f1"));
}

TEST(SchedLedger, WholeGpusNeverOvercommitAcrossSchedulers) {
  Ledger l;
  l.upsert_node(node("n1", 2));
  PlacementPod whole;
  whole.gpus = 1;
  PlacementPod frac;
  frac.fraction = 50;
  EXPECT_TRUE(l.schedule("a/w1", whole, Strategy::kDefault).scheduled);
  EXPECT_TRUE(l.schedule("a/f1", frac, Strategy::kKai, "g", "aaaaa").scheduled);
  Decision d = l.schedule("a/w2", whole, Strategy::kKai);
  EXPECT_FALSE(d.scheduled);
  EXPECT_EQ(d.message, "0/1 nodes are available: 1 node(s) didn't have enough resources: GPUs.");
  EXPECT_FALSE(l.schedule("a/w3", whole, Strategy::kDefault).scheduled);
  EXPECT_TRUE(l.schedule("a/f2", frac, Strategy::kKai, "g2", "bbbbb").scheduled);  // joins g
  EXPECT_FALSE(l.schedule("a/f3", frac, Strategy::kKai, "g3", "ccccc").scheduled);
}
