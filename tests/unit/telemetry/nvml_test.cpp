// load_nvml() against the fake NVML library (tests/fake_nvml/fake_nvml.c) through the real dlopen path (TEL-1).
#include "telemetry/nvml.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "kubex_paths.h"

namespace kubex::telemetry {
namespace {

namespace fs = std::filesystem;

std::string fake_library() { return std::string(kubex_paths::bin_dir()) + "/libfake-nvml.so"; }

const std::set<std::string> kTwelve = {
    "nvmlInit_v2",
    "nvmlShutdown",
    "nvmlErrorString",
    "nvmlSystemGetDriverVersion",
    "nvmlDeviceGetCount_v2",
    "nvmlDeviceGetHandleByIndex_v2",
    "nvmlDeviceGetUUID",
    "nvmlDeviceGetName",
    "nvmlDeviceGetMemoryInfo",
    "nvmlDeviceGetComputeRunningProcesses_v3",
    "nvmlDeviceGetProcessUtilization",
    "nvmlDeviceGetUtilizationRates",
};

constexpr std::uint64_t kGiB = 1024ull * 1024 * 1024;
const char* kUuid0 = "GPU-11111111-2222-3333-4444-555555555555";
const char* kUuid1 = "GPU-66666666-7777-8888-9999-000000000000";

std::uint64_t now_us() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

class FakeNvml : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("kubex-fake-nvml-" + std::to_string(getpid()) + "-" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    scenario_ = dir_ / "scenario";
    setenv("FAKE_NVML_SCENARIO", scenario_.c_str(), 1);
  }
  void TearDown() override {
    unsetenv("FAKE_NVML_SCENARIO");
    fs::remove_all(dir_);
  }

  // Writes a new file and renames it over the scenario, as an e2e test changes it under a running exporter.
  void write_scenario(const std::string& text) {
    auto tmp = dir_ / ("next-" + std::to_string(++versions_));
    std::ofstream(tmp) << text;
    fs::rename(tmp, scenario_);
  }

  std::unique_ptr<Nvml> load() {
    auto nvml = load_nvml(fake_library());
    if (!nvml) {
      ADD_FAILURE() << nvml.error().str();
      return nullptr;
    }
    return std::move(*nvml);
  }

