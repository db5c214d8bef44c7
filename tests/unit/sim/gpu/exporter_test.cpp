// The plain-HTTP exporter of the GPU model, serving api::render_gpu_series.
#include "sim/gpu/exporter.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include "api/gpu_series.h"
#include "sim/gpu/sample.h"

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

// The rendering itself is api::render_gpu_series (tests/unit/api/gpu_series_test.cpp).

TEST(MetricsServer, ServesMetricsAndHealthz) {
  int renders = 0;
  MetricsServer server([&] {
    ++renders;
    return kubex::api::render_gpu_series({sample()});
  });
  auto port = server.listen("127.0.0.1:0");
  ASSERT_TRUE(port.has_value()) << port.error().str();
  httplib::Client client("127.0.0.1", *port);
  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  EXPECT_EQ(metrics->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(metrics->body, kubex::api::render_gpu_series({sample()}));
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
