// The GpuModel subsystem over a ClusterContext's caches: counters, crash answers for the kubelet, Warning
// events, the sampler thread and the exporter.
#include "sim/gpu/gpu_model.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "sim/apiserver/api_server.h"
#include "sim/cluster/cluster_io.h"
#include "sim/cluster/context.h"
#include "test_pods.h"

using namespace kubex;
using namespace kubex::sim;
using namespace kubex::sim::gpu;
using namespace kubex::sim::gpu::testing;
using namespace std::chrono_literals;

namespace {

constexpr const char* kSm = "sim.kubex.ai/gpu-sm-percent";
constexpr const char* kMem = "sim.kubex.ai/gpu-memory-mib";

class GpuModelTest : public ::testing::Test {
 protected:
  void SetUp() override { make("None"); }

  void make(const std::string& isolation, std::chrono::milliseconds interval = 1000ms) {
    model.reset();
    ctx.reset();
    io.reset();
    api.reset();
    ApiServerOptions opts;
    opts.clock = &clock;
    api = std::make_unique<ApiServer>(opts);
    api->bootstrap(false);
    cluster::ClusterConfig config = cluster::ClusterConfig::defaults();
    config.memory_isolation = isolation;
    config.gpu_sample_interval = interval;
    io = std::make_unique<cluster::StoreIo>(*api);
    ctx = std::make_unique<cluster::ClusterContext>(*io, config);
    ctx->nodes().upsert(gpu_node("n1"));
    model = std::make_unique<GpuModel>(*ctx);
  }

  void add(const cluster::SimPod& p) { ctx->pods().upsert(shared(p)); }
  std::shared_ptr<const cluster::SimPod> get(const std::string& name, const std::string& ns = "default") {
    return ctx->pods().get(ns + "/" + name);
  }
  std::optional<std::string> crash(const std::string& name, common::TimePoint now) {
    auto p = get(name);
    return model->crash_reason(*p, p->containers.at(0), now);
  }

  nlohmann::json events() {
    return nlohmann::json::parse(api->call("GET", "/api/v1/namespaces/default/events").body)["items"];
  }

  common::FakeClock clock{kT0};
  std::unique_ptr<ApiServer> api;
  std::unique_ptr<cluster::StoreIo> io;
  std::unique_ptr<cluster::ClusterContext> ctx;
  std::unique_ptr<GpuModel> model;
};

}  // namespace

// REA-3, example X8: the `_total` counter is read through rate(), so it must integrate the gauge.
TEST_F(GpuModelTest, CounterIsTheIntegralOfTheGauge) {
  add(reservation("g1", "0"));
  add(make_pod(fraction_spec("f", 0.5, "g1", {{kSm, "step(40,80,10s)"}, {kMem, "4096"}})));
  for (int i = 0; i <= 10; ++i) model->sample(kT0 + std::chrono::seconds(i));
  auto s = model->samples();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_DOUBLE_EQ(s[0].sm_percent, 80);
  // 9 one-second intervals at 40, then one from 40 to 80 (trapezoid: 60).
  EXPECT_DOUBLE_EQ(s[0].sm_percent_seconds_total, 9 * 40 + 60);
  EXPECT_DOUBLE_EQ(s[0].memory_footprint_percent, 50);
  model->sample(kT0 + 12s);
  EXPECT_DOUBLE_EQ(model->samples()[0].sm_percent_seconds_total, 420 + 160);
  model->sample(kT0 + 12s);  // the same instant again adds nothing
  EXPECT_DOUBLE_EQ(model->samples()[0].sm_percent_seconds_total, 580);
}

TEST_F(GpuModelTest, RestartedOrReappearingContainersStartANewCounter) {
  add(reservation("g1", "0"));
  auto spec = fraction_spec("f", 0.5, "g1", {{kSm, "50"}});
  add(make_pod(spec));
  model->sample(kT0);
  model->sample(kT0 + 2s);
  EXPECT_DOUBLE_EQ(model->samples().at(0).sm_percent_seconds_total, 100);
  spec.restarts = 1;
  add(make_pod(spec));
  model->sample(kT0 + 3s);
  EXPECT_DOUBLE_EQ(model->samples().at(0).sm_percent_seconds_total, 0) << "a counter reset";
  model->sample(kT0 + 4s);
  EXPECT_DOUBLE_EQ(model->samples().at(0).sm_percent_seconds_total, 50);
  spec.running = false;
  add(make_pod(spec));
  model->sample(kT0 + 5s);
  EXPECT_TRUE(model->samples().empty()) << "only running containers are exported";
  spec.running = true;
  add(make_pod(spec));
  model->sample(kT0 + 6s);
  EXPECT_DOUBLE_EQ(model->samples().at(0).sm_percent_seconds_total, 0);
}

TEST_F(GpuModelTest, HamiCoreCrashesAFractionOverItsAllocationWhileItLasts) {
  make("HAMiCore");
  add(reservation("g1", "0"));
  add(make_pod(fraction_spec("big", 0.5, "g1", {{kMem, "steps(9000, 4000@5m)"}})));
  add(make_pod(fraction_spec("fine", 0.5, "g1", {{kMem, "8000"}})));
  // Asked about once a second by the kubelet, with no sample needed: the reason persists.
  for (int i = 0; i < 3; ++i) {
    auto r = crash("big", kT0 + std::chrono::seconds(i));
    ASSERT_TRUE(r.has_value());
    EXPECT_NE(r->find("9000 MiB working set exceeds the 8192 MiB allocation"), std::string::npos) << *r;
  }
  EXPECT_FALSE(crash("fine", kT0 + 1s));
  EXPECT_FALSE(crash("big", kT0 + 5min)) << "the working set fell below the allocation";
  // Containers that are not GPU containers never crash for GPU reasons.
  auto big = get("big");
  cluster::SimContainer other;
  other.name = "sidecar";
  EXPECT_FALSE(model->crash_reason(*big, other, kT0));
}

