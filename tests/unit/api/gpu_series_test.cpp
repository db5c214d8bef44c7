// The per-container GPU series both exporters serve (TEL-3, docs/gpu-model.md): the footprint rule and the
// text rendering (moved here from kubex-sim's exporter, whose tests they were).
#include "api/gpu_series.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace kubex::api {
namespace {

constexpr std::int64_t kMiB = 1024 * 1024;
constexpr std::int64_t kGiB = 1024 * kMiB;

GpuContainerSample sample() {
  GpuContainerSample s;
  s.ns = "team";
  s.pod = "infer-0";
  s.container = "app";
  s.node = "t4-node-0";
  s.gpu_uuid = "GPU-1";
  s.gpu_model = "Tesla-T4";
  s.allocation_type = "fraction";
  s.sm_percent = 40;
  s.sm_percent_seconds_total = 1234.5;
  s.memory_footprint_percent = 50;
  s.memory_bytes = 4096LL << 20;
  s.memory_total_bytes = 8192LL << 20;
  return s;
}

const char* const kFamilies[] = {
    "kubex_gpu_container_sm_utilization_percent gauge",
    "kubex_gpu_container_sm_utilization_percent_seconds_total counter",
    "kubex_gpu_container_memory_footprint_percent gauge",
    "kubex_gpu_container_memory_bytes gauge",
    "kubex_gpu_container_memory_total_bytes gauge",
};

// TEL-3: a KAI fraction pod's allocation is gpu-fraction × device memory.
TEST(GpuAllocationBytes, FractionOfTheDevice) {
  EXPECT_EQ(gpu_allocation_bytes("fraction", 0.5, 80 * kGiB), 40 * kGiB);
  EXPECT_EQ(gpu_allocation_bytes("fraction", 0.5, 16384 * kMiB), 8192 * kMiB);
  EXPECT_EQ(gpu_allocation_bytes("fraction", 0.25, 80 * kGiB), 20 * kGiB);
}

// TEL-3: a whole-GPU pod's allocation on each device is that one device, whatever the fraction field says.
TEST(GpuAllocationBytes, WholeGpuIsOneDevice) {
  EXPECT_EQ(gpu_allocation_bytes("whole", 0, 80 * kGiB), 80 * kGiB);
  EXPECT_EQ(gpu_allocation_bytes("whole", 0.5, 16384 * kMiB), 16384 * kMiB);
  EXPECT_EQ(gpu_allocation_bytes("fraction", 1, 80 * kGiB), 80 * kGiB);
}

// TEL-3: rounded down to a byte; a product that is whole in decimal keeps its last byte despite binary fractions.
TEST(GpuAllocationBytes, RoundsDownToAByte) {
  // 0.3 × 16384 MiB = 5153960755.2 bytes.
  EXPECT_EQ(gpu_allocation_bytes("fraction", 0.3, 16384 * kMiB), 5153960755);
  // 0.63 × 16384 MiB = 10823317585.92 bytes: down, not to the nearest.
  EXPECT_EQ(gpu_allocation_bytes("fraction", 0.63, 16384 * kMiB), 10823317585);
  // 0.29 × 100 GiB is exactly 29 GiB, although 0.29 × 107374182400.0 is a hair below it in doubles.
  ASSERT_LT(0.29 * static_cast<double>(100 * kGiB), static_cast<double>(29 * kGiB));
  EXPECT_EQ(gpu_allocation_bytes("fraction", 0.29, 100 * kGiB), 29 * kGiB);
  EXPECT_EQ(gpu_allocation_bytes("fraction", 0.1, 10), 1);
  EXPECT_EQ(gpu_allocation_bytes("fraction", 0.7, 10), 7);
  for (int hundredths = 1; hundredths < 100; ++hundredths) {
    // Whole in decimal: hundredths × 100 GiB / 100.
    EXPECT_EQ(gpu_allocation_bytes("fraction", hundredths / 100.0, 100 * kGiB), hundredths * kGiB) << hundredths;
  }
}

TEST(GpuAllocationBytes, NothingToBeRelativeTo) {
  EXPECT_EQ(gpu_allocation_bytes("whole", 0, 0), 0);
  EXPECT_EQ(gpu_allocation_bytes("fraction", 0.5, 0), 0);
  EXPECT_EQ(gpu_allocation_bytes("fraction", 0.5, -1), 0);
  EXPECT_EQ(gpu_allocation_bytes("fraction", 0, 80 * kGiB), 0);
  EXPECT_EQ(gpu_allocation_bytes("fraction", -0.5, 80 * kGiB), 0);
  EXPECT_EQ(gpu_allocation_bytes("fraction", std::numeric_limits<double>::quiet_NaN(), 80 * kGiB), 0);
}

// TEL-3 (docs/gpu-model.md): 4096 MiB on 0.5 of a 16384 MiB GPU -> 50; a whole GPU is relative to one device.
TEST(GpuFootprintPercent, MemoryOverTheAllocation) {
  EXPECT_DOUBLE_EQ(gpu_footprint_percent(4096 * kMiB, gpu_allocation_bytes("fraction", 0.5, 16384 * kMiB)), 50);
  EXPECT_DOUBLE_EQ(gpu_footprint_percent(4096 * kMiB, gpu_allocation_bytes("whole", 0, 16384 * kMiB)), 25);
  EXPECT_DOUBLE_EQ(gpu_footprint_percent(60 * kGiB, gpu_allocation_bytes("fraction", 0.5, 80 * kGiB)), 150)
      << "a pod above its allocation reads above 100";
  EXPECT_DOUBLE_EQ(gpu_footprint_percent(0, 8192 * kMiB), 0);
  EXPECT_NEAR(gpu_footprint_percent(20000 * kMiB, 16384 * kMiB), 122.0703125, 1e-9);
  EXPECT_EQ(gpu_footprint_percent(100, 0), 0);
  EXPECT_EQ(gpu_footprint_percent(100, -5), 0);
}

TEST(RenderGpuSeries, EveryFamilyWithHelpTypeAndLabels) {
  const std::string labels =
      "{namespace=\"team\",pod=\"infer-0\",container=\"app\",node=\"t4-node-0\",gpu_uuid=\"GPU-1\","
      "gpu_model=\"Tesla-T4\",gpu_allocation_type=\"fraction\"}";
  std::string text = render_gpu_series({sample()});
  const std::vector<std::string> want = {
      "# TYPE kubex_gpu_container_sm_utilization_percent gauge\n",
      "kubex_gpu_container_sm_utilization_percent" + labels + " 40\n",
      "# TYPE kubex_gpu_container_sm_utilization_percent_seconds_total counter\n",
      "kubex_gpu_container_sm_utilization_percent_seconds_total" + labels + " 1234.5\n",
      "# TYPE kubex_gpu_container_memory_footprint_percent gauge\n",
      "kubex_gpu_container_memory_footprint_percent" + labels + " 50\n",
      "# TYPE kubex_gpu_container_memory_bytes gauge\n",
      "kubex_gpu_container_memory_bytes" + labels + " 4294967296\n",
      "# TYPE kubex_gpu_container_memory_total_bytes gauge\n",
      "kubex_gpu_container_memory_total_bytes" + labels + " 8589934592\n",
  };
  std::size_t pos = 0;
  for (const auto& w : want) {
    auto at = text.find(w, pos);
    ASSERT_NE(at, std::string::npos) << "missing (in order): " << w << "\n" << text;
    pos = at + w.size();
  }
  EXPECT_NE(
      text.find("# HELP kubex_gpu_container_memory_footprint_percent GPU memory used by the container in "
                "percent of its allocation"),
      std::string::npos);
  EXPECT_EQ(text.back(), '\n');
}

// Every family is declared with HELP then TYPE even with no samples, so a scrape of an idle node is valid.
TEST(RenderGpuSeries, EmptyStillDeclaresEveryFamily) {
  std::string text = render_gpu_series({});
  for (const char* family : kFamilies) {
    std::string name(family, std::string(family).find(' '));
    auto help = text.find("# HELP " + name + " ");
    auto type = text.find(std::string("# TYPE ") + family + "\n");
    ASSERT_NE(help, std::string::npos) << name;
    ASSERT_NE(type, std::string::npos) << name;
    EXPECT_LT(help, type) << name;
  }
  EXPECT_EQ(text.find('{'), std::string::npos);
  // Only comment lines.
  std::size_t lines = 0;
  for (std::size_t at = 0; at < text.size(); at = text.find('\n', at) + 1) {
    EXPECT_EQ(text[at], '#') << text.substr(at);
    ++lines;
  }
  EXPECT_EQ(lines, 10u);
}

// The counter family carries the percent-seconds, one series per sample in the order given.
TEST(RenderGpuSeries, CounterFamilyAndOrderOfSamples) {
  GpuContainerSample a = sample(), b = sample();
  a.pod = "a";
  a.sm_percent_seconds_total = 0;
  b.pod = "b";
  b.sm_percent_seconds_total = 86400.25;
  std::string text = render_gpu_series({b, a});
  const std::string counter = "kubex_gpu_container_sm_utilization_percent_seconds_total{namespace=\"team\",pod=\"";
  auto at_b = text.find(counter + "b\"");
  auto at_a = text.find(counter + "a\"");
  ASSERT_NE(at_b, std::string::npos);
  ASSERT_NE(at_a, std::string::npos);
  EXPECT_LT(at_b, at_a) << "the order of the samples, not sorted";
  EXPECT_NE(text.find("gpu_allocation_type=\"fraction\"} 86400.25\n", at_b), std::string::npos);
  EXPECT_NE(text.find("gpu_allocation_type=\"fraction\"} 0\n", at_a), std::string::npos);
  EXPECT_NE(text.find("# TYPE kubex_gpu_container_sm_utilization_percent_seconds_total counter\n"),
            std::string::npos);
}

TEST(RenderGpuSeries, NumberFormatting) {
  GpuContainerSample s = sample();
  s.sm_percent = 100.0 / 3;
  s.sm_percent_seconds_total = 1e20;
  s.memory_footprint_percent = std::numeric_limits<double>::quiet_NaN();
  s.memory_bytes = 80 * kGiB;
  s.memory_total_bytes = 5153960755;
  std::string text = render_gpu_series({s});
  EXPECT_NE(text.find(" 33.333333333333336\n"), std::string::npos) << "shortest round-trip form";
  EXPECT_NE(text.find(" 1e+20\n"), std::string::npos);
  const std::string labels =
      "{namespace=\"team\",pod=\"infer-0\",container=\"app\",node=\"t4-node-0\",gpu_uuid=\"GPU-1\","
      "gpu_model=\"Tesla-T4\",gpu_allocation_type=\"fraction\"}";
  EXPECT_NE(text.find("kubex_gpu_container_memory_footprint_percent" + labels + " NaN\n"), std::string::npos);
  EXPECT_NE(text.find("} 85899345920\n"), std::string::npos) << "bytes as integers, no exponent";
  EXPECT_NE(text.find("} 5153960755\n"), std::string::npos);

  s.sm_percent = std::numeric_limits<double>::infinity();
  s.sm_percent_seconds_total = -std::numeric_limits<double>::infinity();
  text = render_gpu_series({s});
  EXPECT_NE(text.find("kubex_gpu_container_sm_utilization_percent" + labels + " +Inf\n"), std::string::npos) << text;
  EXPECT_NE(text.find("} -Inf\n"), std::string::npos);
}

TEST(RenderGpuSeries, LabelValuesAreEscaped) {
  GpuContainerSample s = sample();
  s.pod = "we\"ird\\pod\nname";
  s.gpu_model = "NVIDIA \"H100\"";
  std::string text = render_gpu_series({s});
  EXPECT_NE(text.find("pod=\"we\\\"ird\\\\pod\\nname\""), std::string::npos) << text;
  EXPECT_NE(text.find("gpu_model=\"NVIDIA \\\"H100\\\"\""), std::string::npos) << text;
}

TEST(EscapeLabelValue, BackslashQuoteNewline) {
  EXPECT_EQ(escape_label_value("plain"), "plain");
  EXPECT_EQ(escape_label_value(""), "");
  EXPECT_EQ(escape_label_value("a\\b"), "a\\\\b");
  EXPECT_EQ(escape_label_value("a\"b"), "a\\\"b");
  EXPECT_EQ(escape_label_value("a\nb"), "a\\nb");
  EXPECT_EQ(escape_label_value("tab\tstays"), "tab\tstays");
  EXPECT_EQ(escape_label_value("\\\"\n"), "\\\\\\\"\\n");
}

}  // namespace
}  // namespace kubex::api
