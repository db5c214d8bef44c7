// PRO-5 and PRO-7: what an owner holds under the proactive prefix after one evaluation (requests, the peak as
// limits.gpu, proactive-state), from its ConfigMap entry, this evaluation's history and what it held before.
#include "decide/proactive/owner_values.h"

#include <gtest/gtest.h>

#include "common/time_format.h"

using namespace kubex;
using namespace kubex::decide;
using namespace std::chrono_literals;

namespace {

const common::TimePoint kNow = *common::parse_rfc3339("2026-12-04T12:00:00Z");
const common::TimePoint kEarlier = *common::parse_rfc3339("2026-12-04T11:00:00Z");

HistoryValue value(Hundredths gpu, Hundredths peak, std::chrono::seconds span) {
  HistoryValue v;
  v.outcome = HistoryOutcome::kValue;
  v.gpu = gpu;
  v.peak = peak;
  v.span = span;
  return v;
}

HistoryValue none(HistoryOutcome o, std::string reason) {
  HistoryValue v;
  v.outcome = o;
  v.reason = std::move(reason);
  return v;
}

ContainerSources app(std::optional<Hundredths> cm, std::optional<HistoryValue> h) {
  return {"app", cm, Clamp::kNone, std::move(h)};
}

}  // namespace

// PRO-9: the owner of a whole-GPU Deployment with 96h of history gets 0.36, peak 0.3 as limits.gpu, and a state
// saying history, 96h, 0.3, updated now.
TEST(ProactiveOwnerValues, Pro9HistoryValueIsWrittenWithItsState) {
  OwnerInput in;
  in.containers = {app(std::nullopt, value(36, 30, 96h))};
  in.now = kNow;
  OwnerValues out = owner_values(in);
  EXPECT_TRUE(out.write);
  EXPECT_EQ(out.result, "RECOMMENDED");
  EXPECT_EQ(out.requests, R"({"app":{"gpu":"0.36"}})");
  EXPECT_EQ(out.limits, R"({"app":{"gpu":"0.3"}})");
  EXPECT_EQ(out.state,
            R"({"historySpan":{"app":"96h"},"peak":{"app":"0.3"},"source":{"app":"history"},"updatedAt":"2026-12-04T12:00:00Z"})");
  EXPECT_EQ(out.sources.at("app"), "history");
}

// The same evaluation again writes nothing: updatedAt stays, the result is UNCHANGED.
TEST(ProactiveOwnerValues, SameValuesAreNotRewritten) {
  OwnerInput in;
  in.containers = {app(std::nullopt, value(36, 30, 96h))};
  in.now = kEarlier;
  OwnerValues first = owner_values(in);
  in.requests = first.requests;
  in.limits = first.limits;
  in.state = first.state;
  in.now = kNow;
  OwnerValues again = owner_values(in);
  EXPECT_FALSE(again.write);
  EXPECT_EQ(again.result, "UNCHANGED");
  EXPECT_EQ(again.state, first.state);  // updatedAt of the first write
}

// PRO-9: with 40 minutes of history nothing is written (NO_DATA), and the reason says why.
TEST(ProactiveOwnerValues, TooLittleHistoryWritesNothing) {
  OwnerInput in;
  in.containers = {app(std::nullopt, none(HistoryOutcome::kTooLittleHistory, "SM history covers 40m"))};
  in.now = kNow;
  OwnerValues out = owner_values(in);
  EXPECT_FALSE(out.write);
  EXPECT_EQ(out.result, "NO_DATA");
  EXPECT_FALSE(out.requests);
  EXPECT_EQ(out.containers[0].reason, "SM history covers 40m");
}

// PRO-7: a ConfigMap entry overrides history (the history's memory peak still goes to limits.gpu, KAI-2's p);
// when it disappears the history value takes over at once.
TEST(ProactiveOwnerValues, ConfigMapOverridesHistoryAndItsRemovalReturnsToHistory) {
  OwnerInput in;
  in.containers = {app(Hundredths{50}, value(36, 30, 96h))};
  in.now = kNow;
  OwnerValues cm = owner_values(in);
  EXPECT_EQ(cm.requests, R"({"app":{"gpu":"0.5"}})");
  EXPECT_EQ(cm.limits, R"({"app":{"gpu":"0.3"}})");
  EXPECT_EQ(cm.sources.at("app"), "configmap");
  in.requests = cm.requests;
  in.state = cm.state;
  in.containers = {app(std::nullopt, value(36, 30, 96h))};
  OwnerValues back = owner_values(in);
  EXPECT_EQ(back.requests, R"({"app":{"gpu":"0.36"}})");
  EXPECT_EQ(back.limits, R"({"app":{"gpu":"0.3"}})");
  EXPECT_EQ(back.result, "RECOMMENDED");
}

