// RBK-1: the rollback-state annotation (exact JSON shape, sorted keys), the original form from a template or
// a pod, lastApplied, and the bounded history.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "actuation_fixtures.h"
#include "decide/actuation/rollback.h"

namespace kubex::decide::actuation::test {
namespace {

const char* const kTemplate = R"({"metadata":{"labels":{"app":"web"}},"spec":{"containers":[
  {"name":"app","resources":{"requests":{"nvidia.com/gpu":"1","cpu":"1"},"limits":{"nvidia.com/gpu":1}}},
  {"name":"side","resources":{"requests":{"cpu":"100m"}}}]}})";

// RBK-1: the SPEC example, written with sorted keys at every level.
TEST(RollbackState, FormatIsTheSpecShapeWithSortedKeys) {
  RollbackState s;
  s.strategy = "AutomationStrategy/kai";
  s.original.scheduler_name = "default-scheduler";
  s.original.containers["app"] = {"1", "1"};
  s.last_applied["app"] = "0.7";
  s.history.push_back({"2027-01-15T08:00:00Z", "app", "1", "0.7", "kai", "StaticPolicy/s"});
  EXPECT_EQ(
      format_rollback_state(s),
      R"({"history":[{"at":"2027-01-15T08:00:00Z","container":"app","from":"1","mode":"kai",)"
      R"("source":"StaticPolicy/s","to":"0.7"}],"lastApplied":{"app":"0.7"},"original":{"containers":)"
      R"({"app":{"limits":{"nvidia.com/gpu":"1"},"requests":{"nvidia.com/gpu":"1"}}},"gpuFraction":null,)"
      R"("queue":null,"schedulerName":"default-scheduler"},"phase":"Managed",)"
      R"("strategy":"AutomationStrategy/kai"})");
  s.phase = Phase::kRollingBack;
  s.original.queue = "q";
  s.original.gpu_fraction = "0.25";
  s.original.containers["app"] = {"1", std::nullopt};
  const nlohmann::json j = nlohmann::json::parse(format_rollback_state(s));
  EXPECT_EQ(j["phase"], "RollingBack");
  EXPECT_EQ(j["original"]["queue"], "q");
  EXPECT_EQ(j["original"]["gpuFraction"], "0.25");
  EXPECT_EQ(j["original"]["containers"]["app"]["limits"], nlohmann::json::object());
}

// RBK-1: what is written reads back the same.
TEST(RollbackState, RoundTrip) {
  RollbackState s;
  s.phase = Phase::kRollingBack;
  s.strategy = "ClusterAutomationStrategy/c";
  s.original = {"kai-scheduler", "team-q", "0.5", {{"app", {"2", "2"}}, {"init", {std::nullopt, "1"}}}};
  s.last_applied = {{"app", "0.5"}, {"init", "1"}};
  for (int i = 0; i < 3; ++i)
    s.history.push_back(
        {"2027-01-15T08:00:0" + std::to_string(i) + "Z", "app", "1", "0.5", "kai", "GpuReactivePolicy/r"});
  auto back = parse_rollback_state(format_rollback_state(s));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, s);
}

struct BadCase {
  const char* text;
  bool ok;
};

// RBK-1/VAL-7: only a JSON object with a known phase is a state; the rest is rebuilt by the caller.
TEST(RollbackState, ParseTable) {
  const BadCase cases[] = {
      {"", false},
      {"not json", false},
      {"[]", false},
      {R"({"phase":"Other"})", false},
      {R"({"strategy":"AutomationStrategy/s"})", false},
      {R"({"phase":"Managed"})", true},  // the other parts may be missing
      {R"({"phase":"RollingBack","history":[1,{"at":"x"}],"lastApplied":{"app":1},"extra":true})", true},
  };
  for (const BadCase& c : cases) EXPECT_EQ(parse_rollback_state(c.text).has_value(), c.ok) << c.text;
  auto s =
      parse_rollback_state(R"({"phase":"RollingBack","history":[1,{"at":"x"}],"lastApplied":{"app":1}})");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->history.size(), 1u);
  EXPECT_EQ(s->last_applied.at("app"), "1");
  EXPECT_EQ(s->original.scheduler_name, "default-scheduler");
}

