// TEL-1: NVML through dlopen. The types below are NVML's documented C ABI (nvml.h of CUDA 11.x/12.x), declared here
// so that the binary neither includes nor links NVML: a node without a driver only fails load_nvml().
//
// Device handles are looked up per call (nvmlDeviceGetHandleByIndex_v2 is a table lookup inside NVML): no handle
// outlives a call, so a device that disappears or a scenario that changes under the fake library never leaves a
// stale handle behind. One object serves one sampling thread (it remembers each device's last process count).
#include "telemetry/nvml.h"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <utility>

namespace kubex::telemetry {
namespace {

// ---- NVML's ABI (only what the twelve entry points use) ----
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;

constexpr nvmlReturn_t NVML_SUCCESS = 0;
constexpr nvmlReturn_t NVML_ERROR_NOT_FOUND = 6;
constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_SIZE = 7;
constexpr unsigned long long NVML_VALUE_NOT_AVAILABLE = static_cast<unsigned long long>(-1);
// NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE, NVML_DEVICE_UUID_V2_BUFFER_SIZE, NVML_DEVICE_NAME_V2_BUFFER_SIZE.
constexpr unsigned kDriverVersionBufferSize = 80;
constexpr unsigned kUuidBufferSize = 96;
constexpr unsigned kNameBufferSize = 96;

struct nvmlMemory_t {
  unsigned long long total, free, used;
};

// nvmlProcessInfo_v3_t (= nvmlProcessInfo_t since CUDA 11.x's v2/v3 process calls).
struct nvmlProcessInfo_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};

struct nvmlProcessUtilizationSample_t {
  unsigned int pid;
  unsigned long long timeStamp;
  unsigned int smUtil, memUtil, encUtil, decUtil;
};

struct nvmlUtilization_t {
  unsigned int gpu, memory;
};

static_assert(sizeof(nvmlMemory_t) == 24);
static_assert(sizeof(nvmlProcessInfo_t) == 24 && offsetof(nvmlProcessInfo_t, usedGpuMemory) == 8);
static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32 && offsetof(nvmlProcessUtilizationSample_t, smUtil) == 16);
static_assert(sizeof(nvmlUtilization_t) == 8);

struct Api {
  nvmlReturn_t (*init)();
  nvmlReturn_t (*shutdown)();
  const char* (*error_string)(nvmlReturn_t);
  nvmlReturn_t (*driver_version)(char*, unsigned);
  nvmlReturn_t (*device_count)(unsigned*);
  nvmlReturn_t (*handle_by_index)(unsigned, nvmlDevice_t*);
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned);
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned);
  nvmlReturn_t (*memory_info)(nvmlDevice_t, nvmlMemory_t*);
  nvmlReturn_t (*compute_processes)(nvmlDevice_t, unsigned*, nvmlProcessInfo_t*);
  nvmlReturn_t (*process_utilization)(nvmlDevice_t, nvmlProcessUtilizationSample_t*, unsigned*, unsigned long long);
  nvmlReturn_t (*utilization_rates)(nvmlDevice_t, nvmlUtilization_t*);
};

// The first buffer for a device's process list; later passes start from the last count seen.
constexpr std::size_t kFirstProcessBuffer = 32;
// Processes can start between the sizing call and the read: grow and retry this many times.
constexpr int kGrowRetries = 5;

std::string from_buffer(const char* buf, std::size_t size) {
  std::size_t n = 0;
  while (n < size && buf[n] != '\0') ++n;
  return std::string(buf, n);
}

class DlNvml final : public Nvml {
 public:
  DlNvml(void* handle, Api api) : handle_(handle), api_(api) {}
  DlNvml(const DlNvml&) = delete;
  DlNvml& operator=(const DlNvml&) = delete;
  ~DlNvml() override {
    api_.shutdown();
    dlclose(handle_);
  }

  common::Result<std::string> driver_version() override {
    std::array<char, kDriverVersionBufferSize> buf{};
    if (auto r = api_.driver_version(buf.data(), kDriverVersionBufferSize); r != NVML_SUCCESS) {
      return failure("nvmlSystemGetDriverVersion", r);
    }
    return from_buffer(buf.data(), buf.size());
  }

  common::Result<unsigned> device_count() override {
    unsigned count = 0;
    if (auto r = api_.device_count(&count); r != NVML_SUCCESS) return failure("nvmlDeviceGetCount_v2", r);
    return count;
  }

