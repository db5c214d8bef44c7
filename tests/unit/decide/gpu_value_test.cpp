#include "decide/gpu_value.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

using namespace kubex::decide;
using nlohmann::json;

// GPU-1: rounding up is ceil(x*100 - 1e-9), so binary noise never adds 0.01.
TEST(GpuValue, RoundUpIgnoresBinaryNoise) {
  struct Case {
    double x;
    Hundredths want;
  } cases[] = {
      {0.4 * 1.2, 48},                                                  // GPU-1 example: 0.48, not 0.49
      {0.3 * 1.2, 36},                                                  // PRO-3 example
      {0.25 * 1.2, 30}, {0.7, 70},  {0.70000001, 71},                   // a real excess still rounds up
      {0.481, 49},      {1.0, 100}, {2.24, 224},      {0.1 + 0.2, 30},  // 0.30000000000000004
      {0.0, 0},         {-1.0, 0},
  };
  for (const auto& c : cases) EXPECT_EQ(round_up(c.x), c.want) << c.x;  // GPU-1
}

// GPU-1: rounding down is floor(x*100 + 1e-9).
TEST(GpuValue, RoundDownIgnoresBinaryNoise) {
  struct Case {
    double x;
    Hundredths want;
  } cases[] = {
      {0.3 * 0.9, 27},  // VLM-3: 0.27 (0.26999999999999996 in binary)
      {0.5 * 0.9, 45}, {0.25 * 0.9, 22}, {0.29, 29}, {0.999, 99}, {1.0, 100}, {0.0, 0},
  };
  for (const auto& c : cases) EXPECT_EQ(round_down(c.x), c.want) << c.x;  // GPU-1
}

// GPU-2: desired values are rounded UP to 0.01, with a minimum of 0.01.
TEST(GpuValue, DesiredValueHasMinimumOneHundredth) {
  EXPECT_EQ(desired_value(0.001), 1);  // GPU-2
  EXPECT_EQ(desired_value(0.0), 1);    // GPU-2 minimum
  EXPECT_EQ(desired_value(0.011), 2);  // GPU-2 rounds up
  EXPECT_EQ(desired_value(Hundredths{0}), 1);
  EXPECT_EQ(desired_value(Hundredths{70}), 70);
  EXPECT_EQ(desired_value(1e300), kMaxHundredths);  // saturates, never overflows
}

// GPU-2: the shortest decimal string, never "0.70" or "1.0".
TEST(GpuValue, FormatsShortestDecimal) {
  struct Case {
    Hundredths h;
    const char* want;
  } cases[] = {{48, "0.48"}, {70, "0.7"}, {100, "1"}, {224, "2.24"}, {1, "0.01"},
               {5, "0.05"},  {10, "0.1"}, {200, "2"}, {250, "2.5"},  {0, "0"}};
  for (const auto& c : cases) EXPECT_EQ(format_gpu(c.h), c.want);  // GPU-2
}

// ADM-8 / ADM-11: ceil(d) whole GPUs.
TEST(GpuValue, WholeGpusIsCeiling) {
  EXPECT_EQ(whole_gpus(70), 1);
  EXPECT_EQ(whole_gpus(100), 1);
  EXPECT_EQ(whole_gpus(101), 2);
  EXPECT_EQ(whole_gpus(224), 3);  // X4: 2.24 -> 3 GPUs
  EXPECT_EQ(whole_gpus(0), 0);
  EXPECT_EQ(from_whole(2), 200);
}

// GPU-3: quantities ("0.25", "500m", "1", 4) convert exactly, rounding up to 0.01.
TEST(GpuValue, QuantitiesConvertExactly) {
  auto h = [](const char* s) { return hundredths_of(*kubex::common::Quantity::parse(s)); };
  EXPECT_EQ(h("0.25"), 25);   // GPU-3
  EXPECT_EQ(h("500m"), 50);   // GPU-3
  EXPECT_EQ(h("1"), 100);     // GPU-3
  EXPECT_EQ(h("4"), 400);     // GPU-3
  EXPECT_EQ(h("0.255"), 26);  // GPU-2 rounds up
  EXPECT_EQ(h("1m"), 1);
  EXPECT_EQ(h("0"), 0);
  EXPECT_EQ(hundredths_of(*kubex::common::Quantity::from_json(json(4))), 400);
}

// ADM-5: gpu-fraction must parse and lie strictly inside (0, 1).
TEST(GpuValue, ParsesGpuFraction) {
  EXPECT_EQ(*parse_gpu_fraction("0.25"), 25);
  EXPECT_EQ(*parse_gpu_fraction("0.5"), 50);
  EXPECT_EQ(*parse_gpu_fraction(".5"), 50);
  EXPECT_EQ(*parse_gpu_fraction("0.001"), 1);
  EXPECT_EQ(*parse_gpu_fraction("0.999"), 99);  // kept a fraction
  for (const char* bad :
       {"", "1", "0", "1.5", "-0.5", "abc", "0.5x", " 0.5", "5e-1", "0.5.1", ".", "nan", "inf"}) {
    EXPECT_FALSE(parse_gpu_fraction(bad).has_value()) << bad;  // ADM-5
  }
}

// SPEC §2 / PRO-6: desired GPU values are a number or a decimal string > 0.
TEST(GpuValue, ParsesJsonGpuValues) {
  EXPECT_EQ(*parse_gpu_json(json("0.48")), 48);
  EXPECT_EQ(*parse_gpu_json(json(0.36)), 36);
  EXPECT_EQ(*parse_gpu_json(json(2)), 200);
  EXPECT_EQ(*parse_gpu_json(json("1.3")), 130);
  EXPECT_EQ(*parse_gpu_json(json("0.001")), 1);  // GPU-2 minimum
  EXPECT_EQ(parse_gpu_json(json(0)).error().message, "must be > 0");
  EXPECT_EQ(parse_gpu_json(json("0")).error().message, "must be > 0");
  EXPECT_EQ(parse_gpu_json(json(-0.5)).error().message, "must be > 0");
  EXPECT_EQ(parse_gpu_json(json("500m")).error().message, "must be a number or a decimal string");
  EXPECT_EQ(parse_gpu_json(json(true)).error().message, "must be a number or a decimal string");
  EXPECT_EQ(parse_gpu_json(json::object()).error().message, "must be a number or a decimal string");
}