// RBK-1: original from the pod template: schedulerName, queue label, gpu-fraction annotation and each
// container's nvidia.com/gpu requests/limits as written.
TEST(RollbackState, OriginalFromTemplate) {
  Original o = original_from_template(nlohmann::json::parse(kTemplate));
  EXPECT_EQ(o.scheduler_name, "default-scheduler");  // absent: Kubernetes' default
  EXPECT_EQ(o.queue, std::nullopt);
  EXPECT_EQ(o.gpu_fraction, std::nullopt);
  EXPECT_EQ(o.containers, (std::map<std::string, OriginalContainer>{{"app", {"1", "1"}}}));

  o = original_from_template(nlohmann::json::parse(R"({"metadata":{"labels":{"kai.scheduler/queue":"q"},
      "annotations":{"gpu-fraction":"0.25"}},"spec":{"schedulerName":"kai-scheduler",
      "initContainers":[{"name":"warm","restartPolicy":"Always",
                         "resources":{"limits":{"nvidia.com/gpu":"2"}}}],
      "containers":[{"name":"app"}]}})"));
  EXPECT_EQ(o.scheduler_name, "kai-scheduler");
  EXPECT_EQ(o.queue, std::optional<std::string>("q"));
  EXPECT_EQ(o.gpu_fraction, std::optional<std::string>("0.25"));
  EXPECT_EQ(o.containers, (std::map<std::string, OriginalContainer>{{"warm", {std::nullopt, "2"}}}));

  // Anything unreadable reads as absent, never throws.
  o = original_from_template(nlohmann::json::parse(R"({"spec":{"containers":"x"},"metadata":[]})"));
  EXPECT_TRUE(o.containers.empty());
  EXPECT_EQ(original_from_template(nlohmann::json()).scheduler_name, "default-scheduler");
}

// RBK-1 for owners without a template (Model, StrimziPodSet) when every pod was already changed: the `from`
// values admission recorded in pod-rightsizing-info (ADM-16) are put back.
TEST(RollbackState, OriginalFromAnAdmittedPod) {
  const char* pod = R"({"metadata":{"labels":{"kai.scheduler/queue":"kubex-unlimited-gpu-queue"},
      "annotations":{"gpu-fraction":"0.5","automation-webhook.kubex.ai/pod-rightsizing-info":
      "{\"mode\":\"kai\",\"kai\":{\"scheduler\":{\"from\":\"default-scheduler\",\"to\":\"kai-scheduler\"},\"queue\":{\"from\":null,\"to\":\"kubex-unlimited-gpu-queue\"}},\"containers\":{\"server\":{\"gpu\":{\"from\":\"1\",\"to\":\"0.5\",\"source\":\"ClusterStaticPolicy/s\"}}}}"}},
      "spec":{"schedulerName":"kai-scheduler","containers":[{"name":"server"}]}})";
  Original o = original_from_template(nlohmann::json::parse(pod));
  EXPECT_EQ(o.scheduler_name, "default-scheduler");
  EXPECT_EQ(o.queue, std::nullopt);
  EXPECT_EQ(o.gpu_fraction, std::nullopt);
  EXPECT_EQ(o.containers, (std::map<std::string, OriginalContainer>{{"server", {"1", "1"}}}));

  // An existing KAI pod whose fraction kubex changed: the original fraction comes back, its queue is kept.
  const char* kai = R"({"metadata":{"labels":{"kai.scheduler/queue":"mine"},
      "annotations":{"gpu-fraction":"0.7","automation-webhook.kubex.ai/pod-rightsizing-info":
      "{\"mode\":\"kai\",\"containers\":{\"app\":{\"gpu\":{\"from\":\"0.25\",\"to\":\"0.7\"}}}}"}},
      "spec":{"schedulerName":"kai-scheduler","containers":[{"name":"app"}]}})";
  o = original_from_template(nlohmann::json::parse(kai));
  EXPECT_EQ(o.scheduler_name, "kai-scheduler");
  EXPECT_EQ(o.queue, std::optional<std::string>("mine"));
  EXPECT_EQ(o.gpu_fraction, std::optional<std::string>("0.25"));
  EXPECT_TRUE(o.containers.empty());

  // A GPU set from nothing (setFromUnspecified): the original had none.
  const char* unset = R"({"metadata":{"annotations":{"gpu-fraction":"0.7",
      "automation-webhook.kubex.ai/pod-rightsizing-info":
      "{\"containers\":{\"app\":{\"gpu\":{\"from\":\"unspecified\",\"to\":\"0.7\"}}}}"}},
      "spec":{"containers":[{"name":"app"}]}})";
  o = original_from_template(nlohmann::json::parse(unset));
  EXPECT_EQ(o.gpu_fraction, std::nullopt);
  EXPECT_TRUE(o.containers.empty());
}

