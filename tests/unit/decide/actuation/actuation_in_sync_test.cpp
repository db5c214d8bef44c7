// ACT-1 (in-sync check, candidates, desired keys) and ACT-6 (the in-place note), as tables.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "actuation_fixtures.h"
#include "decide/actuation/steps.h"

namespace kubex::decide::actuation::test {
namespace {

struct SyncCase {
  const char* name;
  Allocation desired, live;
  bool in_sync;
};

// ACT-1: compared in hundredths per container; fraction versus whole counts as a difference.
TEST(ActuationInSync, Table) {
  const SyncCase cases[] = {
      {"same fraction", one(frac("app", 50)), one(frac("app", 50)), true},
      {"fraction differs by 0.01", one(frac("app", 50)), one(frac("app", 51)), false},
      {"fraction vs whole of any size", one(frac("app", 50)), one(whole("app", 1)), false},
      {"whole 1 vs whole 1", one(whole("app", 1)), one(whole("app", 1)), true},
      {"whole 1 vs whole 2", one(whole("app", 1)), one(whole("app", 2)), false},
      {"same value, one fraction one whole", one({"app", 100, true}), one({"app", 100, false}), false},
      {"container missing live", {frac("app", 50), whole("side", 1)}, one(frac("app", 50)), false},
      {"container missing desired", one(frac("app", 50)), {frac("app", 50), whole("side", 1)}, false},
      {"other container name", one(frac("app", 50)), one(frac("main", 50)), false},
      {"order does not matter", {frac("a", 30), whole("b", 2)}, {whole("b", 2), frac("a", 30)}, true},
      {"both empty (no GPU at all)", {}, {}, true},
      {"desired empty, live has GPU", {}, one(whole("app", 1)), false},
  };
  for (const SyncCase& c : cases) EXPECT_EQ(in_sync(c.desired, c.live), c.in_sync) << c.name;
}

// ACT-1: cpu, memory, queue, scheduler and vLLM never trigger anything: two pods that differ only there read
// to the same Allocation.
TEST(ActuationInSync, OnlyGpuFieldsReachTheComparison) {
  const nlohmann::json a = nlohmann::json::parse(R"({"metadata":{"annotations":{"gpu-fraction":"0.5"},
      "labels":{"kai.scheduler/queue":"q1"}},"spec":{"schedulerName":"kai-scheduler",
      "containers":[{"name":"app","args":["--gpu-memory-utilization=0.45"],"resources":{"requests":{"cpu":"1","memory":"1Gi"}}}]}})");
  const nlohmann::json b = nlohmann::json::parse(R"({"metadata":{"annotations":{"gpu-fraction":"0.50"},
      "labels":{"kai.scheduler/queue":"q2"}},"spec":{"schedulerName":"default-scheduler",
      "containers":[{"name":"app","args":["--gpu-memory-utilization=0.9"],"resources":{"requests":{"cpu":"2","memory":"3Gi"}}}]}})");
  EXPECT_TRUE(in_sync(gpu_allocation(read_pod_resources(a)), gpu_allocation(read_pod_resources(b))));
  const nlohmann::json c = nlohmann::json::parse(
      R"({"spec":{"containers":[{"name":"app","resources":{"limits":{"nvidia.com/gpu":1}}}]}})");
  EXPECT_FALSE(in_sync(gpu_allocation(read_pod_resources(a)), gpu_allocation(read_pod_resources(c))));
}

// ACT-1: a candidate is controller-owned, unfinished, and differs from its desired value (the workload's, or
// its own for Model and StrimziPodSet).
TEST(ActuationCandidates, Table) {
  std::vector<PodFacts> pods = {pod("a", one(frac("app", 25))), pod("b", one(frac("app", 50))),
                                pod("c", one(frac("app", 25))), pod("d", one(frac("app", 25))),
                                pod("e", one(frac("app", 25))), pod("f", one(frac("app", 25)))};
  pods[2].controller_owned = false;        // not ours
  pods[3].phase = "Succeeded";             // finished
  pods[4].desired = one(frac("app", 25));  // its own desired value: in sync
  pods[5].desired = one(frac("app", 70));  // its own desired value: differs
  EXPECT_EQ(candidates(pods, one(frac("app", 50))), (std::vector<std::size_t>{0, 5}));
  // No workload value: only pods with their own.
  EXPECT_EQ(candidates(pods, std::nullopt), (std::vector<std::size_t>{5}));
}

// ACT-5 memory keys: canonical by container name, and they change with the value, its form and the pod.
TEST(ActuationDesiredKey, Canonical) {
  EXPECT_EQ(desired_key({whole("side", 2), frac("app", 50)}), "app=0.5f,side=2w");
  EXPECT_EQ(desired_key({frac("app", 50), whole("side", 2)}),
            desired_key({whole("side", 2), frac("app", 50)}));
  EXPECT_NE(desired_key(one({"app", 100, true})), desired_key(one({"app", 100, false})));
  EXPECT_EQ(desired_key({}), "");
  EXPECT_EQ(pdb_key("u1", "app=0.5f"), "u1|app=0.5f");
  EXPECT_NE(pdb_key("u1", "app=0.5f"), pdb_key("u2", "app=0.5f"));
}

struct InPlaceCase {
  const char* name;
  bool in_place;
  Allocation desired, live;
  bool fraction_only;
  const char* note;
};

// ACT-6: GPU changes always use eviction; with inPlaceResize.enabled and only the fraction changing, the
// engine records kai-fraction-requires-restart.
TEST(ActuationInPlace, Table) {
  const InPlaceCase cases[] = {
      {"fraction to fraction", true, one(frac("app", 50)), one(frac("app", 25)), true,
       "kai-fraction-requires-restart"},
      {"in-place disabled", false, one(frac("app", 50)), one(frac("app", 25)), true, ""},
      {"whole to fraction", true, one(frac("app", 50)), one(whole("app", 1)), false, ""},
      {"fraction to whole", true, one(whole("app", 1)), one(frac("app", 50)), false, ""},
      {"whole to whole", true, one(whole("app", 2)), one(whole("app", 1)), false, ""},
      {"no change", true, one(frac("app", 50)), one(frac("app", 50)), false, ""},
      {"fraction moves container", true, one(frac("side", 50)), one(frac("app", 25)), false, ""},
      {"nothing live", true, one(frac("app", 50)), {}, false, ""},
  };
  for (const InPlaceCase& c : cases) {
    EXPECT_EQ(fraction_only_change(c.desired, c.live), c.fraction_only) << c.name;
    EXPECT_EQ(in_place_note(c.in_place, c.desired, c.live), c.note) << c.name;
  }
}

}  // namespace
}  // namespace kubex::decide::actuation::test
