#include "sim/cluster/node_objects.h"

#include <nlohmann/json.hpp>

#include "api/keys.h"
#include "common/hash.h"
#include "sim/cluster/model.h"
#include "sim/gpu/gpu_catalog.h"

namespace kubex::sim::cluster {

using nlohmann::json;

namespace {

// A stable UUID-shaped identifier derived from `seed` (node identities must not change across restarts).
std::string uuid_of(const std::string& seed) {
  std::string h = common::sha256_hex(seed);
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-" +
         h.substr(20, 12);
}

}  // namespace

std::vector<NodeSpec> node_specs(const ClusterConfig& config) {
  std::vector<NodeSpec> out;
  for (const auto& pool : config.pools) {
    for (int i = 0; i < pool.count; ++i) {
      NodeSpec n;
      n.name = pool.name + "-node-" + std::to_string(i);
      n.pool = pool.name;
      n.gpus = pool.gpus_per_node;
      n.gpu_product = pool.gpu_product;
      n.gpu_memory_mib = pool.gpu_memory_mib;
      n.driver_reserve_mib = pool.driver_reserve_mib;
      n.cpu = pool.cpu;
      n.memory = pool.memory;
      n.max_pods = pool.max_pods;
      n.labels = pool.labels;
      n.taints = pool.taints;
      out.push_back(std::move(n));
    }
  }
  out.insert(out.end(), config.nodes.begin(), config.nodes.end());
  return out;
}

json node_object(const NodeSpec& spec, int index) {
  const std::string& name = spec.name;
  json labels = {{"kubernetes.io/hostname", name}, {"kubernetes.io/os", "linux"},
                 {"kubernetes.io/arch", "amd64"},  {"node.kubernetes.io/instance-type", "sim-" + spec.pool},
                 {kNodePoolLabel, spec.pool},      {"sim.kubex.ai/node-index", std::to_string(index)}};
  json annotations = json::object();
  json capacity = {{"cpu", spec.cpu},
                   {"memory", spec.memory},
                   {"pods", std::to_string(spec.max_pods)},
                   {"ephemeral-storage", "100Gi"}};
  if (spec.gpus > 0) {
    // GPU Feature Discovery's labels (SIM-2); the memory only when the model's memory is known (SIM-5).
    labels["nvidia.com/gpu.present"] = "true";
    if (!spec.gpu_product.empty()) labels["nvidia.com/gpu.product"] = spec.gpu_product;
    if (spec.gpu_memory_mib > 0) {
      labels[api::keys::kGpuMemoryLabel] = std::to_string(spec.gpu_memory_mib);
      std::int64_t reserve =
          spec.driver_reserve_mib.value_or(gpu::default_driver_reserve_mib(spec.gpu_memory_mib));
      annotations[kDriverReserveAnnotation] = std::to_string(reserve);
    }
    labels["nvidia.com/gpu.count"] = std::to_string(spec.gpus);
    capacity[api::keys::kGpuResource] = std::to_string(spec.gpus);
  }
  for (const auto& [k, v] : spec.labels) labels[k] = v;
  std::string ip = "10." + std::to_string(index / 62500) + "." + std::to_string(index / 250 % 250) + "." +
                   std::to_string(index % 250 + 2);
  json meta = {{"name", name}, {"labels", labels}};
  if (!annotations.empty()) meta["annotations"] = annotations;
  json node = {
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata", meta},
      {"spec", {{"podCIDR", "10.244." + std::to_string(index % 256) + ".0/24"}}},
      {"status",
       {{"capacity", capacity},
        {"allocatable", capacity},
        {"addresses", {{{"type", "InternalIP"}, {"address", ip}}, {{"type", "Hostname"}, {"address", name}}}},
        {"nodeInfo",
         {{"machineID", common::sha256_hex(name).substr(0, 32)},
          {"systemUUID", uuid_of(name)},
          {"bootID", uuid_of("boot/" + name)},
          {"kernelVersion", "6.1.0-kubex-sim"},
          {"kubeletVersion", "v1.32.0-kubex-sim"},
          {"kubeProxyVersion", "v1.32.0-kubex-sim"},
          {"containerRuntimeVersion", "containerd://1.7.0-kubex-sim"},
          {"osImage", "kubex-sim"},
          {"operatingSystem", "linux"},
          {"architecture", "amd64"}}},
        {"conditions",
         {{{"type", "Ready"},
           {"status", "True"},
           {"reason", "KubeletReady"},
           {"message", "kubelet is posting ready status (simulated)"}},
          {{"type", "MemoryPressure"}, {"status", "False"}, {"reason", "KubeletHasSufficientMemory"}},
          {{"type", "DiskPressure"}, {"status", "False"}, {"reason", "KubeletHasNoDiskPressure"}},
          {{"type", "PIDPressure"}, {"status", "False"}, {"reason", "KubeletHasSufficientPID"}}}}}}};
  for (const auto& t : spec.taints) {
    json taint = {{"key", t.key}, {"effect", t.effect}};
    if (!t.value.empty()) taint["value"] = t.value;
    node["spec"]["taints"].push_back(taint);
  }
  return node;
}

}  // namespace kubex::sim::cluster