TEST_F(GpuModelTest, WithoutIsolationTheNewestPodOnAnOvercommittedGpuCrashes) {
  add(reservation("g1", "0"));
  add(make_pod(fraction_spec("older", 0.5, "g1", {{kMem, "10000"}})));
  auto newer = fraction_spec("newer", 0.5, "g1", {{kMem, "10000"}});
  newer.started = kT0 + 30s;
  add(make_pod(newer));
  EXPECT_FALSE(crash("newer", kT0 + 31s)) << "decided by the sampler";
  model->sample(kT0 + 31s);
  auto r = crash("newer", kT0 + 31s);
  ASSERT_TRUE(r.has_value());
  EXPECT_NE(r->find("over-committed"), std::string::npos) << *r;
  EXPECT_FALSE(crash("older", kT0 + 31s));
  // While it is in its crash loop (not running), the over-commit holds and so does the reason.
  newer.running = false;
  add(make_pod(newer));
  model->sample(kT0 + 32s);
  newer.running = true;
  newer.restarts = 1;
  add(make_pod(newer));
  EXPECT_TRUE(crash("newer", kT0 + 33s).has_value());
  // A fraction over its allocation but within the device does not crash without isolation.
  ctx->pods().remove("default/older");
  model->sample(kT0 + 34s);
  EXPECT_FALSE(crash("newer", kT0 + 34s));
}

TEST_F(GpuModelTest, WholeGpuContainersCrashBeyondTheirDevices) {
  add(make_pod(whole_spec("w", 1, "1", {{kMem, "20000"}})));
  auto r = crash("w", kT0);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, "CUDA out of memory: 20000 MiB working set exceeds the 16384 MiB of its 1 GPU");
}

TEST_F(GpuModelTest, InvalidAnnotationWarnsOnce) {
  add(reservation("g1", "0"));
  add(make_pod(fraction_spec("f", 0.5, "g1", {{kSm, "wave(1,2)"}})));
  model->sample(kT0);
  model->sample(kT0 + 1s);
  model->sample(kT0 + 2s);
  auto evs = events();
  ASSERT_EQ(evs.size(), 1u) << evs.dump();
  EXPECT_EQ(evs[0]["type"], "Warning");
  EXPECT_EQ(evs[0]["reason"], "InvalidGpuUsageAnnotation");
  EXPECT_EQ(evs[0]["count"], 1);
  EXPECT_EQ(evs[0]["involvedObject"]["name"], "f");
  std::string msg = evs[0]["message"];
  EXPECT_NE(msg.find("sim.kubex.ai/gpu-sm-percent"), std::string::npos) << msg;
  EXPECT_NE(msg.find("wave takes"), std::string::npos) << msg;
  EXPECT_DOUBLE_EQ(model->samples().at(0).sm_percent, 0) << "treated as absent";
}

TEST_F(GpuModelTest, RenderMetricsMatchesTheSamples) {
  add(reservation("g1", "0"));
  add(make_pod(fraction_spec("f", 0.5, "g1", {{kSm, "40"}, {kMem, "4096"}})));
  EXPECT_EQ(model->render_metrics().find("pod=\"f\""), std::string::npos)
      << "nothing before the first sample";
  model->sample(kT0);
  std::string text = model->render_metrics();
  EXPECT_NE(
      text.find(
          "kubex_gpu_container_memory_footprint_percent{namespace=\"default\",pod=\"f\",container=\"app\""),
      std::string::npos)
      << text;
  EXPECT_EQ(model->render_metrics(), text);
  // The exporter's own counter of samples taken, for waiting on samples rather than on time.
  EXPECT_NE(text.find("# TYPE kubex_sim_gpu_samples_total counter\nkubex_sim_gpu_samples_total 1\n"),
            std::string::npos)
      << text;
  model->sample(kT0 + std::chrono::seconds(1));
  EXPECT_NE(model->render_metrics().find("\nkubex_sim_gpu_samples_total 2\n"), std::string::npos);
}

TEST_F(GpuModelTest, SamplerThreadAndExporter) {
  make("None", 20ms);
  add(reservation("g1", "0"));
  add(make_pod(fraction_spec("f", 0.5, "g1", {{kSm, "40"}, {kMem, "4096"}})));
  auto port = model->listen("127.0.0.1:0");
  ASSERT_TRUE(port.has_value()) << port.error().str();
  model->start();
  model->start();  // idempotent
  httplib::Client client("127.0.0.1", *port);
  std::string body;
  auto deadline = std::chrono::steady_clock::now() + 60s;  // bounds a hang only
  while (std::chrono::steady_clock::now() < deadline) {
    auto res = client.Get("/metrics");
    if (res && res->status == 200 && res->body.find("pod=\"f\"") != std::string::npos) {
      body = res->body;
      break;
    }
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_NE(body.find("kubex_gpu_container_sm_utilization_percent{"), std::string::npos) << body;
  model->stop();
  model->stop();
  EXPECT_FALSE(client.Get("/metrics")) << "the exporter stops with the model";
}
