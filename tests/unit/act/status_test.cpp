// API-1 / OBS-1: conditions keyed by type, observedGeneration everywhere, transitions only on status changes.
#include "act/status.h"

#include <gtest/gtest.h>

namespace kubex::act {
namespace {

using nlohmann::json;

const common::TimePoint t0{std::chrono::seconds(1'800'000'000)};
const common::TimePoint t1 = t0 + std::chrono::minutes(5);

TEST(StatusChange, ConditionsAreAMapByTypeWithGenerationsAndTransitionTimes) {  // API-1
  json status;
  StatusChange c;
  c.set = {{"Ready", "False", "StrategyNotFound", "ClusterAutomationStrategy \"x\" not found"},
           {"AutomationStrategyResolved", "False", "StrategyNotFound",
            "ClusterAutomationStrategy \"x\" not found"}};
  c.fields = {{"matchedWorkloads", 0}};
  auto tr = apply_status_change(status, c, 3, t0);
  EXPECT_EQ(tr, (std::vector<std::string>{"Ready", "AutomationStrategyResolved"}));
  ASSERT_EQ(status["conditions"].size(), 2u);
  EXPECT_EQ(status["conditions"][0]["type"], "AutomationStrategyResolved");  // sorted by type
  EXPECT_EQ(status["conditions"][1]["observedGeneration"], 3);
  EXPECT_EQ(status["conditions"][1]["lastTransitionTime"], "2027-01-15T08:00:00Z");
  EXPECT_EQ(status["observedGeneration"], 3);
  EXPECT_EQ(status["matchedWorkloads"], 0);

  // Same status, new message: no transition, the time stays.
  c.set = {{"Ready", "False", "StrategyNotFound", "still missing"}};
  c.fields = json::object();
  EXPECT_TRUE(apply_status_change(status, c, 4, t1).empty());
  EXPECT_EQ(status["conditions"][1]["message"], "still missing");
  EXPECT_EQ(status["conditions"][1]["lastTransitionTime"], "2027-01-15T08:00:00Z");
  EXPECT_EQ(status["conditions"][1]["observedGeneration"], 4);

  // A status change is a transition.
  c.set = {{"Ready", "True", "Reconciled", ""}};
  EXPECT_EQ(apply_status_change(status, c, 4, t1), std::vector<std::string>{"Ready"});
  EXPECT_EQ(status["conditions"][1]["lastTransitionTime"], "2027-01-15T08:05:00Z");

  // Nested fields merge (RFC 7386): siblings stay.
  c.set.clear();
  c.fields = {{"recommendationReload", {{"lastError", "boom"}}}};
  apply_status_change(status, c, 4, t1);
  c.fields = {{"recommendationReload", {{"lastCount", 2}}}};
  apply_status_change(status, c, 4, t1);
  EXPECT_EQ(status["recommendationReload"], (json{{"lastError", "boom"}, {"lastCount", 2}}));

  // Removal and field deletion.
  c.set.clear();
  c.remove = {"AutomationStrategyResolved"};
  c.fields = {{"matchedWorkloads", nullptr}};
  apply_status_change(status, c, 4, t1);
  ASSERT_EQ(status["conditions"].size(), 1u);
  EXPECT_FALSE(status.contains("matchedWorkloads"));
}

TEST(StatusChange, MalformedEntriesAreDroppedAndLongMessagesCut) {  // API-1, ENG-2
  json status = {{"conditions", {42, {{"no", "type"}}, {{"type", "Valid"}, {"status", "True"}}}}};
  StatusChange c;
  c.set = {{"Valid", "False", "InvalidSpec", std::string(40000, 'x')}};
  apply_status_change(status, c, 1, t0);
  ASSERT_EQ(status["conditions"].size(), 1u);
  EXPECT_EQ(status["conditions"][0]["message"].get<std::string>().size(), 32768u);
}

TEST(StatusChange, KeepReasonsLeaveAnotherWritersConditionAlone) {  // OBS-1 Ready/PrometheusQueryFailed
  json status = {{"conditions",
                  {{{"type", "Ready"},
                    {"status", "False"},
                    {"reason", "PrometheusQueryFailed"},
                    {"message", "refused"}}}}};
  StatusChange c;
  c.set = {{"Ready", "True", "Reconciled", ""}, {"AutomationStrategyResolved", "True", "Resolved", "s"}};
  c.keep_reasons["Ready"] = {"PrometheusQueryFailed"};
  auto tr = apply_status_change(status, c, 2, t0);
  EXPECT_EQ(tr, std::vector<std::string>{"AutomationStrategyResolved"});
  EXPECT_EQ(status["conditions"][1]["reason"], "PrometheusQueryFailed");
  EXPECT_EQ(status["conditions"][1]["message"], "refused");
  // Another reason is overwritten as usual.
  status["conditions"][1]["reason"] = "StrategyNotFound";
  tr = apply_status_change(status, c, 2, t1);
  EXPECT_EQ(tr, std::vector<std::string>{"Ready"});
  EXPECT_EQ(status["conditions"][1]["reason"], "Reconciled");
}

TEST(StatusChange, ConditionsOfReadsWellFormedEntries) {  // API-1
  json status = {{"conditions",
                  {42,
                   {{"type", "Valid"}, {"status", "False"}, {"reason", "InvalidSpec"}, {"message", "m"}},
                   {{"type", "Ready"}, {"status", 1}}}}};
  auto cs = conditions_of(status);
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_EQ(cs[0].type, "Valid");
  EXPECT_EQ(cs[0].reason, "InvalidSpec");
  EXPECT_EQ(cs[1].status, "");  // not a string
  EXPECT_TRUE(conditions_of(json()).empty());
  EXPECT_TRUE(conditions_of(json{{"conditions", "x"}}).empty());
}

}  // namespace
}  // namespace kubex::act
