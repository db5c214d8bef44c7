// OBS-1 / OBS-2 / VAL-1 / API-4: which condition follows from a validator verdict, and which events follow
// from a change of conditions.
#include "decide/status/object_status.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "api/validate.h"

using namespace kubex;
using namespace kubex::decide;
using nlohmann::json;

namespace {

api::ValidationReport report_of(std::vector<std::pair<std::string, std::string>> errors,
                                bool contract = false) {
  api::ValidationReport r;
  for (auto& [p, m] : errors) r.errors.add(p, m);
  r.contract = contract;
  return r;
}

}  // namespace

// VAL-1: the reason is InvalidContract when any error is a contract error, the message is the validator's.
TEST(Verdict, ReasonAndMessageComeFromTheReport) {
  Verdict ok = verdict_of(report_of({}));
  EXPECT_TRUE(ok.valid);
  EXPECT_EQ(ok.message, "");

  Verdict spec = verdict_of(report_of({{"spec.weight", "must be >= 0"}, {"spec.scope", "required"}}));
  EXPECT_FALSE(spec.valid);
  EXPECT_STREQ(spec.reason(), "InvalidSpec");
  EXPECT_EQ(spec.message, "spec.weight: must be >= 0; spec.scope: required");  // VAL-1 "; " join

  Verdict contract = verdict_of(report_of({{"spec.experimental", "required"}}, true));
  EXPECT_STREQ(contract.reason(), "InvalidContract");

  // The real validator: a KAI strategy without the contract.
  json s = {{"apiVersion", "rightsizing.kubex.ai/v1alpha1"},
            {"kind", "ClusterAutomationStrategy"},
            {"metadata", {{"name", "kai"}}},
            {"spec", {{"enablement", {{"overrideScheduler", "kai"}}}}}};
  Verdict real = verdict_of(api::validate(api::Kind::kClusterAutomationStrategy, s));
  EXPECT_STREQ(real.reason(), "InvalidContract");
  EXPECT_EQ(
      real.message,
      "spec.experimental.gpuKaiContract: must be \"v1alpha1-2026-07\" when spec.enablement.overrideScheduler "
      "is \"kai\" or spec.kai is set");
}

// OBS-1 `Valid` (strategies, PolicyEvaluation, GlobalConfiguration).
TEST(ValidCondition, Table) {
  struct Case {
    Verdict in;
    ConditionState want;
  };
  const Case cases[] = {
      {{true, false, ""}, {"Valid", "True", "Valid", "the spec passes validation"}},
      {{false, false, "spec.kai.queue: must be a valid RFC 1123 label"},
       {"Valid", "False", "InvalidSpec", "spec.kai.queue: must be a valid RFC 1123 label"}},
      {{false, true, "spec.experimental: required"},
       {"Valid", "False", "InvalidContract", "spec.experimental: required"}},
  };
  for (const auto& c : cases) EXPECT_EQ(valid_condition(c.in), c.want) << c.in.message;
}

// CON-11: invalid consolidation policies get Available=False from validation; a valid one says that this
// engine does not consolidate (issue 12 item 10), instead of nothing.
TEST(ConsolidationCondition, InvalidOrNotEvaluated) {
  auto c = consolidation_condition({false, true, "spec.experimental: required"});
  EXPECT_EQ(c, (ConditionState{"Available", "False", "InvalidContract", "spec.experimental: required"}));
  auto s = consolidation_condition({false, false, "spec.requeueAfter: must be at least 1s"});
  EXPECT_EQ(s.reason, "InvalidSpec");
  auto ok = consolidation_condition({true, false, ""});
  EXPECT_EQ(ok.type, "Available");
  EXPECT_EQ(ok.status, "Unknown");
  EXPECT_EQ(ok.reason, "NotEvaluated");
  EXPECT_NE(ok.message.find("has not evaluated it yet"), std::string::npos) << ok.message;

  EXPECT_TRUE(is_validation_condition({"Available", "False", "InvalidSpec", "x"}));
  EXPECT_TRUE(is_validation_condition({"Available", "False", "InvalidContract", "x"}));
  EXPECT_TRUE(is_validation_condition({"Available", "Unknown", "NotEvaluated", "x"}));
  EXPECT_FALSE(is_validation_condition({"Available", "True", "NoCandidate", "x"}));
  EXPECT_FALSE(is_validation_condition({"Available", "False", "NoMatchingNodeSelector", "x"}));
  EXPECT_FALSE(is_validation_condition({"Valid", "False", "InvalidSpec", "x"}));
}

// API-4 / VAL-4: other names are rejected with the validator's words, against the configured name.
TEST(SingletonVerdict, NameRuleFollowsTheConfiguredName) {
  auto v = [](const std::string& name) {
    json o = {{"apiVersion", "rightsizing.kubex.ai/v1alpha1"},
              {"kind", "GlobalConfiguration"},
              {"metadata", {{"name", name}}},
              {"spec", {{"prometheus", {{"url", "not-a-url"}}}}}};
    return api::validate(api::Kind::kGlobalConfiguration, o);
  };
  const std::string url = "spec.prometheus.url: must be an absolute http or https URL";
  struct Case {
    std::string name, configured, want;
  };
  const Case cases[] = {
      // Default flags: the validator's verdict unchanged.
      {"global-config", "global-config", url},
      {"other", "global-config", "metadata.name: must be \"global-config\"; " + url},
      // --global-config-name=cluster-settings: that object is the singleton, global-config is not.
      {"cluster-settings", "cluster-settings", url},
      {"global-config", "cluster-settings", "metadata.name: must be \"cluster-settings\"; " + url},
      {"other", "cluster-settings", "metadata.name: must be \"cluster-settings\"; " + url},
  };
  for (const auto& c : cases) {
    Verdict got = singleton_verdict(v(c.name), c.name, "global-config", c.configured);
    EXPECT_FALSE(got.valid);
    EXPECT_EQ(got.message, c.want) << c.name << " / " << c.configured;
    EXPECT_STREQ(got.reason(), "InvalidSpec");
  }
  // Only the name is wrong.
  json pe = {{"apiVersion", "rightsizing.kubex.ai/v1alpha1"},
             {"kind", "PolicyEvaluation"},
             {"metadata", {{"name", "precedence"}}},
             {"spec", json::object()}};
  Verdict got = singleton_verdict(api::validate(api::Kind::kPolicyEvaluation, pe), "precedence",
                                  "policy-evaluation", "policy-evaluation");
  EXPECT_EQ(got.message, "metadata.name: must be \"policy-evaluation\"");
  pe["metadata"]["name"] = "policy-evaluation";
  EXPECT_TRUE(singleton_verdict(api::validate(api::Kind::kPolicyEvaluation, pe), "policy-evaluation",
                                "policy-evaluation", "policy-evaluation")
                  .valid);
}

