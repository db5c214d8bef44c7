// The sim.kubex.ai/gpu-* annotation patterns (docs/gpu-model.md).
#include "sim/gpu/usage_pattern.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

using namespace kubex::sim::gpu;
using namespace std::chrono_literals;

namespace {

struct Point {
  std::chrono::nanoseconds t;
  double want;
};

struct EvalCase {
  std::string text;
  std::vector<Point> points;
};

}  // namespace

TEST(UsagePattern, EvaluatesEveryFormOverTimeSinceStart) {
  const std::vector<EvalCase> cases = {
      {"40", {{0s, 40}, {1h, 40}}},
      {" 12.5 ", {{0s, 12.5}}},
      {"0", {{5min, 0}}},
      {"step(20,80,5m)", {{0s, 20}, {4min + 59s, 20}, {5min, 80}, {3h, 80}}},
      {"step( 20 , 80 , 1m30s )", {{89s, 20}, {90s, 80}}},
      {"steps(20, 80@5m, 40@15m)", {{0s, 20}, {5min, 80}, {14min, 80}, {15min, 40}, {10h, 40}}},
      {"steps(7, 9@1s)", {{999ms, 7}, {1s, 9}}},
      {"ramp(10, 90, 10m)", {{0s, 10}, {5min, 50}, {10min, 90}, {20min, 90}}},
      {"ramp(90, 10, 100s)", {{25s, 70}, {100s, 10}}},
      {"wave(20, 80, 10m)", {{0s, 20}, {150s, 50}, {5min, 80}, {450s, 50}, {10min, 20}, {15min, 80}}},
      {"wave(20, 80, 10m, 5m)", {{0s, 80}, {5min, 20}}},
      {"square(20, 80, 10m)", {{0s, 20}, {4min, 20}, {5min, 80}, {9min, 80}, {10min, 20}, {25min, 80}}},
      // Before the start (clock skew) counts as the start.
      {"step(20,80,5m)", {{-10s, 20}}},
      {"wave(20, 80, 10m)", {{-1h, 20}}},
  };
  for (const auto& c : cases) {
    auto p = UsagePattern::parse(c.text);
    ASSERT_TRUE(p.has_value()) << c.text << ": " << p.error().str();
    for (const auto& pt : c.points) {
      EXPECT_NEAR(p->at(pt.t), pt.want, 1e-9) << c.text << " at " << pt.t.count() << "ns";
    }
  }
}

TEST(UsagePattern, ReportsKinds) {
  EXPECT_EQ(UsagePattern::parse("40")->kind(), UsagePattern::Kind::kConstant);
  EXPECT_EQ(UsagePattern::parse("step(1,2,3s)")->kind(), UsagePattern::Kind::kSteps);
  EXPECT_EQ(UsagePattern::parse("steps(1,2@3s)")->kind(), UsagePattern::Kind::kSteps);
  EXPECT_EQ(UsagePattern::parse("ramp(1,2,3s)")->kind(), UsagePattern::Kind::kRamp);
  EXPECT_EQ(UsagePattern::parse("wave(1,2,3s)")->kind(), UsagePattern::Kind::kWave);
  EXPECT_EQ(UsagePattern::parse("square(1,2,3s)")->kind(), UsagePattern::Kind::kSquare);
  EXPECT_EQ(UsagePattern::constant(3).at(1h), 3);
}

TEST(UsagePattern, RejectsBadTextWithAClearMessage) {
  struct Bad {
    std::string text, fragment;  // the error message contains `fragment`
  };
  const std::vector<Bad> cases = {
      {"", "empty value"},
      {"   ", "empty value"},
      {"abc", "invalid number \"abc\""},
      {"40%", "invalid number"},
      {"+5", "invalid number"},
      {"-5", "negative value"},
      {"nan", "invalid number"},
      {"inf", "invalid number"},
      {"1e999", "invalid number"},
      {"step(20,80)", "step takes (a, b, t), got 2 argument(s)"},
      {"step(20,80,5m,1m)", "step takes (a, b, t)"},
      {"step(20,80,5)", "missing unit"},
      {"step(20,80,0s)", "must be positive"},
      {"step(20,-80,5m)", "negative value"},
      {"step(20,80,5m", "missing \")\""},
      {"step((20),80,5m)", "nested parentheses"},
      {"steps(20)", "steps takes (a, b@t, c@u, ...)"},
      {"steps(20, 80)", "expected VALUE@TIME, got \"80\""},
      {"steps(20, 80@5m, 40@5m)", "step times must increase"},
      {"steps(20, 80@5m, 40@1m)", "step times must increase"},
      {"steps(20, x@5m)", "invalid number \"x\""},
      {"ramp(1,2)", "ramp takes (a, b, duration)"},
      {"ramp(1,2,-1m)", "must be positive"},
      {"wave(20,80)", "wave takes (a, b, period[, phase])"},
      {"wave(20,80,10m,1m,1m)", "wave takes"},
      {"wave(20,80,0s)", "must be positive"},
      {"wave(20,80,10m,-1m)", "must not be negative"},
      {"wave(20,80,10m,x)", "invalid duration \"x\""},
      {"square(20,80)", "square takes (a, b, period)"},
      {"sine(1,2,3m)", "unknown function \"sine\""},
      {"(1,2,3m)", "unknown function \"\""},
      {std::string(2000, '1'), "longer than 1024 characters"},
  };
  for (const auto& c : cases) {
    auto p = UsagePattern::parse(c.text);
    ASSERT_FALSE(p.has_value()) << "accepted: " << c.text;
    EXPECT_NE(p.error().message.find(c.fragment), std::string::npos)
        << c.text.substr(0, 40) << " -> " << p.error().message;
  }
}

TEST(UsagePattern, TooManyStepsAreRejected) {
  std::string text = "steps(1";
  for (int i = 1; i <= 100; ++i) text += ", 2@" + std::to_string(i) + "s";
  text += ")";
  EXPECT_FALSE(UsagePattern::parse(text).has_value());
  std::string ok = "steps(1";
  for (int i = 1; i <= 99; ++i) ok += ", 2@" + std::to_string(i) + "s";
  ok += ")";
  EXPECT_TRUE(UsagePattern::parse(ok).has_value());
}