// PRO-7: a ConfigMap value without history is removed when its entry goes; so is a value written before the
// state existed (no recorded source).
TEST(ProactiveOwnerValues, ValueWhoseSourceVanishedIsRemoved) {
  for (std::optional<std::string> state :
       {std::optional<std::string>(R"({"source":{"app":"configmap"}})"), std::optional<std::string>()}) {
    OwnerInput in;
    in.containers = {app(std::nullopt, none(HistoryOutcome::kNoData, "no GPU history: no SM samples"))};
    in.requests = R"({"app":{"gpu":"0.5"}})";
    in.state = state;
    in.now = kNow;
    OwnerValues out = owner_values(in);
    EXPECT_TRUE(out.write);
    EXPECT_FALSE(out.requests);
    EXPECT_FALSE(out.state);
    EXPECT_EQ(out.result, "NO_DATA");
  }
}

// PRO-7/PRO-8: a history value that cannot be refreshed (Prometheus down, too little data) stays, with its peak and
// span; nothing is written.
TEST(ProactiveOwnerValues, UnrefreshableHistoryValueIsKeptUnchanged) {
  const std::string state =
      R"({"historySpan":{"app":"96h"},"peak":{"app":"0.3"},"source":{"app":"history"},"updatedAt":"2026-12-04T11:00:00Z"})";
  for (std::optional<HistoryValue> h :
       {std::optional<HistoryValue>(), std::optional<HistoryValue>(none(HistoryOutcome::kNoData, "no SM samples"))}) {
    OwnerInput in;
    in.containers = {app(std::nullopt, h)};
    in.requests = R"({"app":{"gpu":"0.36"}})";
    in.limits = R"({"app":{"gpu":"0.3"}})";
    in.state = state;
    in.now = kNow;
    OwnerValues out = owner_values(in);
    EXPECT_FALSE(out.write) << (h ? "no data" : "not read");
    EXPECT_EQ(out.result, "UNCHANGED");
    EXPECT_TRUE(out.containers[0].choice.kept);
    EXPECT_EQ(out.state, state);
  }
}

// PRO-4: a container that lost its allocation loses its history value.
TEST(ProactiveOwnerValues, NoAllocationRemovesHistoryValue) {
  OwnerInput in;
  in.containers = {app(std::nullopt, none(HistoryOutcome::kNoAllocation, "no GPU allocated"))};
  in.requests = R"({"app":{"gpu":"0.36"}})";
  in.state = R"({"source":{"app":"history"}})";
  in.now = kNow;
  OwnerValues out = owner_values(in);
  EXPECT_TRUE(out.write);
  EXPECT_FALSE(out.requests);
}

// A span that grew is recorded (state rewritten) without counting as a new recommendation.
TEST(ProactiveOwnerValues, LongerSpanRewritesStateOnly) {
  OwnerInput in;
  in.containers = {app(std::nullopt, value(36, 30, 96h))};
  in.now = kEarlier;
  OwnerValues first = owner_values(in);
  in.requests = first.requests;
  in.limits = first.limits;
  in.state = first.state;
  in.containers = {app(std::nullopt, value(36, 30, 97h))};
  in.now = kNow;
  OwnerValues out = owner_values(in);
  EXPECT_TRUE(out.write);
  EXPECT_FALSE(out.requests_changed);
  EXPECT_EQ(out.result, "UNCHANGED");
  EXPECT_NE(out.state->find(R"("app":"97h")"), std::string::npos);
  EXPECT_NE(out.state->find("2026-12-04T12:00:00Z"), std::string::npos);
}

// RBK-1: the memory lookback is trimmed at the newest history entry.
TEST(ProactiveOwnerValues, LastAllocationTransitionIsTheNewestHistoryEntry) {
  const std::string rollback =
      R"({"phase":"Managed","history":[{"at":"2026-12-01T00:00:00Z","container":"app","from":"unspecified","to":"1"},)"
      R"({"at":"2026-12-03T06:00:00Z","container":"app","from":"1","to":"0.36"}]})";
  auto t = last_allocation_transition(rollback);
  ASSERT_TRUE(t);
  EXPECT_EQ(common::format_rfc3339(*t), "2026-12-03T06:00:00Z");
  EXPECT_FALSE(last_allocation_transition(R"({"phase":"Managed"})"));
  EXPECT_FALSE(last_allocation_transition("not json"));
}

TEST(ProactiveOwnerValues, StateRoundTripsAndSpanIsWholeHours) {
  ProactiveState s;
  s.source["app"] = "history";
  s.history_span["app"] = "96h";
  s.peak["app"] = "0.3";
  s.updated_at = "2026-12-04T12:00:00Z";
  EXPECT_EQ(parse_proactive_state(format_proactive_state(s)), s);
  EXPECT_FALSE(parse_proactive_state("[]"));
  EXPECT_EQ(span_text(std::chrono::seconds(96h + 59min)), "96h");
}