  common::Result<NvmlDeviceInfo> device(unsigned index) override {
    auto h = handle(index);
    if (!h) return std::unexpected(h.error());
    NvmlDeviceInfo info;
    std::array<char, kUuidBufferSize> uuid{};
    if (auto r = api_.uuid(*h, uuid.data(), kUuidBufferSize); r != NVML_SUCCESS) {
      return failure("nvmlDeviceGetUUID", r, index);
    }
    info.uuid = from_buffer(uuid.data(), uuid.size());
    std::array<char, kNameBufferSize> name{};
    if (auto r = api_.name(*h, name.data(), kNameBufferSize); r != NVML_SUCCESS) {
      return failure("nvmlDeviceGetName", r, index);
    }
    info.name = from_buffer(name.data(), name.size());
    nvmlMemory_t memory{};
    if (auto r = api_.memory_info(*h, &memory); r != NVML_SUCCESS) return failure("nvmlDeviceGetMemoryInfo", r, index);
    info.memory_total_bytes = memory.total;
    info.memory_used_bytes = memory.used;
    return info;
  }

  common::Result<std::vector<NvmlProcess>> processes(unsigned index) override {
    auto h = handle(index);
    if (!h) return std::unexpected(h.error());
    std::size_t& capacity = process_capacity_[index];
    if (capacity == 0) capacity = kFirstProcessBuffer;
    std::vector<nvmlProcessInfo_t> buf(capacity);
    for (int attempt = 0;; ++attempt) {
      unsigned count = static_cast<unsigned>(buf.size());
      nvmlReturn_t r = api_.compute_processes(*h, &count, buf.data());
      if (r == NVML_SUCCESS) {
        buf.resize(count);
        break;
      }
      if (r != NVML_ERROR_INSUFFICIENT_SIZE || attempt == kGrowRetries) {
        return failure("nvmlDeviceGetComputeRunningProcesses_v3", r, index);
      }
      // `count` is the number NVML holds now; leave room for a few that start before the next call.
      buf.resize(std::max<std::size_t>(count, buf.size()) + 8);
      capacity = buf.size();
    }
    std::vector<NvmlProcess> out;
    out.reserve(buf.size());
    for (const auto& p : buf) {
      NvmlProcess proc;
      proc.pid = p.pid;
      if (p.usedGpuMemory == NVML_VALUE_NOT_AVAILABLE) {
        proc.memory_known = false;
      } else {
        proc.used_memory_bytes = p.usedGpuMemory;
      }
      out.push_back(proc);
    }
    return out;
  }

  common::Result<std::vector<NvmlProcessUtilization>> process_utilization(unsigned index,
                                                                           std::uint64_t since_timestamp_us) override {
    auto h = handle(index);
    if (!h) return std::unexpected(h.error());
    // The sizing call: NVML answers INSUFFICIENT_SIZE (or SUCCESS) with the buffer length it needs.
    unsigned count = 0;
    nvmlReturn_t r = api_.process_utilization(*h, nullptr, &count, since_timestamp_us);
    if (r == NVML_ERROR_NOT_FOUND) return std::vector<NvmlProcessUtilization>{};
    if (r != NVML_SUCCESS && r != NVML_ERROR_INSUFFICIENT_SIZE) {
      return failure("nvmlDeviceGetProcessUtilization", r, index);
    }
    std::vector<nvmlProcessUtilizationSample_t> buf;
    for (int attempt = 0;; ++attempt) {
      if (count == 0) return std::vector<NvmlProcessUtilization>{};
      buf.assign(count, nvmlProcessUtilizationSample_t{});
      r = api_.process_utilization(*h, buf.data(), &count, since_timestamp_us);
      if (r == NVML_SUCCESS) break;
      if (r == NVML_ERROR_NOT_FOUND) return std::vector<NvmlProcessUtilization>{};
      if (r != NVML_ERROR_INSUFFICIENT_SIZE || attempt == kGrowRetries) {
        return failure("nvmlDeviceGetProcessUtilization", r, index);
      }
    }
    buf.resize(std::min<std::size_t>(count, buf.size()));
    std::vector<NvmlProcessUtilization> out;
    out.reserve(buf.size());
    for (const auto& s : buf) out.push_back({.pid = s.pid, .timestamp_us = s.timeStamp, .sm_percent = s.smUtil});
    return out;
  }

