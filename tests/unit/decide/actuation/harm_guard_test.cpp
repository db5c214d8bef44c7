// ACT-10: the pods a downsize harmed, the harm-guard floors kept in actuation-state, and what decide() does with
// harmed pods.
#include <gtest/gtest.h>

#include "actuation_fixtures.h"
#include "common/time_format.h"
#include "decide/actuation/actuation_state.h"
#include "decide/actuation/harm_guard.h"
#include "decide/actuation/rollback.h"

namespace kubex::decide::actuation::test {
namespace {

constexpr const char* kDownInfo =
    R"({"mode":"kai","strategy":"ClusterAutomationStrategy/s","containers":{"app":{"gpu":{"from":"1","to":"0.3","source":"StaticPolicy/s"}}}})";

// A replacement kubex resized from 1 GPU to 0.3, started `age` ago, whose container `app` exited as given.
PodFacts resized(std::string name, common::Duration age, int restarts, bool oom, common::Duration exited_after) {
  PodFacts p = with_annotation(pod(std::move(name), one(frac("app", 30)), age), api::keys::kPodRightsizingInfo, kDownInfo);
  p.started = p.created;
  p.exits.push_back({"app", restarts, oom, p.started + exited_after});
  p.last_restart = p.started + exited_after;
  return p;
}

// ACT-10: an out-of-memory exit, or two restarts, within 10 minutes of the start of a pod kubex resized down is harm;
// the floor is what the container had before (pod-rightsizing-info's from).
TEST(HarmGuard, AnOomOrTwoRestartsSoonAfterADownsizeIsHarm) {
  const auto oom = find_harm({resized("r", 2min, 1, true, 40s)}, {}, false, kNow);
  ASSERT_EQ(oom.size(), 1u);
  EXPECT_EQ(oom[0], (Harm{"r", "app", 100, 30, "an out-of-memory exit"}));
  EXPECT_EQ(find_harm({resized("r", 5min, 2, false, 3min)}, {}, false, kNow).size(), 1u);  // two restarts
  EXPECT_TRUE(find_harm({resized("r", 5min, 1, false, 3min)}, {}, false, kNow).empty());  // one plain restart
  EXPECT_TRUE(find_harm({resized("r", 2h, 1, true, 30min)}, {}, false, kNow).empty());    // long after its start
  EXPECT_TRUE(find_harm({resized("r", 2min, 1, true, 40s)}, {}, true, kNow).empty());     // the predecessor crashed too
  // No downsize (an upsize, or a pod kubex left alone): not ours.
  PodFacts up = resized("u", 2min, 1, true, 40s);
  up.annotations[api::keys::kPodRightsizingInfo] =
      R"({"containers":{"app":{"gpu":{"from":"0.3","to":"0.6","source":"StaticPolicy/s"}}}})";
  EXPECT_TRUE(find_harm({up}, {}, false, kNow).empty());
  PodFacts plain = resized("p", 2min, 1, true, 40s);
  plain.annotations.erase(api::keys::kPodRightsizingInfo);
  EXPECT_TRUE(find_harm({plain}, {}, false, kNow).empty());
  // resized_down (explain's crash-looping wording): only a gpu `to` below its `from` in pod-rightsizing-info.
  EXPECT_TRUE(resized_down(resized("r", 2min, 1, true, 40s)));
  EXPECT_FALSE(resized_down(up));
  EXPECT_FALSE(resized_down(plain));
}

// ACT-10 (2): the floor is the allocation before THIS change (RBK-1 history), not the original, when the workload was
// resized more than once.
TEST(HarmGuard, TheFloorIsTheAllocationBeforeThisChange) {
  std::vector<HistoryEntry> history = {{"2026-12-01T00:00:00Z", "app", "1", "0.5", "kai", "StaticPolicy/s"},
                                       {"2026-12-02T00:00:00Z", "app", "0.5", "0.3", "kai", "StaticPolicy/s"}};
  const auto found = find_harm({resized("r", 2min, 1, true, 40s)}, history, false, kNow);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].from, 50);
}