  fs::path dir_, scenario_;
  int versions_ = 0;
};

const std::string kTwoDevices = std::string("driver 550.54.15\n") + "device 0 " + kUuid0 +
                                " \"NVIDIA H100 80GB HBM3\" total=" + std::to_string(80 * kGiB) + "\n" + "device 1 " +
                                kUuid1 + " \"NVIDIA A100-SXM4-40GB\" total=" + std::to_string(40 * kGiB) +
                                " used=" + std::to_string(3 * kGiB) + "\n";

// TEL-1: the driver, the devices' UUIDs, names and memory come from the library's entry points.
TEST_F(FakeNvml, ReadsDriverDevicesNamesUuidsAndMemory) {
  write_scenario(kTwoDevices + "process 0 pid=100 used=" + std::to_string(2 * kGiB) + "\n");
  auto nvml = load();
  ASSERT_TRUE(nvml);
  EXPECT_EQ(nvml->driver_version().value(), "550.54.15");
  EXPECT_EQ(nvml->device_count().value(), 2u);
  auto d0 = nvml->device(0);
  ASSERT_TRUE(d0) << d0.error().str();
  EXPECT_EQ(d0->uuid, kUuid0);
  EXPECT_EQ(d0->name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d0->memory_total_bytes, 80 * kGiB);
  EXPECT_EQ(d0->memory_used_bytes, 2 * kGiB);  // the fake's default: its processes' memory
  auto d1 = nvml->device(1);
  ASSERT_TRUE(d1) << d1.error().str();
  EXPECT_EQ(d1->uuid, kUuid1);
  EXPECT_EQ(d1->name, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(d1->memory_total_bytes, 40 * kGiB);
  EXPECT_EQ(d1->memory_used_bytes, 3 * kGiB);
}

// TEL-1: a device index NVML does not know fails on the handle lookup, naming the call and the index.
TEST_F(FakeNvml, UnknownDeviceIndexNamesTheHandleLookup) {
  write_scenario(kTwoDevices);
  auto nvml = load();
  ASSERT_TRUE(nvml);
  auto d = nvml->device(5);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().str(), "nvmlDeviceGetHandleByIndex_v2(5): Invalid Argument");
}

// TEL-1: the v3 process list is grown until it fits, so a device with more processes than the first buffer
// returns every one of them, in NVML's order.
TEST_F(FakeNvml, ProcessListGrowsPastTheFirstBuffer) {
  std::string text = kTwoDevices;
  for (int pid = 1000; pid < 1100; ++pid) {
    text += "process 0 pid=" + std::to_string(pid) + " used=" + std::to_string(pid * 1024) + "\n";
  }
  write_scenario(text);
  auto nvml = load();
  ASSERT_TRUE(nvml);
  for (int pass = 0; pass < 2; ++pass) {  // the second pass starts from the size the first one learned
    auto procs = nvml->processes(0);
    ASSERT_TRUE(procs) << procs.error().str();
    ASSERT_EQ(procs->size(), 100u);
    for (std::size_t i = 0; i < procs->size(); ++i) {
      EXPECT_EQ((*procs)[i].pid, 1000 + i);
      EXPECT_EQ((*procs)[i].used_memory_bytes, (1000 + i) * 1024);
      EXPECT_TRUE((*procs)[i].memory_known);
    }
  }
  auto none = nvml->processes(1);
  ASSERT_TRUE(none) << none.error().str();
  EXPECT_TRUE(none->empty());
}

// TEL-1: NVML_VALUE_NOT_AVAILABLE as a process's memory is "unknown", not 16 EiB.
TEST_F(FakeNvml, ProcessMemoryNotAvailableIsUnknown) {
  write_scenario(kTwoDevices + "process 1 pid=7 used=na\nprocess 1 pid=8 used=4096\n");
  auto nvml = load();
  ASSERT_TRUE(nvml);
  auto procs = nvml->processes(1);
  ASSERT_TRUE(procs) << procs.error().str();
  ASSERT_EQ(procs->size(), 2u);
  EXPECT_EQ((*procs)[0].pid, 7u);
  EXPECT_FALSE((*procs)[0].memory_known);
  EXPECT_EQ((*procs)[0].used_memory_bytes, 0u);
  EXPECT_TRUE((*procs)[1].memory_known);
  EXPECT_EQ((*procs)[1].used_memory_bytes, 4096u);
}

// TEL-1: per-process SM samples carry NVML's timestamps and only those newer than `since` come back; none newer
// (NVML_ERROR_NOT_FOUND) is an empty list, not an error.
TEST_F(FakeNvml, ProcessSamplesHonourTheSinceTimestamp) {
  write_scenario(kTwoDevices + "util 0 pid=10 sm=45 ts=1000\nutil 0 pid=11 sm=30 mem=5 ts=2000\n");
  auto nvml = load();
  ASSERT_TRUE(nvml);
  auto all = nvml->process_utilization(0, 0);
  ASSERT_TRUE(all) << all.error().str();
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].pid, 10u);
  EXPECT_EQ((*all)[0].timestamp_us, 1000u);
  EXPECT_EQ((*all)[0].sm_percent, 45u);
  EXPECT_EQ((*all)[1].pid, 11u);
  EXPECT_EQ((*all)[1].timestamp_us, 2000u);
  EXPECT_EQ((*all)[1].sm_percent, 30u);

  auto newer = nvml->process_utilization(0, 1500);
  ASSERT_TRUE(newer) << newer.error().str();
  ASSERT_EQ(newer->size(), 1u);
  EXPECT_EQ((*newer)[0].pid, 11u);

  auto none = nvml->process_utilization(0, 2000);
  ASSERT_TRUE(none) << none.error().str();
  EXPECT_TRUE(none->empty());
}

// TEL-1: a device where no process ran (NVML_ERROR_NOT_FOUND) has no samples and no error.
TEST_F(FakeNvml, DeviceWithoutProcessesHasNoSamples) {
  write_scenario(kTwoDevices + "util 0 pid=10 sm=45\n");
  auto nvml = load();
  ASSERT_TRUE(nvml);
  auto samples = nvml->process_utilization(1, 0);
  ASSERT_TRUE(samples) << samples.error().str();
  EXPECT_TRUE(samples->empty());
}