  common::Result<Utilization> utilization(unsigned index) override {
    auto h = handle(index);
    if (!h) return std::unexpected(h.error());
    nvmlUtilization_t u{};
    if (auto r = api_.utilization_rates(*h, &u); r != NVML_SUCCESS) {
      return failure("nvmlDeviceGetUtilizationRates", r, index);
    }
    return Utilization{.gpu_percent = u.gpu, .memory_percent = u.memory};
  }

 private:
  common::Result<nvmlDevice_t> handle(unsigned index) {
    nvmlDevice_t h = nullptr;
    if (auto r = api_.handle_by_index(index, &h); r != NVML_SUCCESS) {
      return failure("nvmlDeviceGetHandleByIndex_v2", r, index);
    }
    return h;
  }

  // "<call>(<index>): <nvmlErrorString>" (or "<call>: <text>" for a call without a device).
  std::unexpected<common::Error> failure(const char* call, nvmlReturn_t r, std::optional<unsigned> index = {}) const {
    std::string message = call;
    if (index) message += "(" + std::to_string(*index) + ")";
    return common::fail(message + ": " + error_text(api_, r));
  }

 public:
  static std::string error_text(const Api& api, nvmlReturn_t r) {
    const char* text = api.error_string(r);
    if (text == nullptr || *text == '\0') return "NVML error " + std::to_string(r);
    return text;
  }

 private:
  void* handle_;
  Api api_;
  std::map<unsigned, std::size_t> process_capacity_;
};

// dlsym into `slot`; false when the library does not export `symbol`.
template <class Fn>
bool resolve(void* handle, const char* symbol, Fn& slot) {
  void* p = dlsym(handle, symbol);
  if (p == nullptr) return false;
  slot = reinterpret_cast<Fn>(p);
  return true;
}

}  // namespace

common::Result<std::unique_ptr<Nvml>> load_nvml(const std::string& library) {
  dlerror();
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return common::fail("cannot load NVML from " + library + ": " + (why != nullptr ? why : "dlopen failed"));
  }
  Api api{};
  const std::pair<const char*, bool> symbols[] = {
      {"nvmlInit_v2", resolve(handle, "nvmlInit_v2", api.init)},
      {"nvmlShutdown", resolve(handle, "nvmlShutdown", api.shutdown)},
      {"nvmlErrorString", resolve(handle, "nvmlErrorString", api.error_string)},
      {"nvmlSystemGetDriverVersion", resolve(handle, "nvmlSystemGetDriverVersion", api.driver_version)},
      {"nvmlDeviceGetCount_v2", resolve(handle, "nvmlDeviceGetCount_v2", api.device_count)},
      {"nvmlDeviceGetHandleByIndex_v2", resolve(handle, "nvmlDeviceGetHandleByIndex_v2", api.handle_by_index)},
      {"nvmlDeviceGetUUID", resolve(handle, "nvmlDeviceGetUUID", api.uuid)},
      {"nvmlDeviceGetName", resolve(handle, "nvmlDeviceGetName", api.name)},
      {"nvmlDeviceGetMemoryInfo", resolve(handle, "nvmlDeviceGetMemoryInfo", api.memory_info)},
      {"nvmlDeviceGetComputeRunningProcesses_v3",
       resolve(handle, "nvmlDeviceGetComputeRunningProcesses_v3", api.compute_processes)},
      {"nvmlDeviceGetProcessUtilization", resolve(handle, "nvmlDeviceGetProcessUtilization", api.process_utilization)},
      {"nvmlDeviceGetUtilizationRates", resolve(handle, "nvmlDeviceGetUtilizationRates", api.utilization_rates)},
  };
  for (const auto& [symbol, found] : symbols) {
    if (!found) {
      dlclose(handle);
      return common::fail(library + " has no " + symbol +
                          ": not an NVML library (or one older than the v3 process API)");
    }
  }
  if (nvmlReturn_t r = api.init(); r != NVML_SUCCESS) {
    std::string text = DlNvml::error_text(api, r);
    dlclose(handle);
    return common::fail("nvmlInit_v2: " + text);
  }
  return std::unique_ptr<Nvml>(std::make_unique<DlNvml>(handle, api));
}

}  // namespace kubex::telemetry
