// `kubex gpu-exporter`'s sampling (TEL-1…TEL-3): every interval, read each device, its compute processes and their
// SM samples from NVML, map each process to its container (/proc/<pid>/cgroup under the proc root, then the node's
// pods), run one SeriesState pass and keep the /metrics text: the kubex_gpu_container_* series, device gauges and
// the exporter's own health (passes, NVML errors by call, unmapped processes by reason). A device whose NVML call
// fails is left out of that pass (its series go stale in Prometheus) and the error is counted, never hidden.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/clock.h"
#include "telemetry/nvml.h"
#include "telemetry/series.h"

namespace kubex::telemetry {

struct ExporterOptions {
  std::string node;
  std::string proc_root = "/host/proc";
};

class Exporter {
 public:
  // `containers` returns the node's containers by container ID (NodePods::containers in the command).
  Exporter(std::unique_ptr<Nvml> nvml, std::function<std::map<std::string, NodeContainer>()> containers,
           ExporterOptions options);

  // One pass at `now`: reads NVML and /proc, updates the text render() returns.
  void sample(common::TimePoint now);
  // The latest /metrics body (the families with HELP/TYPE before the first pass).
  std::string render() const;
  std::string driver_version() const { return driver_; }

 private:
  struct DeviceGauges {
    std::string uuid, model;
    std::uint64_t total = 0, used = 0;
    std::uint32_t utilization = 0;
    std::size_t processes = 0;
  };
  std::unique_ptr<Nvml> nvml_;
  std::function<std::map<std::string, NodeContainer>()> containers_;
  ExporterOptions options_;
  std::string driver_;
  SeriesState state_;
  std::map<unsigned, std::uint64_t> last_util_us_;  // per device: newest SM sample seen (the next call's since)

  mutable std::mutex mu_;
  std::vector<api::GpuContainerSample> samples_;
  std::vector<DeviceGauges> devices_;
  std::map<std::string, std::size_t> unmapped_;
  std::map<std::string, std::uint64_t> nvml_errors_;  // call -> count
  std::uint64_t passes_ = 0;
  std::string last_error_;
};

}  // namespace kubex::telemetry
