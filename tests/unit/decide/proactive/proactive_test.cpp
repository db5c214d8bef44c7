#include "decide/proactive/proactive.h"

#include <gtest/gtest.h>

#include "../fixtures.h"
#include "decide/desired_annotations.h"

using namespace kubex;
using namespace kubex::decide;
using namespace kubex::decide::test;

// PRO-3: max(compute, memory) x (1 + headroom/100), rounded UP to 0.01, then clamped.
TEST(Proactive, ValueAndClamp) {
  api::StrategySpec spec = kai_strategy().spec;  // ceiling "1"
  // SPEC example: SM p95 30 % and memory 80 % of a 0.25 share (0.20 GPU) -> 0.36.
  ProactiveValue v = proactive_value(0.30, 0.80 * 0.25, 20, spec, "app");
  EXPECT_EQ(format_gpu(v.gpu), "0.36");  // PRO-3
  EXPECT_EQ(v.clamp, Clamp::kNone);
  EXPECT_EQ(format_gpu(proactive_value(0.4, 0.1, 20, spec, "app").gpu), "0.48");  // GPU-1 guard
  EXPECT_EQ(format_gpu(proactive_value(0.0, 0.0, 20, spec, "app").gpu), "0.01");  // GPU-2 minimum
  EXPECT_EQ(format_gpu(proactive_value(0.5, 0.2, 0, spec, "app").gpu), "0.5");
  v = proactive_value(0.9, 0.2, 20, spec, "app");
  EXPECT_EQ(format_gpu(v.gpu), "1");  // 1.08 clamped to the ceiling
  EXPECT_EQ(v.clamp, Clamp::kCeiling);
  spec.gpu_requests.bounds.floor = q("0.1");
  spec.gpu_requests.containers["app"].floor = q("0.2");
  v = proactive_value(0.05, 0.01, 20, spec, "app");
  EXPECT_EQ(format_gpu(v.gpu), "0.2");  // the container entry wins (ADM-7)
  EXPECT_EQ(v.clamp, Clamp::kFloor);
  EXPECT_EQ(format_gpu(proactive_value(0.05, 0.01, 20, spec, "other").gpu), "0.1");
}

// PRO-6: ConfigMap values are clamped as in PRO-3.
TEST(Proactive, ConfigMapValueClamp) {
  const api::StrategySpec spec = kai_strategy().spec;
  EXPECT_EQ(clamp_proactive(150, spec, "app").gpu, 100);
  EXPECT_EQ(clamp_proactive(150, spec, "app").clamp, Clamp::kCeiling);
  EXPECT_EQ(clamp_proactive(40, spec, "app").gpu, 40);
}

// PRO-6: a JSON list of {namespace, kind, name, container, gpu}; gpu a number or decimal string > 0;
// invalid entries skipped and reported; the last duplicate wins.
TEST(Proactive, ParsesRecommendationsDocument) {
  const auto set = parse_recommendations(R"([
    {"namespace":"ml","kind":"Deployment","name":"train","container":"app","gpu":"0.3"},
    {"namespace":"ml","kind":"Deployment","name":"serve","container":"server","gpu":0.455},
    {"namespace":"ml","kind":"Deployment","name":"train","container":"app","gpu":0.4},
    {"namespace":"ml","kind":"Pod","name":"x","container":"app","gpu":"0.3"},
    {"namespace":"ml","kind":"StatefulSet","name":"db","container":"app","gpu":0},
    {"namespace":"ml","kind":"Model","name":"opt","container":"server","gpu":"half"},
    {"kind":"Job","name":"j","container":"c","gpu":1},
    "not an object",
    {"namespace":"ml","kind":"Model","name":"opt","container":"server","gpu":"1.5","extra":true}
  ])");
  ASSERT_TRUE(set.has_value());
  EXPECT_EQ(set->entries.size(), 3u);
  EXPECT_EQ(set->accepted, 4u);
  EXPECT_EQ(*set->find({"ml", "Deployment", "train", "app"}), 40);     // PRO-6: the last one wins
  EXPECT_EQ(*set->find({"ml", "Deployment", "serve", "server"}), 46);  // GPU-2 rounds up
  EXPECT_EQ(*set->find({"ml", "Model", "opt", "server"}), 150);
  EXPECT_EQ(set->find({"ml", "Pod", "x", "app"}), nullptr);
  std::vector<std::string> problems;
  for (const auto& e : set->problems) problems.push_back(e.str());
  EXPECT_EQ(
      problems,
      (std::vector<std::string>{
          "[3].kind: unsupported value \"Pod\": supported values: \"Deployment\", \"StatefulSet\", "
          "\"DaemonSet\", \"Job\", \"CronJob\", \"Rollout\", \"AnalysisRun\", \"StrimziPodSet\", \"Model\"",
          "[4].gpu: must be > 0",
          "[5].gpu: must be a number or a decimal string",
          "[6].namespace: required",
          "[7]: must be an object",
      }));  // PRO-6: invalid entries reported
}

