#include "telemetry/exporter.h"

#include <algorithm>
#include <charconv>

#include "api/gpu_series.h"
#include "common/log.h"

namespace kubex::telemetry {

namespace {

// "nvmlDeviceGetMemoryInfo(1): GPU is lost" -> "nvmlDeviceGetMemoryInfo".
std::string call_of(const std::string& error) {
  const auto end = error.find_first_of("(:");
  return end == std::string::npos ? error : error.substr(0, end);
}

void number(std::string& out, double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, ec == std::errc() ? end : buf);
}

void family(std::string& out, const char* name, const char* type, const char* help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

void series(std::string& out, const char* name, const std::vector<std::pair<const char*, std::string>>& labels,
            double value) {
  out += name;
  if (!labels.empty()) {
    out += '{';
    for (std::size_t i = 0; i < labels.size(); ++i) {
      if (i) out += ',';
      out += labels[i].first;
      out += "=\"";
      out += api::escape_label_value(labels[i].second);
      out += '"';
    }
    out += '}';
  }
  out += ' ';
  number(out, value);
  out += '\n';
}

}  // namespace

Exporter::Exporter(std::unique_ptr<Nvml> nvml, std::function<std::map<std::string, NodeContainer>()> containers,
                   ExporterOptions options)
    : nvml_(std::move(nvml)), containers_(std::move(containers)), options_(std::move(options)) {
  if (auto v = nvml_->driver_version()) driver_ = *v;
}

void Exporter::sample(common::TimePoint now) {
  std::map<std::string, std::uint64_t> errors;
  const auto failed = [&](const common::Error& e) {
    ++errors[call_of(e.str())];
    last_error_ = e.str();
  };
  PassInput in;
  in.node = options_.node;
  in.now = now;
  std::vector<DeviceGauges> gauges;
  auto count = nvml_->device_count();
  if (!count) failed(count.error());
  for (unsigned i = 0; count && i < *count; ++i) {
    auto info = nvml_->device(i);
    if (!info) {
      failed(info.error());
      continue;
    }
    auto procs = nvml_->processes(i);
    if (!procs) {
      failed(procs.error());
      continue;
    }
    auto util = nvml_->process_utilization(i, last_util_us_[i]);
    if (!util) {
      failed(util.error());
      util = std::vector<NvmlProcessUtilization>{};
    }
    for (const NvmlProcessUtilization& u : *util) last_util_us_[i] = std::max(last_util_us_[i], u.timestamp_us);
    DeviceGauges g{info->uuid, info->name, info->memory_total_bytes, info->memory_used_bytes, 0, procs->size()};
    if (auto rates = nvml_->utilization(i)) {
      g.utilization = rates->gpu_percent;
    } else {
      failed(rates.error());
    }
    gauges.push_back(g);
    for (const NvmlProcess& p : *procs) {
      if (!in.containers_of_pids.contains(p.pid)) in.containers_of_pids[p.pid] = container_of_pid(options_.proc_root, p.pid);
    }
    in.devices.push_back({std::move(*info), std::move(*procs), std::move(*util)});
  }
  in.node_containers = containers_();
  PassOutput out = state_.pass(in);

  std::lock_guard lock(mu_);
  samples_ = std::move(out.samples);
  unmapped_ = std::move(out.unmapped);
  devices_ = std::move(gauges);
  for (const auto& [call, n] : errors) nvml_errors_[call] += n;
  ++passes_;
}

std::string Exporter::render() const {
  std::lock_guard lock(mu_);
  std::string out = api::render_gpu_series(samples_);
  const std::string& node = options_.node;
  family(out, "kubex_gpu_device_memory_total_bytes", "gauge", "Memory of the GPU device, bytes (NVML).");
  for (const auto& d : devices_) series(out, "kubex_gpu_device_memory_total_bytes", {{"node", node}, {"gpu_uuid", d.uuid}, {"gpu_model", d.model}}, static_cast<double>(d.total));
  family(out, "kubex_gpu_device_memory_used_bytes", "gauge", "Memory in use on the GPU device, bytes (NVML).");
  for (const auto& d : devices_) series(out, "kubex_gpu_device_memory_used_bytes", {{"node", node}, {"gpu_uuid", d.uuid}, {"gpu_model", d.model}}, static_cast<double>(d.used));
  family(out, "kubex_gpu_device_utilization_percent", "gauge",
         "Percent of the last sample period during which a kernel ran on the GPU device (NVML).");
  for (const auto& d : devices_) series(out, "kubex_gpu_device_utilization_percent", {{"node", node}, {"gpu_uuid", d.uuid}, {"gpu_model", d.model}}, d.utilization);
  family(out, "kubex_gpu_device_processes", "gauge", "Compute processes on the GPU device (NVML).");
  for (const auto& d : devices_) series(out, "kubex_gpu_device_processes", {{"node", node}, {"gpu_uuid", d.uuid}, {"gpu_model", d.model}}, static_cast<double>(d.processes));
  family(out, "kubex_gpu_exporter_samples_total", "counter", "Sampling passes of the exporter.");
  series(out, "kubex_gpu_exporter_samples_total", {{"node", node}}, static_cast<double>(passes_));
  family(out, "kubex_gpu_exporter_nvml_errors_total", "counter", "NVML calls that failed, by call.");
  for (const auto& [call, n] : nvml_errors_) series(out, "kubex_gpu_exporter_nvml_errors_total", {{"node", node}, {"call", call}}, static_cast<double>(n));
  family(out, "kubex_gpu_exporter_unmapped_processes", "gauge",
         "GPU processes of the last pass not attributed to a container, by reason (no-container: the cgroup names "
         "no pod container; unknown-pod: no pod of this node runs it; no-gpu-allocation: its pod holds no GPU).");
  for (const char* reason : {kUnmappedNoContainer, kUnmappedUnknownPod, kUnmappedNoAllocation}) {
    auto it = unmapped_.find(reason);
    series(out, "kubex_gpu_exporter_unmapped_processes", {{"node", node}, {"reason", reason}},
           it == unmapped_.end() ? 0.0 : static_cast<double>(it->second));
  }
  family(out, "kubex_gpu_exporter_info", "gauge", "The exporter's NVML driver version (value 1).");
  series(out, "kubex_gpu_exporter_info", {{"node", node}, {"driver_version", driver_}}, 1);
  return out;
}

}  // namespace kubex::telemetry