// ACT-10, ACT-9: floors last 24 h, the higher one wins, and they survive the actuation-state round trip; admission
// reads them with floor_of until they expire.
TEST(HarmGuard, FloorsAreKeptOnTheOwnerFor24Hours) {
  const auto found = find_harm({resized("r", 2min, 1, true, 40s)}, {}, false, kNow);
  HarmFloors floors = merge_floors({}, found, kNow);
  ASSERT_EQ(floors.size(), 1u);
  EXPECT_EQ(floors["app"].floor, 100);
  EXPECT_EQ(floors["app"].until, kNow + 24h);
  EXPECT_EQ(merge_floors(floors, {}, kNow + 24h).size(), 0u);  // expired
  ActuationState st;
  st.harm_floors = floors;
  const std::string text = format_actuation_state(st);
  EXPECT_EQ(text, R"({"harmGuard":{"app":{"floor":"1","until":")" + common::format_rfc3339(kNow + 24h) + R"("}}})");
  EXPECT_EQ(read_actuation_state(text, {}), st);
  EXPECT_EQ(floor_of(text, "app", kNow), 100);
  EXPECT_EQ(floor_of(text, "side", kNow), std::nullopt);
  EXPECT_EQ(floor_of(text, "app", kNow + 24h), std::nullopt);
}

// ACT-10 step by step: a harm first raises the floor (announce it, wait for the owner); once the owner shows the
// floor, nothing waits and nothing is announced again; a dry run never waits (it writes no floor); a higher floor
// found later is announced again.
TEST(HarmGuard, HarmStepAnnouncesOnceAndWaitsUntilTheOwnerShowsTheFloor) {
  const std::vector<Harm> found = {{"r", "app", 100, 30, "an out-of-memory exit"}};
  HarmStep first = harm_step({}, found, std::nullopt, false, kNow);
  EXPECT_EQ(first.harmed, (std::vector<std::string>{"r"}));
  EXPECT_EQ(first.raised, found);
  EXPECT_TRUE(first.wait_for_owner);
  ActuationState st;
  st.harm_floors = first.floors;
  const std::string owner = format_actuation_state(st);
  HarmStep shown = harm_step(first.floors, found, std::string_view(owner), false, kNow + 5s);
  EXPECT_TRUE(shown.raised.empty());
  EXPECT_FALSE(shown.wait_for_owner);
  EXPECT_EQ(shown.harmed, (std::vector<std::string>{"r"}));
  EXPECT_FALSE(harm_step({}, found, std::nullopt, true, kNow).wait_for_owner);  // dry run
  const std::vector<Harm> higher = {{"r2", "app", 150, 100, "2 restarts"}};
  HarmStep again = harm_step(first.floors, higher, std::string_view(owner), false, kNow + 1min);
  EXPECT_EQ(again.raised, higher);
  EXPECT_EQ(again.floors.at("app").floor, 150);
  EXPECT_TRUE(again.wait_for_owner);
}

// ACT-10 (1): while a new harm's floor is not on the owner, nothing is evicted; (3) a harmed pod that is not Ready
// is evicted without waiting for readiness, and its own unavailability does not use up the budget.
TEST(HarmGuard, DecideStopsAtOnceThenReplacesTheHarmedPods) {
  Input in = starter({pod("b", one(frac("app", 25)), 2h)});
  in.desired = one(whole("app", 1));  // the floor: back to 1 GPU
  in.workload.replicas = 2;
  in.last_eviction = kNow - 3min;
  PodFacts harmed = not_ready(resized("r", 2min, 1, true, 40s));
  in.workload.pods.push_back(harmed);
  in.harmed = {"r"};
  in.harm_found_now = true;
  Plan plan = decide(in);
  EXPECT_TRUE(plan.evict.empty());
  EXPECT_EQ(names(find(plan, "b")->failed), (std::vector<std::string>{"resize-harmed-workload"}));
  in.harm_found_now = false;
  plan = decide(in);
  EXPECT_EQ(plan.evict, (std::vector<std::string>{"r"}));
  // Without the harm, the same pod waits for readiness like any other.
  in.harmed.clear();
  EXPECT_TRUE(decide(in).evict.empty());
}

}  // namespace
}  // namespace kubex::decide::actuation::test