// PRO-6: a document that is not an array (or not JSON) is an error; an empty array is a valid empty set.
TEST(Proactive, RejectsNonArrayDocuments) {
  EXPECT_EQ(parse_recommendations(R"({"namespace":"ml"})").error().message,
            "recommendations.json: must be a JSON array");
  EXPECT_EQ(parse_recommendations("[{").error().message, "recommendations.json: not valid JSON");
  EXPECT_EQ(parse_recommendations("").error().message, "recommendations.json: not valid JSON");
  const auto empty = parse_recommendations("[]");
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(empty->entries.empty());
  EXPECT_TRUE(empty->problems.empty());
}

// PRO-6: a negative value is a decimal string that is not > 0 ("-1" must say so, as 0 and -0.5 do).
TEST(Proactive, NegativeGpuMustBePositive) {
  const auto set = parse_recommendations(R"([
    {"namespace":"ml","kind":"Deployment","name":"a","container":"app","gpu":"-1"},
    {"namespace":"ml","kind":"Deployment","name":"b","container":"app","gpu":-0.5},
    {"namespace":"ml","kind":"Deployment","name":"c","container":"app","gpu":"-x"}
  ])");
  ASSERT_TRUE(set.has_value());
  std::vector<std::string> problems;
  for (const auto& e : set->problems) problems.push_back(e.str());
  EXPECT_EQ(problems, (std::vector<std::string>{"[0].gpu: must be > 0", "[1].gpu: must be > 0",
                                                "[2].gpu: must be a number or a decimal string"}));
  EXPECT_EQ(parse_gpu_json(json("-1")).error().message, "must be > 0");
  EXPECT_EQ(parse_gpu_json(json("-0.25")).error().message, "must be > 0");
  EXPECT_EQ(parse_gpu_json(json("--1")).error().message, "must be a number or a decimal string");
}

// PRO-6: lastCount is the accepted entries, repeats included, and the RecommendationsLoaded message starts
// with the same number; it says how many remain once repeats are resolved and which entries were skipped.
TEST(Proactive, LoadedMessageCountsWhatLastCountCounts) {
  const auto set = parse_recommendations(R"([
    {"namespace":"ml","kind":"Deployment","name":"infer","container":"app","gpu":"0.35"},
    {"namespace":"ml","kind":"Deployment","name":"infer","container":"app","gpu":0.45},
    {"namespace":"ml","kind":"Deployment","name":"train","container":"app","gpu":"0.5"},
    {"namespace":"ml","kind":"Deployment","name":"other","container":"app","gpu":"-1"}
  ])");
  ASSERT_TRUE(set.has_value());
  EXPECT_EQ(set->accepted, 3u);  // lastCount
  EXPECT_EQ(set->entries.size(), 2u);
  EXPECT_EQ(recommendations_loaded_message(*set, "kubex/recs"),
            "loaded 3 recommendations from ConfigMap kubex/recs (2 after repeats: the last one wins); "
            "skipped 1 invalid entry: [3].gpu: must be > 0");
  const auto clean = parse_recommendations(R"([
    {"namespace":"ml","kind":"Deployment","name":"infer","container":"app","gpu":"0.35"}])");
  EXPECT_EQ(recommendations_loaded_message(*clean, "kubex/recs"),
            "loaded 1 recommendations from ConfigMap kubex/recs");
  // An entry with two problems is one skipped entry.
  const auto bad = parse_recommendations(R"([{"kind":"Pod","gpu":0},{"namespace":"ml"}])");
  const std::string m = recommendations_loaded_message(*bad, "kubex/recs");
  EXPECT_EQ(m.substr(0, m.find(':')),
            "loaded 0 recommendations from ConfigMap kubex/recs; skipped 2 invalid entries");
}

// OBS-5: kubex_gpu_recommendations_total directions of one owner write: initial for a container with no
// value before, upsize / downsize for a changed value, nothing for an unchanged one (compared as GPU-2
// values, so "0.5" and 0.5 are the same).
TEST(Proactive, RecommendationDirections) {
  using V = std::vector<std::string>;
  EXPECT_EQ(gpu_recommendation_directions(std::nullopt, R"({"app":{"gpu":"0.45"}})"), V{"initial"});
  EXPECT_EQ(gpu_recommendation_directions(R"({"app":{"gpu":"0.35"}})", R"({"app":{"gpu":"0.45"}})"),
            V{"upsize"});
  EXPECT_EQ(gpu_recommendation_directions(R"({"app":{"gpu":"0.45"},"b":{"gpu":"1"}})",
                                          R"({"app":{"gpu":"0.3"},"b":{"gpu":1},"c":{"gpu":"2"}})"),
            (V{"downsize", "initial"}));
  EXPECT_EQ(gpu_recommendation_directions("{oops", R"({"app":{"gpu":"0.45"}})"), V{"initial"});
  EXPECT_EQ(gpu_recommendation_directions(R"({"app":{"cpu":"1"}})", R"({"app":{"cpu":"2","gpu":"1"}})"),
            V{"initial"});
  EXPECT_TRUE(gpu_recommendation_directions(R"({"app":{"gpu":"0.45"}})", R"({"app":{"cpu":"2"}})").empty());
}