// OBS-2: events follow condition changes; repeating the same conditions gives none (a restart, a requeue).
TEST(ConditionEvents, Table) {
  const ConditionState not_found{"AutomationStrategyResolved", "False", "StrategyNotFound",
                                 "AutomationStrategy \"gpu\" not found in namespace \"ml\""};
  const ConditionState not_found_other{"AutomationStrategyResolved", "False", "StrategyNotFound",
                                       "AutomationStrategy \"gpu2\" not found in namespace \"ml\""};
  const ConditionState resolved{"AutomationStrategyResolved", "True", "Resolved",
                                "AutomationStrategy \"gpu\" resolved"};
  const ConditionState strategy_invalid{"AutomationStrategyResolved", "False", "StrategyInvalid", "x"};
  const ConditionState ready_nf{"Ready", "False", "StrategyNotFound", not_found.message};
  const ConditionState ready_ok{"Ready", "True", "Reconciled", ""};
  const ConditionState ready_spec{"Ready", "False", "InvalidSpec", "spec.weight: must be >= 0"};
  const ConditionState ready_spec2{"Ready", "False", "InvalidSpec", "spec.scope: required"};
  const ConditionState ready_contract{"Ready", "False", "InvalidContract", "spec.experimental: required"};
  const ConditionState resolved_contract{"AutomationStrategyResolved", "False", "InvalidContract",
                                         "spec.experimental: required"};
  const ConditionState valid_ok{"Valid", "True", "Valid", ""};
  const ConditionState valid_bad{"Valid", "False", "InvalidSpec",
                                 "spec.kai.queue: must be a valid RFC 1123 label"};
  const ConditionState avail_bad{"Available", "False", "InvalidContract", "spec.experimental: required"};
  const ConditionState avail_draining{"Available", "True", "Draining", "n2"};

  const EventPlan ev_not_found{true, "StrategyNotFound", not_found.message};
  const EventPlan ev_resolved{false, "StrategyResolved", resolved.message};
  struct Case {
    const char* what;
    std::vector<ConditionState> before, after;
    std::vector<EventPlan> want;
  };
  const Case cases[] = {
      {"new policy, strategy missing", {}, {not_found, ready_nf}, {ev_not_found}},
      {"still missing (requeue, restart)", {not_found, ready_nf}, {not_found, ready_nf}, {}},
      {"strategy created", {not_found, ready_nf}, {resolved, ready_ok}, {ev_resolved}},
      {"new policy, strategy there", {}, {resolved, ready_ok}, {ev_resolved}},
      {"still resolved", {resolved, ready_ok}, {resolved, ready_ok}, {}},
      {"strategy deleted", {resolved, ready_ok}, {not_found, ready_nf}, {ev_not_found}},
      {"another missing strategy",
       {not_found},
       {not_found_other},
       {{true, "StrategyNotFound", not_found_other.message}}},
      {"invalid strategy found: no StrategyResolved, no StrategyNotFound",
       {not_found},
       {strategy_invalid},
       {}},
      {"strategy fixed", {strategy_invalid}, {resolved}, {ev_resolved}},
      {"policy becomes invalid",
       {resolved, ready_ok},
       {resolved, ready_spec},
       {{true, "InvalidSpec", ready_spec.message}}},
      {"still the same error", {ready_spec}, {ready_spec}, {}},
      {"another error", {ready_spec}, {ready_spec2}, {{true, "InvalidSpec", ready_spec2.message}}},
      {"contract error on both conditions: one event",
       {},
       {resolved_contract, ready_contract},
       {{true, "InvalidContract", "spec.experimental: required"}}},
      {"policy fixed: no event", {ready_spec}, {ready_ok}, {}},
      {"strategy becomes invalid", {valid_ok}, {valid_bad}, {{true, "InvalidSpec", valid_bad.message}}},
      {"new invalid strategy", {}, {valid_bad}, {{true, "InvalidSpec", valid_bad.message}}},
      {"valid strategy: no event", {}, {valid_ok}, {}},
      {"consolidation becomes invalid",
       {avail_draining},
       {avail_bad},
       {{true, "InvalidContract", avail_bad.message}}},
      {"unrelated conditions before do not matter", {avail_draining, valid_bad}, {valid_bad}, {}},
  };
  for (const auto& c : cases) EXPECT_EQ(condition_events(c.before, c.after), c.want) << c.what;
}

// VAL-6: invalid objects come back after 5 minutes.
TEST(InvalidRequeue, IsFiveMinutes) {
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::seconds>(kInvalidRequeue).count(), 300);
}
