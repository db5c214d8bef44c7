// TEL-2/TEL-3 arithmetic of one sampling pass, pure: NVML's view of the node's devices and processes, each process's
// container (cgroup.h) and the node's pods -> the kubex_gpu_container_* samples (api/gpu_series.h), plus what could
// not be attributed. The SM counter is kept between passes. No I/O: the exporter passes what it read.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/gpu_series.h"
#include "common/clock.h"
#include "telemetry/cgroup.h"
#include "telemetry/nvml.h"

namespace kubex::telemetry {

// A container of a pod on this node, from the pod WATCH (status.containerStatuses[].containerID).
struct NodeContainer {
  std::string ns, pod, pod_uid, container;
  std::string allocation_type;  // "fraction" (gpu-fraction annotation), "whole" (nvidia.com/gpu limit), "" (none)
  double gpu_fraction = 0;      // the pod's gpu-fraction when "fraction"
  int restart_count = 0;
};

// What one pass read from NVML for one device.
struct DeviceRead {
  NvmlDeviceInfo info;
  std::vector<NvmlProcess> processes;
  std::vector<NvmlProcessUtilization> utilization;  // newest sample per pid counts
};

struct PassInput {
  std::string node;
  common::TimePoint now;
  std::vector<DeviceRead> devices;
  std::map<std::uint32_t, std::optional<ContainerRef>> containers_of_pids;  // every pid of `devices`
  // Keyed by container ID (the 64-hex runtime id, as ContainerRef::container_id).
  std::map<std::string, NodeContainer> node_containers;
};

// Why a process was not attributed (label `reason` of kubex_gpu_exporter_unmapped_processes).
inline constexpr const char* kUnmappedNoContainer = "no-container";      // its cgroup names no pod container
inline constexpr const char* kUnmappedUnknownPod = "unknown-pod";        // no pod of this node runs that container
inline constexpr const char* kUnmappedNoAllocation = "no-gpu-allocation";  // its pod holds no GPU

struct PassOutput {
  std::vector<api::GpuContainerSample> samples;  // one per (container, device) with a process, sorted by labels
  std::map<std::string, std::size_t> unmapped;   // reason -> processes
};

// One series per container per device it has a process on: SM = Σ the processes' newest sm_percent (percent of
// the device), memory = Σ their used memory, the allocation and footprint by api::gpu_allocation_bytes /
// api::gpu_footprint_percent, gpu_model = the device name. The counter adds sm_percent × the time since the
// previous pass (0 on a series' first pass) and restarts with the container (restart_count) or pod UID.
// A series absent from a pass (its processes ended) is dropped from the state: if it comes back later its counter
// starts again at 0, which Prometheus reads as a counter reset. The rectangle rule (the newest sample × the time
// since the previous pass) fits NVML, whose process sample is already an average over that window. A pid
// listed on two devices counts on each; a pid listed twice on one device counts its SM once and its memory twice.
class SeriesState {
 public:
  PassOutput pass(const PassInput& in);

 private:
  std::optional<common::TimePoint> last_;
  std::map<std::string, double> counters_;  // pod_uid/container/restart/gpu_uuid -> percent-seconds
};

}  // namespace kubex::telemetry
