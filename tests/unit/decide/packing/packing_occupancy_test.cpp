// CON-2, CON-3: node accounting and per-GPU occupancy.
#include <gtest/gtest.h>

#include "decide/packing/occupancy.h"
#include "packing_fixtures.h"

namespace kubex::decide::packing::test {
namespace {

Occupancy occ(std::int64_t capacity, const std::vector<PoolPod>& pods) {
  std::vector<const PoolPod*> ptrs;
  for (const auto& p : pods) ptrs.push_back(&p);
  return occupancy(capacity, ptrs);
}

TEST(PackingOccupancy, TwoGpuVariantGroupsShareOneGpu) {  // CON-3, SPEC §9 two-GPU variant
  auto o = occ(2, {frac("a", "m", 50, "g1"), frac("b", "m", 25, "g1"), frac("c", "m", 25, "g2")});
  EXPECT_EQ(o.gpus, (std::vector<Hundredths>{75, 25}));
  EXPECT_FALSE(o.over_capacity);
  EXPECT_EQ(o.pod_gpus[0], std::vector<int>{0});
  EXPECT_EQ(o.pod_gpus[2], std::vector<int>{1});
}

TEST(PackingOccupancy, TwoGpuVariantUtilizationIs50Percent) {  // CON-2, SPEC §9 two-GPU variant
  Pool pool{{node("m", 2)}, {frac("a", "m", 50, "g1"), frac("b", "m", 25, "g1"), frac("c", "m", 25, "g2")}};
  Plan p = plan(pool, {});
  ASSERT_EQ(p.nodes.size(), 1u);
  EXPECT_EQ(p.nodes[0].gpus, (std::vector<Hundredths>{75, 25}));
  EXPECT_EQ(p.nodes[0].utilization_centi_percent(), 5000);
  EXPECT_EQ(format_percent(p.nodes[0].utilization_centi_percent()), "50%");
}

TEST(PackingOccupancy, WholeGpusTakeLowestIndexesFirst) {  // CON-3
  auto o = occ(4, {frac("f", "n", 30), whole("w", "n", 2)});
  EXPECT_EQ(o.gpus, (std::vector<Hundredths>{100, 100, 30, 0}));
  EXPECT_EQ(o.pod_gpus[1], (std::vector<int>{0, 1}));
  EXPECT_EQ(o.pod_gpus[0], std::vector<int>{2});
}

TEST(PackingOccupancy, UnlabelledFractionsFirstFitLargestFirstThenName) {  // CON-3
  // Largest first: 0.6 on GPU0, 0.5 does not fit GPU0 -> GPU1, 0.4 fits GPU0 (first fit), "b" 0.1 before "c" 0.1.
  auto o = occ(2, {frac("c", "n", 10), frac("x", "n", 40), frac("y", "n", 50), frac("z", "n", 60), frac("b", "n", 10)});
  EXPECT_EQ(o.gpus, (std::vector<Hundredths>{100, 70}));
  EXPECT_EQ(o.pod_gpus[4], std::vector<int>{1});  // b: GPU0 is full after 0.6 + 0.4
  EXPECT_FALSE(o.over_capacity);
}

TEST(PackingOccupancy, UnlabelledFractionMayJoinAGroupGpu) {  // CON-3 first fit in index order
  auto o = occ(2, {frac("g", "n", 50, "g1"), frac("u", "n", 30)});
  EXPECT_EQ(o.gpus, (std::vector<Hundredths>{80, 0}));
}

TEST(PackingOccupancy, OverCapacityWhenFractionsDoNotFitTheGpus) {  // CON-3
  EXPECT_TRUE(occ(1, {frac("a", "n", 60), frac("b", "n", 60)}).over_capacity);
  EXPECT_TRUE(occ(1, {frac("a", "n", 60, "g"), frac("b", "n", 60, "g")}).over_capacity);  // group > 1.00
  EXPECT_TRUE(occ(1, {frac("a", "n", 10, "g1"), frac("b", "n", 10, "g2")}).over_capacity);  // 2 groups, 1 GPU
  EXPECT_TRUE(occ(1, {whole("w", "n", 2)}).over_capacity);
  EXPECT_TRUE(occ(0, {frac("a", "n", 10)}).over_capacity);
  EXPECT_FALSE(occ(1, {frac("a", "n", 60), frac("b", "n", 40)}).over_capacity);
}

TEST(PackingOccupancy, PodsWithoutGpuOccupyNothing) {  // CON-2
  auto o = occ(1, {cpu_only("c", "n", 4000)});
  EXPECT_EQ(o.gpus, std::vector<Hundredths>{0});
  EXPECT_TRUE(o.pod_gpus[0].empty());
}

TEST(PackingOccupancy, AllocationSumsFractionsAndWholeGpus) {  // CON-2
  Pool pool{{node("n", 4)}, {frac("a", "n", 25), whole("b", "n", 2), cpu_only("c", "n", 100)}};
  Plan p = plan(pool, {});
  EXPECT_EQ(p.gpu_allocated, 225);
  EXPECT_EQ(format_allocated(p.gpu_allocated), "2.25");
  EXPECT_EQ(format_percent(p.nodes[0].utilization_centi_percent()), "56.25%");
}

TEST(PackingOccupancy, PodsOnNodesOutsideThePoolAreIgnored) {  // CON-1, CON-2
  Pool pool{{node("n", 1)}, {frac("a", "n", 25), frac("b", "elsewhere", 50)}};
  EXPECT_EQ(plan(pool, {}).gpu_allocated, 25);
}

TEST(PackingFormat, AllocatedHasTwoDecimalsAndPercentIsShortest) {  // CON-10, CON-11
  EXPECT_EQ(format_allocated(150), "1.50");
  EXPECT_EQ(format_allocated(0), "0.00");
  EXPECT_EQ(format_allocated(1205), "12.05");
  EXPECT_EQ(format_percent(5000), "50%");
  EXPECT_EQ(format_percent(6666), "66.66%");
  EXPECT_EQ(format_percent(310), "3.1%");
  EXPECT_EQ(format_percent(305), "3.05%");
}

}  // namespace
}  // namespace kubex::decide::packing::test
