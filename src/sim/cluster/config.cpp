#include "sim/cluster/config.h"

#include <nlohmann/json.hpp>

#include "common/duration.h"
#include "common/file_io.h"
#include "common/quantity.h"
#include "common/yaml.h"
#include "sim/gpu/gpu_catalog.h"

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

// An integer field (absent: `def`); a value of another type is an error naming the field, not an exception.
common::Result<std::int64_t> int_at(const json& obj, const char* key, std::int64_t def,
                                    const std::string& path) {
  if (!obj.contains(key)) return def;
  const json& v = obj[key];
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number_float() &&
      v.get<double>() == static_cast<double>(static_cast<std::int64_t>(v.get<double>()))) {
    return static_cast<std::int64_t>(v.get<double>());
  }
  return common::fail("must be an integer", path + "." + key);
}

// The GPU fields of a pool (SIM-5): gpuProduct, gpuMemoryMiB (from the model table when absent) and
// driverReserveMiB.
common::Result<void> parse_pool_gpu(const json& p, const std::string& path, NodePool& np) {
  bool named = p.contains("gpuProduct");
  if (named) {
    if (!p["gpuProduct"].is_string() || p["gpuProduct"].get<std::string>().empty()) {
      return common::fail("must be a non-empty string", path + ".gpuProduct");
    }
    np.gpu_product = p["gpuProduct"].get<std::string>();
  }
  if (p.contains("gpuMemoryMiB")) {
    auto m = int_at(p, "gpuMemoryMiB", 0, path);
    if (!m) return std::unexpected(m.error());
    if (*m <= 0) return common::fail("must be > 0", path + ".gpuMemoryMiB");
    np.gpu_memory_mib = *m;
  } else if (named) {
    // Without gpuProduct the pool keeps the historical default (Tesla-T4, 16384 MiB).
    if (const auto* known = gpu::find_known_gpu(np.gpu_product)) {
      np.gpu_memory_mib = known->memory_mib;
    } else if (np.gpus_per_node > 0) {
      return common::fail(
          "required for GPU model \"" + np.gpu_product + "\" (known models: " + gpu::known_gpu_names() + ")",
          path + ".gpuMemoryMiB");
    }
  }
  if (p.contains("driverReserveMiB")) {
    auto r = int_at(p, "driverReserveMiB", 0, path);
    if (!r) return std::unexpected(r.error());
    if (*r < 0 || *r >= np.gpu_memory_mib) {
      return common::fail(
          "must be >= 0 and less than the GPU memory (" + std::to_string(np.gpu_memory_mib) + " MiB)",
          path + ".driverReserveMiB");
    }
    np.driver_reserve_mib = *r;
  }
  return {};
}

std::string quantity_string(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

constexpr const char* kKaiVersions = "\"0.17\", \"0.18\"";
constexpr const char* kSharingModes = "\"Disabled\", \"NonMemoryEnforced\", \"HamiCore\", \"NvFractions\"";

// kaiVersion and gpuSharingMode (SIM-4, KAI-1). A number such as `kaiVersion: 0.18` is read as its text.
common::Result<void> parse_kai_keys(const json& doc, ClusterConfig& c) {
  if (doc.contains("kaiVersion")) {
    const json& v = doc["kaiVersion"];
    std::string text = v.is_string() ? v.get<std::string>() : v.dump();
    auto version = parse_kai_version(text);
    if (!version) {
      return common::fail("unsupported value \"" + text + "\": supported values: " + kKaiVersions, "kaiVersion");
    }
    c.kai_version = *version;
  }
  if (doc.contains("gpuSharingMode")) {
    const json& v = doc["gpuSharingMode"];
    std::string text = v.is_string() ? v.get<std::string>() : v.dump();
    auto mode = parse_gpu_sharing_mode(text);
    if (!mode) {
      return common::fail("unsupported value \"" + text + "\": supported values: " + kSharingModes,
                          "gpuSharingMode");
    }
    c.gpu_sharing_mode = *mode;
  }
  if (auto problem = kai_settings_problem(c.kai()); !problem.empty()) {
    return common::fail(problem, "gpuSharingMode");
  }
  return {};
}

}  // namespace