// TEL-1: without ts= the fake stamps a sample with the time of the read, so every pass sees it as new.
TEST_F(FakeNvml, SamplesWithoutTimestampAreStampedAtTheRead) {
  write_scenario(kTwoDevices + "util 0 pid=10 sm=45\n");
  auto nvml = load();
  ASSERT_TRUE(nvml);
  std::uint64_t before = now_us();
  auto first = nvml->process_utilization(0, 0);
  std::uint64_t after = now_us();
  ASSERT_TRUE(first) << first.error().str();
  ASSERT_EQ(first->size(), 1u);
  EXPECT_GE((*first)[0].timestamp_us, before);
  EXPECT_LE((*first)[0].timestamp_us, after);
  usleep(2000);
  auto second = nvml->process_utilization(0, (*first)[0].timestamp_us);
  ASSERT_TRUE(second) << second.error().str();
  ASSERT_EQ(second->size(), 1u);
  EXPECT_GT((*second)[0].timestamp_us, (*first)[0].timestamp_us);
  auto future = nvml->process_utilization(0, after + 3'600'000'000ull);
  ASSERT_TRUE(future) << future.error().str();
  EXPECT_TRUE(future->empty());
}

// TEL-1: nvmlDeviceGetUtilizationRates, per device.
TEST_F(FakeNvml, DeviceUtilizationRates) {
  write_scenario(kTwoDevices + "devutil 0 gpu=70 mem=20\n");
  auto nvml = load();
  ASSERT_TRUE(nvml);
  auto u0 = nvml->utilization(0);
  ASSERT_TRUE(u0) << u0.error().str();
  EXPECT_EQ(u0->gpu_percent, 70u);
  EXPECT_EQ(u0->memory_percent, 20u);
  auto u1 = nvml->utilization(1);
  ASSERT_TRUE(u1) << u1.error().str();
  EXPECT_EQ(u1->gpu_percent, 0u);
}

// TEL-1: an NVML error names the call, the device and NVML's own text; the other device still reads.
TEST_F(FakeNvml, InjectedErrorNamesTheCallTheDeviceAndNvmlsText) {
  write_scenario(kTwoDevices +
                 "error nvmlDeviceGetMemoryInfo 1 GPU_IS_LOST\n"
                 "error nvmlDeviceGetComputeRunningProcesses_v3 0 UNKNOWN\n"
                 "error nvmlDeviceGetProcessUtilization 1 NO_PERMISSION\n"
                 "error nvmlDeviceGetUtilizationRates NOT_SUPPORTED\n"
                 "error nvmlSystemGetDriverVersion TIMEOUT\n");
  auto nvml = load();
  ASSERT_TRUE(nvml);
  auto d1 = nvml->device(1);
  ASSERT_FALSE(d1);
  EXPECT_EQ(d1.error().str(), "nvmlDeviceGetMemoryInfo(1): GPU is lost");
  EXPECT_TRUE(nvml->device(0));
  auto procs = nvml->processes(0);
  ASSERT_FALSE(procs);
  EXPECT_EQ(procs.error().str(), "nvmlDeviceGetComputeRunningProcesses_v3(0): Unknown Error");
  EXPECT_TRUE(nvml->processes(1));
  auto samples = nvml->process_utilization(1, 0);
  ASSERT_FALSE(samples);
  EXPECT_EQ(samples.error().str(), "nvmlDeviceGetProcessUtilization(1): Insufficient Permissions");
  auto u = nvml->utilization(0);
  ASSERT_FALSE(u);
  EXPECT_EQ(u.error().str(), "nvmlDeviceGetUtilizationRates(0): Not Supported");
  auto driver = nvml->driver_version();
  ASSERT_FALSE(driver);
  EXPECT_EQ(driver.error().str(), "nvmlSystemGetDriverVersion: Timeout");
}

// TEL-1: the fake re-reads its scenario when the file changes, so an e2e test can start and stop processes while
// the exporter runs.
TEST_F(FakeNvml, ScenarioChangesReachALoadedLibrary) {
  write_scenario(kTwoDevices + "process 0 pid=100 used=1\n");
  auto nvml = load();
  ASSERT_TRUE(nvml);
  EXPECT_EQ(nvml->processes(0).value().size(), 1u);
  write_scenario(kTwoDevices + "process 0 pid=100 used=1\nprocess 0 pid=101 used=2\n");
  EXPECT_EQ(nvml->processes(0).value().size(), 2u);
  write_scenario(kTwoDevices);
  EXPECT_TRUE(nvml->processes(0).value().empty());
}

// TEL-1: nvmlInit_v2's failure is the load's error, with NVML's text.
TEST_F(FakeNvml, InitErrorIsTheLoadError) {
  write_scenario(kTwoDevices + "init-error DRIVER_NOT_LOADED\n");
  auto nvml = load_nvml(fake_library());
  ASSERT_FALSE(nvml);
  EXPECT_EQ(nvml.error().str(), "nvmlInit_v2: Driver Not Loaded");
}

// The fake's own checks: no scenario file is a node without a driver; a malformed one is an unknown error.
TEST_F(FakeNvml, MissingOrMalformedScenarioFailsInit) {
  auto missing = load_nvml(fake_library());
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().str(), "nvmlInit_v2: Driver Not Loaded");
  write_scenario("device 0 GPU-x \"no total\"\n");
  auto malformed = load_nvml(fake_library());
  ASSERT_FALSE(malformed);
  EXPECT_EQ(malformed.error().str(), "nvmlInit_v2: Unknown Error");
}

