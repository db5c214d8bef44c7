// Prometheus text rendering and the plain-HTTP exporter.
#include "sim/gpu/exporter.h"

#include <gtest/gtest.h>
#include <httplib.h>

using namespace kubex::sim::gpu;

namespace {

Sample sample() {
  Sample s;
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

}  // namespace

TEST(RenderText, EveryFamilyWithHelpTypeAndLabels) {
  const std::string labels =
      "{namespace=\"team\",pod=\"infer-0\",container=\"app\",node=\"t4-node-0\",gpu_uuid=\"GPU-1\","
      "gpu_model=\"Tesla-T4\",gpu_allocation_type=\"fraction\"}";
  std::string text = render_text({sample()});
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
  // HELP precedes each TYPE; the output ends with a newline.
  EXPECT_NE(
      text.find("# HELP kubex_gpu_container_memory_footprint_percent GPU memory used by the container in "
                "percent of its allocation"),
      std::string::npos);
  EXPECT_EQ(text.back(), '\n');
}

TEST(RenderText, EmptyStillDeclaresTheFamilies) {
  std::string text = render_text({});
  EXPECT_NE(text.find("# TYPE kubex_gpu_container_sm_utilization_percent gauge"), std::string::npos);
  EXPECT_EQ(text.find("{"), std::string::npos);
}

TEST(RenderText, NumbersAndEscapes) {
  Sample s = sample();
  s.pod = "we\"ird\\pod\nname";
  s.sm_percent = 100.0 / 3;
  s.sm_percent_seconds_total = 1e20;
  std::string text = render_text({s});
  EXPECT_NE(text.find("pod=\"we\\\"ird\\\\pod\\nname\""), std::string::npos) << text;
  EXPECT_NE(text.find(" 33.333333333333336\n"), std::string::npos) << "shortest round-trip form";
  EXPECT_NE(text.find(" 1e+20\n"), std::string::npos);
  EXPECT_EQ(escape_label_value("plain"), "plain");
}

TEST(MetricsServer, ServesMetricsAndHealthz) {
  int renders = 0;
  MetricsServer server([&] {
    ++renders;
    return render_text({sample()});
  });
  auto port = server.listen("127.0.0.1:0");
  ASSERT_TRUE(port.has_value()) << port.error().str();
  httplib::Client client("127.0.0.1", *port);
  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  EXPECT_EQ(metrics->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(metrics->body, render_text({sample()}));
  auto health = client.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(health->body, "ok\n");
  auto other = client.Get("/nope");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 404);
  EXPECT_EQ(renders, 1);
  EXPECT_FALSE(server.listen("127.0.0.1:0").has_value()) << "listening twice";
  server.stop();
  server.stop();  // idempotent
}

TEST(MetricsServer, BadAddressesAreErrors) {
  MetricsServer server([] { return std::string(); });
  for (const char* bad : {"nonsense", "127.0.0.1:x", "127.0.0.1:70000", "127.0.0.1:", "127.0.0.1:-1"}) {
    auto r = server.listen(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().path, "metrics-listen");
  }
  // Stopping a server that never listened is a no-op; so is stopping one that is stopped right away.
  server.stop();
  MetricsServer quick([] { return std::string(); });
  ASSERT_TRUE(quick.listen("127.0.0.1:0").has_value());
  quick.stop();
}
