#include "sim/cluster/config.h"

#include <nlohmann/json.hpp>

#include "common/duration.h"
#include "common/file_io.h"
#include "common/quantity.h"
#include "common/yaml.h"

namespace kubex::sim::cluster {

using nlohmann::json;

ClusterConfig ClusterConfig::defaults() {
  ClusterConfig c;
  NodePool gpu;
  gpu.name = "t4";
  gpu.count = 3;
  gpu.gpus_per_node = 2;
  gpu.labels = {{"cloud.google.com/gke-accelerator", "nvidia-tesla-t4"}};
  NodePool cpu;
  cpu.name = "cpu";
  cpu.count = 1;
  cpu.gpus_per_node = 0;
  cpu.cpu = "8";
  cpu.memory = "32Gi";
  c.pools = {gpu, cpu};
  c.model_profiles = {{"nvidia-gpu-t4", {1, "4", "16Gi"}}, {"nvidia-gpu-l4", {1, "4", "16Gi"}},
                      {"nvidia-gpu-a100-80gb", {1, "8", "64Gi"}}, {"cpu", {0, "2", "4Gi"}}};
  return c;
}

namespace {

common::Result<std::chrono::milliseconds> duration_at(const json& obj, const char* key, std::chrono::milliseconds def,
                                                      const std::string& path) {
  if (!obj.contains(key)) return def;
  if (!obj[key].is_string()) return common::fail("must be a duration string such as \"1s\"", path + "." + key);
  auto d = common::parse_go_duration(obj[key].get<std::string>());
  if (!d || d->count() < 0) return common::fail("must be a valid duration", path + "." + key);
  return std::chrono::duration_cast<std::chrono::milliseconds>(*d);
}

std::string quantity_string(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

}  // namespace

common::Result<ClusterConfig> ClusterConfig::parse(const json& doc) {
  if (!doc.is_object()) return common::fail("the cluster configuration must be a YAML mapping");
  ClusterConfig c = defaults();
  if (doc.contains("nodePools")) {
    if (!doc["nodePools"].is_array() || doc["nodePools"].empty()) {
      return common::fail("must be a non-empty list", "nodePools");
    }
    c.pools.clear();
    for (std::size_t i = 0; i < doc["nodePools"].size(); ++i) {
      const json& p = doc["nodePools"][i];
      std::string path = "nodePools[" + std::to_string(i) + "]";
      if (!p.is_object()) return common::fail("must be a mapping", path);
      NodePool np;
      np.name = p.value("name", "");
      if (np.name.empty()) return common::fail("required", path + ".name");
      for (const auto& other : c.pools) {
        if (other.name == np.name) return common::fail("duplicate pool name \"" + np.name + "\"", path + ".name");
      }
      np.count = p.value("count", 1);
      if (np.count < 0) return common::fail("must be >= 0", path + ".count");
      np.gpus_per_node = p.value("gpusPerNode", 0);
      if (np.gpus_per_node < 0) return common::fail("must be >= 0", path + ".gpusPerNode");
      np.gpu_product = p.value("gpuProduct", np.gpu_product);
      np.gpu_memory_mib = p.value("gpuMemoryMiB", np.gpu_memory_mib);
      if (np.gpu_memory_mib <= 0) return common::fail("must be > 0", path + ".gpuMemoryMiB");
      if (p.contains("cpu")) np.cpu = quantity_string(p["cpu"]);
      if (p.contains("memory")) np.memory = quantity_string(p["memory"]);
      for (const auto& [field, value] : {std::pair{"cpu", np.cpu}, std::pair{"memory", np.memory}}) {
        if (!common::Quantity::parse(value)) return common::fail("must be a valid quantity", path + "." + field);
      }
      np.max_pods = p.value("maxPods", 110);
      if (p.contains("labels")) {
        if (!p["labels"].is_object()) return common::fail("must be a mapping", path + ".labels");
        for (auto& [k, v] : p["labels"].items()) np.labels[k] = v.is_string() ? v.get<std::string>() : v.dump();
      }
      if (p.contains("taints")) {
        if (!p["taints"].is_array()) return common::fail("must be a list", path + ".taints");
        for (std::size_t t = 0; t < p["taints"].size(); ++t) {
          const json& taint = p["taints"][t];
          std::string effect = taint.value("effect", "");
          if (!taint.contains("key") ||
              (effect != "NoSchedule" && effect != "PreferNoSchedule" && effect != "NoExecute")) {
            return common::fail("needs a key and an effect of NoSchedule, PreferNoSchedule or NoExecute",
                                path + ".taints[" + std::to_string(t) + "]");
          }
          np.taints.push_back({taint.value("key", ""), taint.value("value", ""), effect});
        }
      }
      c.pools.push_back(std::move(np));
    }
  }
  if (doc.contains("kubelet")) {
    const json& k = doc["kubelet"];
    if (!k.is_object()) return common::fail("must be a mapping", "kubelet");
    auto set = [&](const char* key, std::chrono::milliseconds& field) -> common::Result<void> {
      auto d = duration_at(k, key, field, "kubelet");
      if (!d) return std::unexpected(d.error());
      field = *d;
      return {};
    };
    for (auto [key, field] : {std::pair{"startDelay", &c.kubelet.start_delay},
                              std::pair{"readyDelay", &c.kubelet.ready_delay},
                              std::pair{"stopDelay", &c.kubelet.stop_delay},
                              std::pair{"crashBackoffBase", &c.kubelet.crash_backoff_base},
                              std::pair{"crashBackoffMax", &c.kubelet.crash_backoff_max},
                              std::pair{"jobRunTime", &c.kubelet.job_run_time}}) {
      if (auto r = set(key, *field); !r) return std::unexpected(r.error());
    }
  }
  if (doc.contains("memoryIsolation")) {
    c.memory_isolation = doc.value("memoryIsolation", "");
    if (c.memory_isolation != "None" && c.memory_isolation != "HAMiCore") {
      return common::fail("unsupported value \"" + c.memory_isolation + "\": supported values: \"None\", \"HAMiCore\"",
                          "memoryIsolation");
    }
  }
  if (doc.contains("modelProfiles")) {
    if (!doc["modelProfiles"].is_object()) return common::fail("must be a mapping", "modelProfiles");
    for (auto& [name, p] : doc["modelProfiles"].items()) {
      ModelProfile mp;
      mp.gpus = p.value("gpus", std::int64_t{1});
      if (p.contains("cpu")) mp.cpu = quantity_string(p["cpu"]);
      if (p.contains("memory")) mp.memory = quantity_string(p["memory"]);
      c.model_profiles[name] = mp;
    }
  }
  c.vllm_image = doc.value("vllmImage", c.vllm_image);
  if (auto d = duration_at(doc, "gpuSampleInterval", c.gpu_sample_interval, ""); d) {
    c.gpu_sample_interval = *d;
  } else {
    return std::unexpected(d.error());
  }
  return c;
}

common::Result<ClusterConfig> ClusterConfig::load(const std::string& path) {
  auto text = common::read_file(path);
  if (!text) return std::unexpected(text.error());
  auto doc = common::yaml_to_json(*text);
  if (!doc) return common::fail(path + ": " + doc.error().str());
  auto c = parse(*doc);
  if (!c) return common::fail(path + ": " + c.error().str());
  return c;
}

}  // namespace kubex::sim::cluster