// A scenario rewritten into something malformed leaves the loaded library on the previous one.
TEST_F(FakeNvml, MalformedRewriteKeepsThePreviousScenario) {
  write_scenario(kTwoDevices + "process 0 pid=100 used=1\n");
  auto nvml = load();
  ASSERT_TRUE(nvml);
  write_scenario(kTwoDevices + "process 0 pid=oops\n");
  auto procs = nvml->processes(0);
  ASSERT_TRUE(procs) << procs.error().str();
  ASSERT_EQ(procs->size(), 1u);
  EXPECT_EQ((*procs)[0].pid, 100u);
}

// TEL-1: a process list that never fits (NVML keeps answering INSUFFICIENT_SIZE) ends after a few retries with
// an error instead of looping.
TEST_F(FakeNvml, ProcessListThatNeverFitsIsAnError) {
  write_scenario(kTwoDevices + "error nvmlDeviceGetComputeRunningProcesses_v3 1 INSUFFICIENT_SIZE\n");
  auto nvml = load();
  ASSERT_TRUE(nvml);
  auto procs = nvml->processes(1);
  ASSERT_FALSE(procs);
  EXPECT_EQ(procs.error().str(), "nvmlDeviceGetComputeRunningProcesses_v3(1): Insufficient Size");
}

// TEL-1: a node without the library: one line that names the path.
TEST(LoadNvml, MissingLibrarySaysWhereItLooked) {
  auto nvml = load_nvml("/nonexistent/libnvidia-ml.so.1");
  ASSERT_FALSE(nvml);
  EXPECT_TRUE(nvml.error().str().starts_with("cannot load NVML from /nonexistent/libnvidia-ml.so.1: "))
      << nvml.error().str();
}

// TEL-1: a library that is not NVML (libc) fails on the first entry point it lacks.
TEST(LoadNvml, LibraryWithoutTheEntryPointsNamesTheMissingSymbol) {
  auto nvml = load_nvml("libc.so.6");
  ASSERT_FALSE(nvml);
  EXPECT_EQ(nvml.error().str(),
            "libc.so.6 has no nvmlInit_v2: not an NVML library (or one older than the v3 process API)");
}

// TEL-1: the fake exports exactly the twelve entry points, so loading it proves kubex needs no other.
TEST(LoadNvml, FakeLibraryExportsExactlyTheTwelveEntryPoints) {
  std::string command = "nm -D --defined-only " + fake_library() + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buf[4096];
  while (std::size_t n = fread(buf, 1, sizeof buf, pipe)) output.append(buf, n);
  ASSERT_EQ(pclose(pipe), 0) << output;
  std::set<std::string> exported;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string address, type, name;
    words >> address >> type >> name;
    if (!name.empty()) exported.insert(name);
  }
  EXPECT_EQ(exported, kTwelve);
}

}  // namespace
}  // namespace kubex::telemetry
