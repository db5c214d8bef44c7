// The simulated cluster's shape (kubex-sim serve --config FILE): node pools, kubelet timings, GPU memory
// isolation and KubeAI model profiles.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "sim/cluster/kai_modes.h"

namespace kubex::sim::cluster {

struct Taint {
  std::string key, value, effect;  // effect: NoSchedule, PreferNoSchedule or NoExecute
};

// A pool of identical nodes named <name>-node-<i>. It names its GPU model in `gpuProduct` (SIM-5): a model
// of sim/gpu/gpu_catalog.h gets its memory from there unless `gpuMemoryMiB` is given; any other model needs
// `gpuMemoryMiB`. Without `gpuProduct` a pool keeps the historical default, Tesla-T4 with 16384 MiB.
struct NodePool {
  std::string name;
  int count = 1;
  int gpus_per_node = 0;
  std::string gpu_product = "Tesla-T4";
  std::int64_t gpu_memory_mib = 16384;
  // driverReserveMiB: memory the driver keeps on every GPU; unset = gpu::default_driver_reserve_mib.
  std::optional<std::int64_t> driver_reserve_mib;
  std::string cpu = "16";
  std::string memory = "64Gi";
  int max_pods = 110;
  std::map<std::string, std::string> labels;
  std::vector<Taint> taints;
};

// One node to create: pools expand into these (node_objects.h); `serve --trace` lists them one by one.
struct NodeSpec {
  std::string name, pool;
  int gpus = 0;
  std::string gpu_product;                         // nvidia.com/gpu.product ("" = none)
  std::int64_t gpu_memory_mib = 0;                 // nvidia.com/gpu.memory (0 = unknown: no label)
  std::optional<std::int64_t> driver_reserve_mib;  // unset = gpu::default_driver_reserve_mib
  std::string cpu = "16";
  std::string memory = "64Gi";
  int max_pods = 110;
  std::map<std::string, std::string> labels;
  std::vector<Taint> taints;
};

struct KubeletConfig {
  std::chrono::milliseconds start_delay{1000};   // bound -> Running
  std::chrono::milliseconds ready_delay{1000};   // Running -> Ready
  std::chrono::milliseconds stop_delay{500};     // graceful deletion -> gone (capped by the grace period)
  std::chrono::milliseconds crash_backoff_base{10000};
  std::chrono::milliseconds crash_backoff_max{300000};
  std::chrono::milliseconds job_run_time{5000};  // default run time of pods with restartPolicy Never/OnFailure
};

struct ModelProfile {
  std::int64_t gpus = 1;
  std::string cpu = "4";
  std::string memory = "16Gi";
};

struct ClusterConfig {
  std::vector<NodePool> pools;
  std::vector<NodeSpec> nodes;  // explicit nodes (a trace's), created after the pools' nodes
  KubeletConfig kubelet;
  std::string memory_isolation = "None";  // None | HAMiCore (deprecated by gpu_sharing_mode, KAI-1)
  // SIM-4: the KAI version the KAI-like scheduler and the GPU model follow (`kaiVersion`, `--kai-version`), and
  // the sharing mode (`gpuSharingMode`, `--gpu-sharing-mode`; unset = derived from memory_isolation).
  KaiVersion kai_version = KaiVersion::k0_18;
  std::optional<GpuSharingMode> gpu_sharing_mode;
  std::map<std::string, ModelProfile> model_profiles;
  std::string vllm_image = "vllm/vllm-openai:v0.6.3";
  std::chrono::milliseconds gpu_sample_interval{1000};

  // The KAI version and the effective sharing mode (gpu_sharing_mode, else derived from memory_isolation).
  KaiSettings kai() const;

  // 3 nodes with 2 Tesla-T4 GPUs each plus one CPU node.
  static ClusterConfig defaults();
  static common::Result<ClusterConfig> parse(const nlohmann::json& doc);
  static common::Result<ClusterConfig> load(const std::string& path);
};

// Applies the --kai-version and --gpu-sharing-mode flags (empty = not given: the file's value, else the default)
// over `c` and checks the result; errors name the flag (or the file's key) and the supported values.
common::Result<void> apply_kai_flags(ClusterConfig& c, const std::string& kai_version,
                                     const std::string& gpu_sharing_mode);

}  // namespace kubex::sim::cluster
