// ACT-9: the actuation-state owner annotation: its exact JSON (sorted keys), the round trip, unreadable values
// read as empty (VAL-7's spirit), refusals of pods that are gone dropped, and when it is written or removed.
#include <gtest/gtest.h>

#include "decide/actuation/actuation_state.h"

namespace kubex::decide::actuation {
namespace {

using namespace std::chrono_literals;
const common::TimePoint kT0 = common::TimePoint{} + std::chrono::seconds(1'800'000'000);  // 2027-01-15T08:00:00Z

ActuationState sample() {
  ActuationState s;
  s.pdb_blocked = {{"uid-b", "app=0.5f"}, {"uid-a", "app=0.5f"}};
  s.guard = {"app=0.5f", 2, kT0 + 60s, kT0 - 30s};
  return s;
}

TEST(ActuationState, FormatIsCompactWithSortedKeys) {
  EXPECT_EQ(format_actuation_state(sample()),
            R"({"loopGuard":{"desired":"app=0.5f","k":2,"reactedTo":"2027-01-15T07:59:30Z",)"
            R"("until":"2027-01-15T08:01:00Z"},"pdbBlocked":{"uid-a":"app=0.5f","uid-b":"app=0.5f"}})");
}

TEST(ActuationState, RoundTrips) {
  const std::vector<std::string> uids = {"uid-a", "uid-b"};
  struct Case {
    const char* name;
    ActuationState s;
  };
  ActuationState only_pdb;
  only_pdb.pdb_blocked = {{"uid-a", "rollback"}};
  ActuationState only_guard;
  only_guard.guard = {"app=1w", 1, kT0 + 30s, std::nullopt};
  for (const Case& c : std::vector<Case>{{"both", sample()}, {"pdb only", only_pdb}, {"guard only", only_guard}}) {
    SCOPED_TRACE(c.name);
    const std::string text = format_actuation_state(c.s);
    EXPECT_EQ(read_actuation_state(text, uids), c.s);
    EXPECT_EQ(format_actuation_state(read_actuation_state(text, uids)), text);
  }
}

TEST(ActuationState, SubSecondTimesAreRoundedSoTheReadBackValueFormatsTheSame) {
  ActuationState s;
  s.guard = {"app=0.5f", 1, kT0 + 1500ms, kT0 + 700ms};
  const std::string text = format_actuation_state(s);
  EXPECT_NE(text.find(R"("until":"2027-01-15T08:00:02Z")"), std::string::npos);  // never shorter
  EXPECT_NE(text.find(R"("reactedTo":"2027-01-15T08:00:00Z")"), std::string::npos);
  EXPECT_FALSE(actuation_state_write(text, read_actuation_state(text, {})).has_value());
}

TEST(ActuationState, UnreadableValuesReadAsEmpty) {
  for (const char* text : {"", "not json", "[]", "\"x\"", "{\"pdbBlocked\":[1,2]}", "{\"loopGuard\":{\"k\":0}}",
                           "{\"loopGuard\":{\"k\":\"2\",\"desired\":\"a\"}}", "{\"loopGuard\":{\"k\":1}}",
                           "{\"pdbBlocked\":{\"uid-a\":3}}"}) {
    SCOPED_TRACE(text);
    EXPECT_TRUE(read_actuation_state(std::string(text), {"uid-a"}).empty());
  }
  EXPECT_FALSE(parse_actuation_state("not json").has_value());
  EXPECT_TRUE(read_actuation_state(std::nullopt, {"uid-a"}).empty());
  // A bad time drops only the time.
  auto s = read_actuation_state(R"({"loopGuard":{"desired":"a","k":3,"until":"soon"}})", {});
  EXPECT_EQ(s.guard.step, 3);
  EXPECT_FALSE(s.guard.until.has_value());
}

TEST(ActuationState, RefusalsOfPodsThatAreGoneAreDropped) {
  const std::string text = format_actuation_state(sample());
  ActuationState s = read_actuation_state(text, {"uid-b", "uid-new"});
  EXPECT_EQ(s.pdb_blocked, (std::map<std::string, std::string>{{"uid-b", "app=0.5f"}}));
  EXPECT_EQ(s.guard.step, 2);  // the back-off belongs to the workload, not to a pod
  EXPECT_TRUE(read_actuation_state(R"({"pdbBlocked":{"uid-a":"app=0.5f"}})", {}).empty());
}

TEST(ActuationState, ToAndFromDecideMemory) {
  GuardState learning{"app=0.5f", 0, std::nullopt, std::nullopt};  // k = 0: nothing to keep
  ActuationState s = actuation_state_of({pdb_key("uid-a", "app=0.5f"), pdb_key("uid-b", "rollback"), "junk"}, learning);
  EXPECT_EQ(s.pdb_blocked, (std::map<std::string, std::string>{{"uid-a", "app=0.5f"}, {"uid-b", "rollback"}}));
  EXPECT_EQ(s.guard, GuardState{});
  EXPECT_EQ(pdb_keys_of(s), (std::set<std::string>{pdb_key("uid-a", "app=0.5f"), pdb_key("uid-b", "rollback")}));
  GuardState backing_off{"app=0.5f", 1, kT0 + 30s, kT0};
  EXPECT_EQ(actuation_state_of({}, backing_off).guard, backing_off);
  EXPECT_TRUE(actuation_state_of({}, learning).empty());
}

TEST(ActuationState, WrittenOnlyWhenItChangesAndRemovedWhenEmpty) {
  const std::string text = format_actuation_state(sample());
  struct Case {
    const char* name;
    std::optional<std::string> current;
    ActuationState next;
    std::optional<std::optional<std::string>> want;
  };
  const std::vector<Case> cases = {
      {"nothing kept, no annotation", std::nullopt, {}, std::nullopt},
      {"unchanged", text, sample(), std::nullopt},
      {"first record", std::nullopt, sample(), std::optional<std::string>(text)},
      {"empty now: removed", text, {}, std::optional<std::string>()},
      {"unreadable: removed", std::string("garbage"), {}, std::optional<std::string>()},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(actuation_state_write(c.current, c.next), c.want);
  }
}

}  // namespace
}  // namespace kubex::decide::actuation
