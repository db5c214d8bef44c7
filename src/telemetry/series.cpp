// One sampling pass of `kubex gpu-exporter` (TEL-2, TEL-3): NVML's processes -> containers -> series.
#include "telemetry/series.h"

#include <algorithm>
#include <set>
#include <string_view>
#include <tuple>
#include <utility>

namespace kubex::telemetry {

namespace {

// One container's processes on one device.
struct Group {
  const NodeContainer* container = nullptr;
  std::set<std::uint32_t> pids;  // a pid listed twice on one device counts its SM once
  std::int64_t memory_bytes = 0;
};

// The newest sample per pid of one device (by NVML's timestamp; equal timestamps: the first listed).
std::map<std::uint32_t, const NvmlProcessUtilization*> newest_by_pid(const std::vector<NvmlProcessUtilization>& u) {
  std::map<std::uint32_t, const NvmlProcessUtilization*> out;
  for (const auto& s : u) {
    auto [it, inserted] = out.try_emplace(s.pid, &s);
    if (!inserted && s.timestamp_us > it->second->timestamp_us) it->second = &s;
  }
  return out;
}

// The counter's identity: a new pod (UID), a restarted container or another device is another series.
std::string counter_key(const NodeContainer& c, std::string_view gpu_uuid) {
  std::string key;
  key.reserve(c.pod_uid.size() + c.container.size() + gpu_uuid.size() + 16);
  key += c.pod_uid;
  key += '/';
  key += c.container;
  key += '/';
  key += std::to_string(c.restart_count);
  key += '/';
  key += gpu_uuid;
  return key;
}

}  // namespace

PassOutput SeriesState::pass(const PassInput& in) {
  PassOutput out;
  // Seconds since the previous pass; none on the state's first pass (and never negative: a clock stepped back
  // adds nothing rather than taking from the counter).
  std::optional<double> elapsed;
  if (last_) elapsed = std::max(0.0, std::chrono::duration<double>(in.now - *last_).count());

  std::map<std::string, double> counters;  // the series of this pass only: one that disappears is dropped
  for (const DeviceRead& dev : in.devices) {
    auto newest = newest_by_pid(dev.utilization);
    std::map<std::string_view, Group> groups;  // container ID -> its processes on this device
    for (const NvmlProcess& p : dev.processes) {
      // TEL-2: a process is attributed through its cgroup and the node's pods, or counted as unmapped.
      auto ref = in.containers_of_pids.find(p.pid);
      if (ref == in.containers_of_pids.end() || !ref->second) {
        ++out.unmapped[kUnmappedNoContainer];
        continue;
      }
      auto container = in.node_containers.find(ref->second->container_id);
      if (container == in.node_containers.end()) {
        ++out.unmapped[kUnmappedUnknownPod];
        continue;
      }
      if (container->second.allocation_type.empty()) {
        ++out.unmapped[kUnmappedNoAllocation];
        continue;
      }
      Group& g = groups[container->first];
      g.container = &container->second;
      g.pids.insert(p.pid);
      if (p.memory_known) g.memory_bytes += static_cast<std::int64_t>(p.used_memory_bytes);
    }

    const auto device_bytes = static_cast<std::int64_t>(dev.info.memory_total_bytes);
    for (const auto& [id, g] : groups) {
      const NodeContainer& c = *g.container;
      api::GpuContainerSample s;
      s.ns = c.ns;
      s.pod = c.pod;
      s.container = c.container;
      s.node = in.node;
      s.gpu_uuid = dev.info.uuid;
      s.gpu_model = dev.info.name;
      s.allocation_type = c.allocation_type;
      // TEL-3: percent of the whole device, summed over the container's processes; a process NVML has no
      // utilization sample for (none in its window) contributes 0.
      for (std::uint32_t pid : g.pids) {
        if (auto u = newest.find(pid); u != newest.end()) s.sm_percent += u->second->sm_percent;
      }
      s.memory_bytes = g.memory_bytes;
      // TEL-3: relative to the allocation on this device (gpu-fraction × device, or the one device).
      s.memory_total_bytes = api::gpu_allocation_bytes(c.allocation_type, c.gpu_fraction, device_bytes);
      s.memory_footprint_percent = api::gpu_footprint_percent(s.memory_bytes, s.memory_total_bytes);
      s.pod_uid = c.pod_uid;
      s.restart_count = c.restart_count;

      std::string key = counter_key(c, s.gpu_uuid);
      double total = 0;
      if (auto prev = counters_.find(key); prev != counters_.end() && elapsed) {
        total = prev->second + s.sm_percent * *elapsed;
      }
      s.sm_percent_seconds_total = total;
      counters[std::move(key)] = total;
      out.samples.push_back(std::move(s));
    }
  }
  counters_ = std::move(counters);
  last_ = in.now;

  std::sort(out.samples.begin(), out.samples.end(), [](const api::GpuContainerSample& a,
                                                       const api::GpuContainerSample& b) {
    return std::tie(a.ns, a.pod, a.container, a.gpu_uuid) < std::tie(b.ns, b.pod, b.container, b.gpu_uuid);
  });
  return out;
}

}  // namespace kubex::telemetry
