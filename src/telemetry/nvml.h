// NVML, loaded at run time (TEL-1): `dlopen` of the library named by `--nvml-library` (default
// `libnvidia-ml.so.1`, found by the loader), resolving ONLY these entry points: nvmlInit_v2, nvmlShutdown,
// nvmlErrorString, nvmlSystemGetDriverVersion, nvmlDeviceGetCount_v2, nvmlDeviceGetHandleByIndex_v2,
// nvmlDeviceGetUUID, nvmlDeviceGetName, nvmlDeviceGetMemoryInfo, nvmlDeviceGetComputeRunningProcesses_v3,
// nvmlDeviceGetProcessUtilization, nvmlDeviceGetUtilizationRates. The binary never links NVML: on a node without a
// driver, load_nvml() returns one line that says so. The few NVML structs used are declared in nvml.cpp from
// NVML's documented ABI. Tests load a fake library (tests/fake_nvml/) through the same dlopen.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"

namespace kubex::telemetry {

struct NvmlDeviceInfo {
  std::string uuid;  // "GPU-…"
  std::string name;  // product name, e.g. "NVIDIA H100 80GB HBM3"
  std::uint64_t memory_total_bytes = 0, memory_used_bytes = 0;
};

// nvmlDeviceGetComputeRunningProcesses_v3: a process with a context on the device.
struct NvmlProcess {
  std::uint32_t pid = 0;
  std::uint64_t used_memory_bytes = 0;
  bool memory_known = true;  // false when NVML reports NVML_VALUE_NOT_AVAILABLE (then used_memory_bytes = 0)
};

// nvmlDeviceGetProcessUtilization: one process's SM use over the sampling window.
struct NvmlProcessUtilization {
  std::uint32_t pid = 0;
  std::uint64_t timestamp_us = 0;  // CPU timestamp of the sample, microseconds
  std::uint32_t sm_percent = 0;    // percent of the whole device
};

// The narrow interface the exporter uses (a fake in unit tests that do not need dlopen). Errors carry NVML's own
// text (nvmlErrorString) and the call that failed: "nvmlDeviceGetMemoryInfo(1): GPU is lost".
class Nvml {
 public:
  virtual ~Nvml() = default;
  virtual common::Result<std::string> driver_version() = 0;
  virtual common::Result<unsigned> device_count() = 0;
  virtual common::Result<NvmlDeviceInfo> device(unsigned index) = 0;
  // Every compute process of the device (the v3 call, grown until the buffer fits).
  virtual common::Result<std::vector<NvmlProcess>> processes(unsigned index) = 0;
  // The per-process SM samples newer than `since_timestamp_us` (0: whatever NVML holds). NVML_ERROR_NOT_FOUND
  // (no process ran since then) is an empty vector, not an error.
  virtual common::Result<std::vector<NvmlProcessUtilization>> process_utilization(unsigned index,
                                                                                   std::uint64_t since_timestamp_us) = 0;
  // nvmlDeviceGetUtilizationRates: percent of time the device was busy (gpu) and its memory busy (memory).
  struct Utilization {
    std::uint32_t gpu_percent = 0, memory_percent = 0;
  };
  virtual common::Result<Utilization> utilization(unsigned index) = 0;
};

// dlopen(library) (RTLD_NOW | RTLD_LOCAL), resolves the twelve entry points and calls nvmlInit_v2. The returned
// object calls nvmlShutdown and dlclose when destroyed. Errors: "cannot load NVML from <library>: <dlerror>",
// "<library> has no <symbol>: not an NVML library (or one older than the v3 process API)", "nvmlInit_v2: <text>".
common::Result<std::unique_ptr<Nvml>> load_nvml(const std::string& library);

}  // namespace kubex::telemetry
