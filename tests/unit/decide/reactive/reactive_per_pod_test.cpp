// TEL-4: which pods' samples are copies of their GPU's series (DCGM's per-pod mode), as tables.
#include "decide/reactive/per_pod.h"

#include <gtest/gtest.h>

namespace kubex::decide::reactive {
namespace {

// One container "app" with its compute and memory upsize samples and its compute spread (stddev over the upsize
// window); a negative value stands for no sample. The scale-back samples are set apart to show they do not count.
PodInput pod(const std::string& name, const std::string& gpu, double compute, double memory, double spread) {
  auto opt = [](double v) { return v < 0 ? std::optional<double>() : std::optional<double>(v); };
  ContainerInput c;
  c.name = "app";
  c.allocation = 50;
  c.samples.compute_upsize = opt(compute);
  c.samples.memory_upsize = opt(memory);
  c.samples.compute_scale_back = name == "a" ? 1.0 : 2.0;
  c.samples.memory_scale_back = name == "a" ? 1.0 : 2.0;
  c.samples.compute_spread = opt(spread);
  return {name, {c}, gpu};
}

struct Case {
  const char* what;
  PodInput a, b;
  bool suspect, copied;
};

TEST(ReactivePerPod, SuspectsAndCopiesTable) {  // TEL-4
  const Case cases[] = {
      {"DCGM copy: equal samples of a moving series", pod("a", "n/g", 70, 40, 8.5), pod("b", "n/g", 70, 40, 8.5),
       true, true},
      {"a spread read for one pod only is no evidence", pod("a", "n/g", 70, 40, 3), pod("b", "n/g", 70, 40, -1),
       true, false},
      {"different spreads: a younger pod whose window holds less of the series", pod("a", "n/g", 70, 40, 3),
       pod("b", "n/g", 70, 40, 2.5), true, false},
      {"per-process: compute differs", pod("a", "n/g", 70, 40, 8), pod("b", "n/g", 30, 40, 8), false, false},
      {"per-process: memory differs", pod("a", "n/g", 70, 40, 8), pod("b", "n/g", 70, 20, 8), false, false},
      {"equal constant demand (kubex-sim): a flat pair is not refused", pod("a", "n/g", 45, 20, 0),
       pod("b", "n/g", 45, 20, 0), true, false},
      {"spread not read (the suspects' query not sent)", pod("a", "n/g", 45, 20, -1), pod("b", "n/g", 45, 20, -1),
       true, false},
      {"idle: all zero", pod("a", "n/g", 0, 0, 4), pod("b", "n/g", 0, 0, 4), false, false},
      {"memory zero, compute equal", pod("a", "n/g", 12, 0, 4), pod("b", "n/g", 12, 0, 4), true, true},
      {"a sample missing on one pod", pod("a", "n/g", 70, -1, 8), pod("b", "n/g", 70, 40, 8), false, false},
      {"both missing", pod("a", "n/g", -1, -1, 8), pod("b", "n/g", -1, -1, 8), false, false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(same_upsize_samples(c.a, c.b), c.suspect) << c.what;
    EXPECT_EQ(copied_samples(c.a, c.b), c.copied) << c.what;
  }
}

TEST(ReactivePerPod, DifferentContainerCountsAreNotCopies) {  // TEL-4
  PodInput a = pod("a", "n/g", 70, 40, 8);
  PodInput b = a;
  b.name = "b";
  b.containers.push_back(b.containers[0]);
  b.containers[1].name = "sidecar";
  EXPECT_FALSE(copied_samples(a, b));
  PodInput empty{"e", {}, "n/g"};
  EXPECT_FALSE(copied_samples(empty, empty));
}

TEST(ReactivePerPod, OnlySharersOfOneGpuAreCompared) {  // TEL-4
  PodInput a = pod("a", "n1/g1", 70, 40, 8);
  PodInput b = pod("b", "n1/g1", 70, 40, 8);
  PodInput other_gpu = pod("c", "n1/g2", 70, 40, 8);  // same values on another GPU: not a copy of a or b
  PodInput unknown = pod("d", "", 70, 40, 8);         // no GPU identity (whole GPU, no KAI group)
  const std::vector<PodRef> refs = {{"ml", &a}, {"team", &b}, {"ml", &other_gpu}, {"ml", &unknown}};
  const PodKeys ab = {{"ml", "a"}, {"team", "b"}};
  EXPECT_EQ(suspects(refs), ab);
  NotPerPod n = not_per_pod(refs);
  EXPECT_EQ(n.pods, ab);
  EXPECT_EQ(n.first, "ml/a");
  EXPECT_EQ(n.second, "team/b");
}

TEST(ReactivePerPod, ThreeSharersWithOnePerProcessPodLeaveThatPodIn) {  // TEL-4
  PodInput a = pod("a", "n/g", 70, 40, 8);
  PodInput b = pod("b", "n/g", 70, 40, 8);
  PodInput c = pod("c", "n/g", 10, 5, 2);
  NotPerPod n = not_per_pod({{"ml", &c}, {"ml", &a}, {"ml", &b}});
  EXPECT_EQ(n.pods, (PodKeys{{"ml", "a"}, {"ml", "b"}}));
  EXPECT_EQ(n.first, "ml/a");
  EXPECT_EQ(n.second, "ml/b");
}

TEST(ReactivePerPod, NothingToReportWithoutCopies) {  // TEL-4
  PodInput a = pod("a", "n/g", 70, 40, 8);
  PodInput b = pod("b", "n/g", 45, 20, 0);
  const std::vector<PodRef> refs = {{"ml", &a}, {"ml", &b}};
  EXPECT_TRUE(suspects(refs).empty());
  NotPerPod n = not_per_pod(refs);
  EXPECT_FALSE(n.any());
  EXPECT_EQ(n.first, "");
  EXPECT_FALSE(not_per_pod({}).any());
}

}  // namespace
}  // namespace kubex::decide::reactive
