// One sampling pass of `kubex gpu-exporter`: processes -> containers -> the kubex_gpu_container_* series
// (SPEC TEL-2, TEL-3). Pure: NVML's and the cgroups' answers are written here as the structs the exporter fills.
#include "telemetry/series.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace kubex::telemetry {
namespace {

using namespace std::chrono_literals;

constexpr std::uint64_t kMiB = 1024 * 1024;
constexpr std::uint64_t kGiB = 1024 * kMiB;
const common::TimePoint kT0 = common::TimePoint{} + 1'700'000'000s;

// 64-hex container IDs, one per letter.
std::string cid(char c) {
  return std::string(64, c);
}

DeviceRead device(const std::string& uuid, std::uint64_t memory = 80 * kGiB,
                  const std::string& name = "NVIDIA H100 80GB HBM3") {
  DeviceRead d;
  d.info.uuid = uuid;
  d.info.name = name;
  d.info.memory_total_bytes = memory;
  return d;
}

void add_process(DeviceRead& d, std::uint32_t pid, std::uint64_t memory, std::uint32_t sm,
                 std::uint64_t timestamp_us = 1000) {
  d.processes.push_back({pid, memory, true});
  d.utilization.push_back({pid, timestamp_us, sm});
}

NodeContainer fraction(const std::string& pod, double f, const std::string& container = "app") {
  return {"team", pod, "uid-" + pod, container, "fraction", f, 0};
}

NodeContainer whole(const std::string& pod, const std::string& container = "app") {
  return {"team", pod, "uid-" + pod, container, "whole", 0, 0};
}

PassInput input(common::TimePoint now = kT0) {
  PassInput in;
  in.node = "gpu-node-0";
  in.now = now;
  return in;
}

// pid -> the container `id` of `pod_uid`.
void map_pid(PassInput& in, std::uint32_t pid, char id, const NodeContainer& c) {
  in.containers_of_pids[pid] = ContainerRef{c.pod_uid, cid(id)};
  in.node_containers[cid(id)] = c;
}

// TEL-3: a KAI fraction pod's footprint is relative to gpu-fraction × device memory: 20 GiB on 0.5 of 80 GiB is 50.
TEST(SeriesPass, FractionPodFootprintIsRelativeToItsShare) {
  PassInput in = input();
  DeviceRead d = device("GPU-a");
  add_process(d, 100, 20 * kGiB, 35);
  in.devices.push_back(d);
  map_pid(in, 100, 'a', fraction("infer-0", 0.5));

  SeriesState state;
  PassOutput out = state.pass(in);
  ASSERT_EQ(out.samples.size(), 1u);
  const auto& s = out.samples[0];
  EXPECT_EQ(s.ns, "team");
  EXPECT_EQ(s.pod, "infer-0");
  EXPECT_EQ(s.container, "app");
  EXPECT_EQ(s.node, "gpu-node-0");
  EXPECT_EQ(s.gpu_uuid, "GPU-a");
  EXPECT_EQ(s.gpu_model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(s.allocation_type, "fraction");
  EXPECT_DOUBLE_EQ(s.sm_percent, 35);
  EXPECT_EQ(s.memory_bytes, static_cast<std::int64_t>(20 * kGiB));
  EXPECT_EQ(s.memory_total_bytes, static_cast<std::int64_t>(40 * kGiB));
  EXPECT_DOUBLE_EQ(s.memory_footprint_percent, 50);
  EXPECT_EQ(s.pod_uid, "uid-infer-0");
  EXPECT_TRUE(out.unmapped.empty());
}

// TEL-3: a whole-GPU pod has one series per device, each relative to that one device.
TEST(SeriesPass, WholeGpuPodHasOneSeriesPerDevice) {
  PassInput in = input();
  DeviceRead d0 = device("GPU-0"), d1 = device("GPU-1");
  add_process(d0, 200, 60 * kGiB, 90);
  add_process(d1, 201, 20 * kGiB, 10);
  in.devices = {d1, d0};
  NodeContainer train = whole("train-0", "trainer");
  map_pid(in, 200, 't', train);
  in.containers_of_pids[201] = ContainerRef{train.pod_uid, cid('t')};

  SeriesState state;
  PassOutput out = state.pass(in);
  ASSERT_EQ(out.samples.size(), 2u);
  EXPECT_EQ(out.samples[0].gpu_uuid, "GPU-0") << "sorted by gpu_uuid within the container";
  EXPECT_EQ(out.samples[1].gpu_uuid, "GPU-1");
  for (const auto& s : out.samples) {
    EXPECT_EQ(s.allocation_type, "whole");
    EXPECT_EQ(s.container, "trainer");
    EXPECT_EQ(s.memory_total_bytes, static_cast<std::int64_t>(80 * kGiB)) << "one device, not two";
  }
  EXPECT_DOUBLE_EQ(out.samples[0].memory_footprint_percent, 75);
  EXPECT_DOUBLE_EQ(out.samples[0].sm_percent, 90);
  EXPECT_DOUBLE_EQ(out.samples[1].memory_footprint_percent, 25);
  EXPECT_DOUBLE_EQ(out.samples[1].sm_percent, 10);
}

// TEL-3: SM and memory are summed over the container's processes on the device; other containers stay apart.
TEST(SeriesPass, MultiProcessContainerSums) {
  PassInput in = input();
  DeviceRead d = device("GPU-a", 16384 * kMiB, "Tesla-T4");
  add_process(d, 10, 1000 * kMiB, 20);
  add_process(d, 11, 3096 * kMiB, 15);
  add_process(d, 12, 512 * kMiB, 5);
  d.processes.push_back({13, 0, false});  // memory not available: counts 0; no utilization sample: SM 0
  in.devices.push_back(d);
  NodeContainer app = fraction("infer-0", 0.5);
  map_pid(in, 10, 'a', app);
  in.containers_of_pids[11] = ContainerRef{app.pod_uid, cid('a')};
  in.containers_of_pids[13] = ContainerRef{app.pod_uid, cid('a')};
  map_pid(in, 12, 'b', fraction("infer-1", 0.25));

  SeriesState state;
  PassOutput out = state.pass(in);
  ASSERT_EQ(out.samples.size(), 2u);
  const auto& a = out.samples[0];
  EXPECT_EQ(a.pod, "infer-0");
  EXPECT_DOUBLE_EQ(a.sm_percent, 35);
  EXPECT_EQ(a.memory_bytes, static_cast<std::int64_t>(4096 * kMiB));
  EXPECT_EQ(a.memory_total_bytes, static_cast<std::int64_t>(8192 * kMiB));
  EXPECT_DOUBLE_EQ(a.memory_footprint_percent, 50);  // docs/gpu-model.md: 4096 MiB on 0.5 of 16384 MiB
  const auto& b = out.samples[1];
  EXPECT_EQ(b.pod, "infer-1");
  EXPECT_DOUBLE_EQ(b.sm_percent, 5);
  EXPECT_DOUBLE_EQ(b.memory_footprint_percent, 12.5);
}

// TEL-3: the newest utilization sample of a pid counts, whatever NVML's order.
TEST(SeriesPass, NewestUtilizationSampleCounts) {
  PassInput in = input();
  DeviceRead d = device("GPU-a");
  d.processes.push_back({10, kGiB, true});
  d.utilization = {{10, 2000, 70}, {10, 3000, 40}, {10, 1000, 99}};
  in.devices.push_back(d);
  map_pid(in, 10, 'a', whole("p"));

  SeriesState state;
  EXPECT_DOUBLE_EQ(state.pass(in).samples.at(0).sm_percent, 40);
}

// TEL-2: a pid that exited between NVML's process list and the cgroup read has no container: counted, not guessed.
TEST(SeriesPass, PidThatExitedIsUnmapped) {
  PassInput in = input();
  DeviceRead d = device("GPU-a");
  add_process(d, 10, kGiB, 50);
  add_process(d, 11, kGiB, 50);
  in.devices.push_back(d);
  map_pid(in, 10, 'a', whole("p"));
  in.containers_of_pids[11] = std::nullopt;  // /proc/11/cgroup could not be read

  SeriesState state;
  PassOutput out = state.pass(in);
  ASSERT_EQ(out.samples.size(), 1u);
  EXPECT_DOUBLE_EQ(out.samples[0].sm_percent, 50);
  EXPECT_EQ(out.unmapped, (std::map<std::string, std::size_t>{{kUnmappedNoContainer, 1}}));
}

// NVML_ERROR_NOT_FOUND (no utilization sample for the device): the processes are exported with SM 0.
TEST(SeriesPass, NoUtilizationForTheDeviceIsSmZero) {
  PassInput in = input();
  DeviceRead d = device("GPU-a");
  d.processes = {{10, 8 * kGiB, true}, {11, 8 * kGiB, true}};
  in.devices.push_back(d);
  NodeContainer c = whole("p");
  map_pid(in, 10, 'a', c);
  in.containers_of_pids[11] = ContainerRef{c.pod_uid, cid('a')};

  SeriesState state;
  PassOutput out = state.pass(in);
  ASSERT_EQ(out.samples.size(), 1u);
  EXPECT_DOUBLE_EQ(out.samples[0].sm_percent, 0);
  EXPECT_EQ(out.samples[0].memory_bytes, static_cast<std::int64_t>(16 * kGiB));
  EXPECT_DOUBLE_EQ(out.samples[0].memory_footprint_percent, 20);
}

// TEL-2: the three reasons a process is not attributed, each counted.
TEST(SeriesPass, UnmappedReasons) {
  PassInput in = input();
  DeviceRead d = device("GPU-a");
  for (std::uint32_t pid : {1, 2, 3, 4, 5, 6}) add_process(d, pid, kGiB, 10);
  in.devices.push_back(d);
  // 1: a host process (its cgroup names no container); 2: not even in the map.
  in.containers_of_pids[1] = std::nullopt;
  // 3, 4: a container no pod of this node runs.
  in.containers_of_pids[3] = ContainerRef{"uid-gone", cid('x')};
  in.containers_of_pids[4] = ContainerRef{"uid-gone", cid('y')};
  // 5: a pod that holds no GPU.
  NodeContainer cpu{"team", "cpu-only", "uid-cpu", "app", "", 0, 0};
  map_pid(in, 5, 'c', cpu);
  // 6: attributed.
  map_pid(in, 6, 'a', fraction("infer-0", 0.5));

  SeriesState state;
  PassOutput out = state.pass(in);
  ASSERT_EQ(out.samples.size(), 1u);
  EXPECT_EQ(out.samples[0].pod, "infer-0");
  EXPECT_EQ(out.unmapped, (std::map<std::string, std::size_t>{
                              {kUnmappedNoContainer, 2}, {kUnmappedUnknownPod, 2}, {kUnmappedNoAllocation, 1}}));
}

// TEL-3: the counter adds sm_percent × the seconds since the previous pass; nothing on the first pass.
TEST(SeriesPass, CounterIntegratesOverPasses) {
  NodeContainer c = fraction("infer-0", 0.5);
  auto at = [&](common::TimePoint now, std::uint32_t sm) {
    PassInput in = input(now);
    DeviceRead d = device("GPU-a");
    add_process(d, 10, kGiB, sm);
    in.devices.push_back(d);
    map_pid(in, 10, 'a', c);
    return in;
  };
  SeriesState state;
  EXPECT_DOUBLE_EQ(state.pass(at(kT0, 40)).samples.at(0).sm_percent_seconds_total, 0);
  EXPECT_DOUBLE_EQ(state.pass(at(kT0 + 2s, 30)).samples.at(0).sm_percent_seconds_total, 60);
  EXPECT_DOUBLE_EQ(state.pass(at(kT0 + 2500ms, 80)).samples.at(0).sm_percent_seconds_total, 100);

  // A restart (restart_count) starts a new counter from 0 (a reset for Prometheus), then integrates again.
  c.restart_count = 1;
  EXPECT_DOUBLE_EQ(state.pass(at(kT0 + 3500ms, 50)).samples.at(0).sm_percent_seconds_total, 0);
  EXPECT_DOUBLE_EQ(state.pass(at(kT0 + 4500ms, 50)).samples.at(0).sm_percent_seconds_total, 50);

  // So does a new pod under the same name (another UID).
  c.pod_uid = "uid-infer-0-again";
  EXPECT_DOUBLE_EQ(state.pass(at(kT0 + 5500ms, 50)).samples.at(0).sm_percent_seconds_total, 0);
}

// A wall clock stepped back between passes adds nothing (a counter never decreases).
TEST(SeriesPass, ClockSteppedBackAddsNothing) {
  PassInput in = input(kT0);
  DeviceRead d = device("GPU-a");
  add_process(d, 10, kGiB, 50);
  in.devices.push_back(d);
  map_pid(in, 10, 'a', whole("p"));
  SeriesState state;
  state.pass(in);
  in.now = kT0 + 2s;
  EXPECT_DOUBLE_EQ(state.pass(in).samples.at(0).sm_percent_seconds_total, 100);
  in.now = kT0 + 1s;
  EXPECT_DOUBLE_EQ(state.pass(in).samples.at(0).sm_percent_seconds_total, 100);
  in.now = kT0 + 3s;
  EXPECT_DOUBLE_EQ(state.pass(in).samples.at(0).sm_percent_seconds_total, 200);
}

// A series absent from a pass is dropped: when it comes back its counter starts at 0 again.
TEST(SeriesPass, SeriesThatDisappearsRestartsItsCounter) {
  NodeContainer c = whole("p");
  PassInput busy = input(kT0);
  DeviceRead d = device("GPU-a");
  add_process(d, 10, kGiB, 100);
  busy.devices.push_back(d);
  map_pid(busy, 10, 'a', c);
  PassInput idle = input(kT0 + 1s);
  idle.devices.push_back(device("GPU-a"));

  SeriesState state;
  state.pass(busy);
  busy.now = kT0 + 1s;
  EXPECT_DOUBLE_EQ(state.pass(busy).samples.at(0).sm_percent_seconds_total, 100);
  idle.now = kT0 + 2s;
  EXPECT_TRUE(state.pass(idle).samples.empty());
  busy.now = kT0 + 3s;
  EXPECT_DOUBLE_EQ(state.pass(busy).samples.at(0).sm_percent_seconds_total, 0);
  busy.now = kT0 + 4s;
  EXPECT_DOUBLE_EQ(state.pass(busy).samples.at(0).sm_percent_seconds_total, 100);
}

// A pid with contexts on two devices counts on each device it is listed on.
TEST(SeriesPass, PidOnTwoDevicesCountsOnEach) {
  PassInput in = input();
  DeviceRead d0 = device("GPU-0"), d1 = device("GPU-1");
  add_process(d0, 10, 4 * kGiB, 30);
  add_process(d1, 10, 8 * kGiB, 60);
  in.devices = {d0, d1};
  map_pid(in, 10, 'a', whole("p"));

  SeriesState state;
  PassOutput out = state.pass(in);
  ASSERT_EQ(out.samples.size(), 2u);
  EXPECT_DOUBLE_EQ(out.samples[0].sm_percent, 30);
  EXPECT_EQ(out.samples[0].memory_bytes, static_cast<std::int64_t>(4 * kGiB));
  EXPECT_DOUBLE_EQ(out.samples[1].sm_percent, 60);
  EXPECT_EQ(out.samples[1].memory_bytes, static_cast<std::int64_t>(8 * kGiB));
}

// Samples are sorted by namespace, pod, container, gpu_uuid, whatever the order of devices and processes.
TEST(SeriesPass, SamplesAreSorted) {
  PassInput in = input();
  DeviceRead d1 = device("GPU-1"), d0 = device("GPU-0");
  add_process(d1, 1, kGiB, 1);
  add_process(d1, 2, kGiB, 1);
  add_process(d0, 3, kGiB, 1);
  add_process(d0, 4, kGiB, 1);
  in.devices = {d1, d0};
  NodeContainer b = whole("b"), a_side = whole("a", "side"), a_main = whole("a", "main");
  NodeContainer other{"aaa", "z", "uid-z", "app", "whole", 0, 0};
  map_pid(in, 1, 'b', b);
  map_pid(in, 2, 's', a_side);
  map_pid(in, 3, 'm', a_main);
  map_pid(in, 4, 'z', other);

  SeriesState state;
  PassOutput out = state.pass(in);
  ASSERT_EQ(out.samples.size(), 4u);
  std::vector<std::string> got;
  for (const auto& s : out.samples) got.push_back(s.ns + "/" + s.pod + "/" + s.container + "/" + s.gpu_uuid);
  EXPECT_EQ(got, (std::vector<std::string>{"aaa/z/app/GPU-0", "team/a/main/GPU-0", "team/a/side/GPU-1",
                                           "team/b/app/GPU-1"}));
}

}  // namespace
}  // namespace kubex::telemetry