// RBK-1: the first write: phase Managed, the strategy, the template's original and allocation, no history.
TEST(RollbackState, Initial) {
  const RollbackState s = initial_state("AutomationStrategy/s", nlohmann::json::parse(kTemplate));
  EXPECT_EQ(s.phase, Phase::kManaged);
  EXPECT_EQ(s.strategy, "AutomationStrategy/s");
  EXPECT_EQ(s.last_applied, (std::map<std::string, std::string>{{"app", "1"}}));
  EXPECT_TRUE(s.history.empty());
  EXPECT_EQ(applied_of({frac("app", 70), whole("b", 2)}),
            (std::map<std::string, std::string>{{"app", "0.7"}, {"b", "2"}}));
}

// RBK-1: a history entry when a Running pod's allocation differs from lastApplied, with the mode and source
// of its pod-rightsizing-info; at most 20 entries, the oldest dropped.
TEST(RollbackState, History) {
  RollbackState s = initial_state("AutomationStrategy/s", nlohmann::json::parse(kTemplate));
  const HistorySource src =
      history_source(R"({"mode":"kai","strategy":"AutomationStrategy/s",)"
                     R"("containers":{"app":{"gpu":{"from":"1","to":"0.7","source":"StaticPolicy/s"}}}})");
  EXPECT_EQ(src.mode, "kai");
  EXPECT_EQ(src.sources, (std::map<std::string, std::string>{{"app", "StaticPolicy/s"}}));
  EXPECT_TRUE(append_history(s, one(frac("app", 70)), src, kNow));
  ASSERT_EQ(s.history.size(), 1u);
  EXPECT_EQ(s.history[0], (HistoryEntry{"2027-01-15T08:00:00Z", "app", "1", "0.7", "kai", "StaticPolicy/s"}));
  EXPECT_EQ(s.last_applied.at("app"), "0.7");
  EXPECT_FALSE(append_history(s, one(frac("app", 70)), src, kNow + 1min));  // same value: nothing
  EXPECT_EQ(s.history.size(), 1u);

  // A container lastApplied does not know, and a pod without pod-rightsizing-info.
  EXPECT_TRUE(append_history(s, {frac("app", 70), whole("side", 1)}, history_source(""), kNow));
  EXPECT_EQ(s.history.back(),
            (HistoryEntry{"2027-01-15T08:00:00Z", "side", "unspecified", "1", "none", "none"}));

  for (int i = 0; i < 30; ++i)
    append_history(s, one(frac("app", 10 + i)), src, kNow + std::chrono::seconds(i));
  ASSERT_EQ(s.history.size(), kMaxHistory);
  EXPECT_EQ(s.history.back().to, "0.39");
  EXPECT_EQ(s.history.front().to, "0.2");  // entries for 0.1 … 0.19 and the first two were dropped
}

// RBK-1: the history follows the newest Running pod, so a rollout in progress does not flap lastApplied.
TEST(RollbackState, HistoryPod) {
  std::vector<PodFacts> pods = {pod("old", one(frac("app", 25)), 2h), pod("new", one(frac("app", 50)), 1min),
                                pod("newest-pending", one(frac("app", 50)), 1s),
                                terminating(pod("leaving", one(frac("app", 25)), 1s))};
  pods[2].phase = "Pending";
  EXPECT_EQ(history_pod(pods), std::optional<std::size_t>(1));
  EXPECT_EQ(history_pod({}), std::nullopt);
}

}  // namespace
}  // namespace kubex::decide::actuation::test
