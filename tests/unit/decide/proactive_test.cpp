#include "decide/proactive.h"

#include <gtest/gtest.h>

#include "fixtures.h"

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