KaiSettings ClusterConfig::kai() const {
  return {kai_version, gpu_sharing_mode.value_or(mode_from_memory_isolation(memory_isolation))};
}

common::Result<void> apply_kai_flags(ClusterConfig& c, const std::string& kai_version,
                                     const std::string& gpu_sharing_mode) {
  if (!kai_version.empty()) {
    auto v = parse_kai_version(kai_version);
    if (!v) {
      return common::fail("invalid --kai-version \"" + kai_version + "\": supported values: " + kKaiVersions);
    }
    c.kai_version = *v;
  }
  if (!gpu_sharing_mode.empty()) {
    auto m = parse_gpu_sharing_mode(gpu_sharing_mode);
    if (!m) {
      return common::fail("invalid --gpu-sharing-mode \"" + gpu_sharing_mode + "\": supported values: " +
                          kSharingModes);
    }
    c.gpu_sharing_mode = *m;
  }
  if (auto problem = kai_settings_problem(c.kai()); !problem.empty()) {
    return common::fail("invalid --kai-version " + std::string(kai_version_name(c.kai_version)) +
                        " with --gpu-sharing-mode " + gpu_sharing_mode_name(c.kai().mode) + ": " + problem);
  }
  return {};
}

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
      if (p.contains("name") && !p["name"].is_string()) {
        return common::fail("must be a string", path + ".name");
      }
      np.name = p.value("name", "");
      if (np.name.empty()) return common::fail("required", path + ".name");
      for (const auto& other : c.pools) {
        if (other.name == np.name) return common::fail("duplicate pool name \"" + np.name + "\"", path + ".name");
      }
      for (auto [key, field] : {std::pair{"count", &np.count}, std::pair{"gpusPerNode", &np.gpus_per_node}}) {
        auto v = int_at(p, key, *field, path);
        if (!v) return std::unexpected(v.error());
        if (*v < 0 || *v > 1'000'000) return common::fail("must be between 0 and 1000000", path + "." + key);
        *field = static_cast<int>(*v);
      }
      if (auto g = parse_pool_gpu(p, path, np); !g) return std::unexpected(g.error());
      if (p.contains("cpu")) np.cpu = quantity_string(p["cpu"]);
      if (p.contains("memory")) np.memory = quantity_string(p["memory"]);
      for (const auto& [field, value] : {std::pair{"cpu", np.cpu}, std::pair{"memory", np.memory}}) {
        if (!common::Quantity::parse(value)) return common::fail("must be a valid quantity", path + "." + field);
      }
      auto max_pods = int_at(p, "maxPods", 110, path);
      if (!max_pods) return std::unexpected(max_pods.error());
      if (*max_pods < 0 || *max_pods > 1'000'000) {
        return common::fail("must be between 0 and 1000000", path + ".maxPods");
      }
      np.max_pods = static_cast<int>(*max_pods);
      if (p.contains("labels")) {
        if (!p["labels"].is_object()) return common::fail("must be a mapping", path + ".labels");
        for (auto& [k, v] : p["labels"].items()) np.labels[k] = v.is_string() ? v.get<std::string>() : v.dump();
      }
      if (p.contains("taints")) {
        if (!p["taints"].is_array()) return common::fail("must be a list", path + ".taints");
        for (std::size_t t = 0; t < p["taints"].size(); ++t) {
          const json& taint = p["taints"][t];
          bool strings = taint.is_object() && taint.value("key", json("")).is_string() &&
                         taint.value("value", json("")).is_string() &&
                         taint.value("effect", json("")).is_string();
          std::string effect = strings ? taint.value("effect", "") : "";
          if (!strings || !taint.contains("key") ||
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
  if (auto k = parse_kai_keys(doc, c); !k) return std::unexpected(k.error());
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
