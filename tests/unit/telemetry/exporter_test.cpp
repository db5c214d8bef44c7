// The exporter's pass over a fake NVML (the interface, no dlopen) and a fake proc root: the series it serves, the
// device gauges, NVML errors counted by call and the device left out of that pass, unmapped processes by reason.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "telemetry/exporter.h"

namespace kubex::telemetry {
namespace {

namespace fs = std::filesystem;
constexpr std::uint64_t kGi = 1024ULL * 1024 * 1024;
const std::string kIdA(64, 'a'), kIdB(64, 'b');

struct FakeNvml : Nvml {
  std::vector<NvmlDeviceInfo> devices;
  std::vector<std::vector<NvmlProcess>> procs;
  std::vector<std::vector<NvmlProcessUtilization>> util;
  int fail_memory_on = -1;
  common::Result<std::string> driver_version() override { return std::string("550.54.15"); }
  common::Result<unsigned> device_count() override { return static_cast<unsigned>(devices.size()); }
  common::Result<NvmlDeviceInfo> device(unsigned i) override {
    if (static_cast<int>(i) == fail_memory_on) return common::fail("nvmlDeviceGetMemoryInfo(" + std::to_string(i) + "): GPU is lost");
    return devices[i];
  }
  common::Result<std::vector<NvmlProcess>> processes(unsigned i) override { return procs[i]; }
  common::Result<std::vector<NvmlProcessUtilization>> process_utilization(unsigned i, std::uint64_t) override {
    return util[i];
  }
  common::Result<Utilization> utilization(unsigned) override { return Utilization{70, 20}; }
};

class ExporterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root = fs::temp_directory_path() / ("kubex-exporter-test-" + std::to_string(::getpid()));
    fs::create_directories(root);
    cgroup(100, "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1111_2222.slice/cri-containerd-" + kIdA + ".scope\n");
    cgroup(200, "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod3333_4444.slice/cri-containerd-" + kIdB + ".scope\n");
    cgroup(300, "0::/system.slice/sshd.service\n");
  }
  void TearDown() override { fs::remove_all(root); }
  void cgroup(int pid, const std::string& text) {
    fs::create_directories(root / std::to_string(pid));
    std::ofstream(root / std::to_string(pid) / "cgroup") << text;
  }
  fs::path root;
};

TEST_F(ExporterTest, SeriesDeviceGaugesAndUnmappedProcesses) {  // TEL-1, TEL-2, TEL-3
  auto fake = std::make_unique<FakeNvml>();
  fake->devices = {{"GPU-0", "NVIDIA H100 80GB HBM3", 80 * kGi, 30 * kGi}};
  fake->procs = {{{100, 20 * kGi, true}, {200, 4 * kGi, true}, {300, 1 * kGi, true}}};
  fake->util = {{{100, 10, 45}, {200, 10, 5}}};
  std::map<std::string, NodeContainer> containers;
  containers[kIdA] = {"ml", "chat-0", "1111-2222", "server", "fraction", 0.5, 0};
  containers[kIdB] = {"ml", "etl-0", "3333-4444", "job", "", 0, 0};
  Exporter exporter(std::move(fake), [&] { return containers; }, {"gpu-node-1", root.string()});
  exporter.sample(common::TimePoint(std::chrono::seconds(1000)));
  const std::string text = exporter.render();
  // 20 GiB of a 0.5 × 80 GiB allocation: 50 %.
  EXPECT_NE(text.find("kubex_gpu_container_memory_footprint_percent{namespace=\"ml\",pod=\"chat-0\",container=\"server\","
                      "node=\"gpu-node-1\",gpu_uuid=\"GPU-0\",gpu_model=\"NVIDIA H100 80GB HBM3\","
                      "gpu_allocation_type=\"fraction\"} 50\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("kubex_gpu_container_sm_utilization_percent{namespace=\"ml\",pod=\"chat-0\""), std::string::npos);
  EXPECT_EQ(text.find("pod=\"etl-0\""), std::string::npos);  // its pod holds no GPU: counted, not attributed
  EXPECT_NE(text.find("kubex_gpu_exporter_unmapped_processes{node=\"gpu-node-1\",reason=\"no-gpu-allocation\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("kubex_gpu_exporter_unmapped_processes{node=\"gpu-node-1\",reason=\"no-container\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("kubex_gpu_device_memory_used_bytes{node=\"gpu-node-1\",gpu_uuid=\"GPU-0\","
                      "gpu_model=\"NVIDIA H100 80GB HBM3\"} 32212254720\n"),
            std::string::npos);
  EXPECT_NE(text.find("kubex_gpu_device_processes{node=\"gpu-node-1\",gpu_uuid=\"GPU-0\",gpu_model=\"NVIDIA H100 80GB HBM3\"} 3\n"),
            std::string::npos);
  EXPECT_NE(text.find("kubex_gpu_exporter_samples_total{node=\"gpu-node-1\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("kubex_gpu_exporter_info{node=\"gpu-node-1\",driver_version=\"550.54.15\"} 1\n"), std::string::npos);
}

TEST_F(ExporterTest, AFailedNvmlCallIsCountedAndItsDeviceLeftOut) {  // TEL-1: errors are counted, never hidden
  auto fake = std::make_unique<FakeNvml>();
  fake->devices = {{"GPU-0", "L4", 24 * kGi, 0}, {"GPU-1", "L4", 24 * kGi, 0}};
  fake->procs = {{{100, 6 * kGi, true}}, {}};
  fake->util = {{}, {}};
  fake->fail_memory_on = 0;
  std::map<std::string, NodeContainer> containers;
  containers[kIdA] = {"ml", "chat-0", "1111-2222", "server", "whole", 0, 0};
  Exporter exporter(std::move(fake), [&] { return containers; }, {"n", root.string()});
  exporter.sample(common::TimePoint(std::chrono::seconds(1000)));
  const std::string text = exporter.render();
  EXPECT_NE(text.find("kubex_gpu_exporter_nvml_errors_total{node=\"n\",call=\"nvmlDeviceGetMemoryInfo\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("gpu_uuid=\"GPU-0\""), std::string::npos);
  EXPECT_NE(text.find("kubex_gpu_device_memory_total_bytes{node=\"n\",gpu_uuid=\"GPU-1\""), std::string::npos);
}

}  // namespace
}  // namespace kubex::telemetry
