// SIM-5 and SIM-2's GFD labels: pools name a GPU model whose memory comes from the model table unless the
// pool file gives it, with a driver reserve; every GPU node carries nvidia.com/gpu.present, .product, .memory
// and .count.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/cluster/config.h"
#include "sim/cluster/model.h"
#include "sim/cluster/node_objects.h"

using namespace kubex::sim::cluster;
using nlohmann::json;

namespace {

kubex::common::Result<ClusterConfig> parse_pools(const std::string& pools) {
  return ClusterConfig::parse(json::parse(R"({"nodePools": )" + pools + "}"));
}

std::string error_of(const std::string& pools) {
  auto c = parse_pools(pools);
  return c ? std::string("(parsed)") : c.error().str();
}

}  // namespace

// SIM-5
TEST(GpuPools, AKnownModelWithoutMemoryGetsTheModelsMemory) {
  auto c = parse_pools(R"([{"name": "a", "gpusPerNode": 1, "gpuProduct": "T4"},
                           {"name": "b", "gpusPerNode": 8, "gpuProduct": "NVIDIA-A100-SXM4-80GB"},
                           {"name": "c", "gpusPerNode": 1, "gpuProduct": "L4", "gpuMemoryMiB": 20000}])");
  ASSERT_TRUE(c.has_value()) << c.error().str();
  EXPECT_EQ(c->pools[0].gpu_memory_mib, 15360);
  EXPECT_EQ(c->pools[1].gpu_memory_mib, 81920);
  EXPECT_EQ(c->pools[2].gpu_memory_mib, 20000) << "gpuMemoryMiB, when given, always wins";
}

// SIM-5
TEST(GpuPools, AnUnknownModelNeedsItsMemoryInThePoolFile) {
  EXPECT_EQ(
      error_of(R"([{"name": "a", "gpusPerNode": 1}, {"name": "b", "gpusPerNode": 1},
                         {"name": "c", "gpusPerNode": 8, "gpuProduct": "G2"}])"),
      "nodePools[2].gpuMemoryMiB: required for GPU model \"G2\" (known models: T4, L4, A10, P100, V100M16, "
      "V100M32, A100-40GB, A100-80GB, H100, H200)");
  auto given = parse_pools(R"([{"name": "g", "gpusPerNode": 8, "gpuProduct": "G2", "gpuMemoryMiB": 32768}])");
  ASSERT_TRUE(given.has_value()) << given.error().str();
  EXPECT_EQ(given->pools[0].gpu_memory_mib, 32768);
  EXPECT_TRUE(parse_pools(R"([{"name": "cpu", "gpusPerNode": 0, "gpuProduct": "G2"}])").has_value())
      << "a pool without GPUs needs no GPU memory";
}

// SIM-5: pools without gpuProduct keep the historical default (the demo and older pool files rely on it).
TEST(GpuPools, APoolWithoutAModelKeepsTheHistoricalDefault) {
  auto c = parse_pools(R"([{"name": "t", "gpusPerNode": 2}])");
  ASSERT_TRUE(c.has_value()) << c.error().str();
  EXPECT_EQ(c->pools[0].gpu_product, "Tesla-T4");
  EXPECT_EQ(c->pools[0].gpu_memory_mib, 16384);
  EXPECT_FALSE(c->pools[0].driver_reserve_mib.has_value());
  auto d = ClusterConfig::defaults();
  EXPECT_EQ(d.pools[0].gpu_product, "Tesla-T4");
  EXPECT_EQ(d.pools[0].gpu_memory_mib, 16384);
}

// SIM-5
TEST(GpuPools, DriverReserveIsAPoolFieldBelowTheMemory) {
  auto c = parse_pools(R"([{"name": "a", "gpusPerNode": 1, "gpuProduct": "T4", "driverReserveMiB": 300},
                           {"name": "b", "gpusPerNode": 1, "gpuProduct": "T4", "driverReserveMiB": 0}])");
  ASSERT_TRUE(c.has_value()) << c.error().str();
  EXPECT_EQ(c->pools[0].driver_reserve_mib, 300);
  EXPECT_EQ(c->pools[1].driver_reserve_mib, 0);
  EXPECT_EQ(error_of(R"([{"name": "a", "gpusPerNode": 1, "gpuProduct": "T4", "driverReserveMiB": 15360}])"),
            "nodePools[0].driverReserveMiB: must be >= 0 and less than the GPU memory (15360 MiB)");
  EXPECT_EQ(error_of(R"([{"name": "a", "gpusPerNode": 1, "driverReserveMiB": -1}])"),
            "nodePools[0].driverReserveMiB: must be >= 0 and less than the GPU memory (16384 MiB)");
}

// Values of the wrong type are errors naming the field, never exceptions.
TEST(GpuPools, WrongTypesAreFieldErrors) {
  EXPECT_EQ(error_of(R"([{"name": "a", "gpusPerNode": 1, "gpuMemoryMiB": "lots"}])"),
            "nodePools[0].gpuMemoryMiB: must be an integer");
  EXPECT_EQ(error_of(R"([{"name": "a", "gpusPerNode": 1, "gpuProduct": 4}])"),
            "nodePools[0].gpuProduct: must be a non-empty string");
  EXPECT_EQ(error_of(R"([{"name": "a", "gpusPerNode": "two"}])"),
            "nodePools[0].gpusPerNode: must be an integer");
  EXPECT_EQ(error_of(R"([{"name": "a", "count": 1.5}])"), "nodePools[0].count: must be an integer");
  EXPECT_EQ(error_of(R"([{"name": "a", "maxPods": []}])"), "nodePools[0].maxPods: must be an integer");
  EXPECT_EQ(error_of(R"([{"name": 7}])"), "nodePools[0].name: must be a string");
  EXPECT_EQ(error_of(R"([{"name": "a", "taints": ["x"]}])").rfind("nodePools[0].taints[0]: ", 0), 0u);
  EXPECT_EQ(error_of(R"([{"name": "a", "gpusPerNode": 1, "gpuMemoryMiB": 0}])"),
            "nodePools[0].gpuMemoryMiB: must be > 0");
}

// SIM-2: GPU Feature Discovery's labels on every GPU node, here the default cluster's (the demo's).
TEST(GpuPools, EveryGpuNodeOfTheDefaultClusterCarriesTheGfdLabels) {
  auto specs = node_specs(ClusterConfig::defaults());
  ASSERT_EQ(specs.size(), 4u);
  int gpu_nodes = 0;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    json node = node_object(specs[i], static_cast<int>(i));
    const json& labels = node["metadata"]["labels"];
    EXPECT_EQ(labels[kNodePoolLabel], specs[i].pool);
    if (specs[i].gpus == 0) {
      EXPECT_FALSE(labels.contains("nvidia.com/gpu.present")) << specs[i].name;
      EXPECT_FALSE(node["status"]["capacity"].contains("nvidia.com/gpu"));
      continue;
    }
    ++gpu_nodes;
    EXPECT_EQ(labels["nvidia.com/gpu.present"], "true");
    EXPECT_EQ(labels["nvidia.com/gpu.product"], "Tesla-T4");
    EXPECT_EQ(labels["nvidia.com/gpu.memory"], "16384");
    EXPECT_EQ(labels["nvidia.com/gpu.count"], "2");
    EXPECT_EQ(node["status"]["allocatable"]["nvidia.com/gpu"], "2");
    EXPECT_EQ(node["metadata"]["annotations"][kDriverReserveAnnotation], "492");
  }
  EXPECT_EQ(gpu_nodes, 3);
  EXPECT_EQ(node_object(specs[0], 0)["status"]["addresses"][0]["address"], "10.0.0.2");
  EXPECT_EQ(node_object(specs[0], 251)["status"]["addresses"][0]["address"], "10.0.1.3");
}

// SIM-5: a model without a known memory gets no nvidia.com/gpu.memory label (and no reserve) rather than a
// guess.
TEST(GpuPools, ANodeOfUnknownMemoryHasNoMemoryLabel) {
  NodeSpec spec;
  spec.name = "openb-node-0001";
  spec.pool = "g2";
  spec.gpus = 8;
  spec.gpu_product = "G2";
  json node = node_object(spec, 0);
  const json& labels = node["metadata"]["labels"];
  EXPECT_EQ(labels["nvidia.com/gpu.product"], "G2");
  EXPECT_EQ(labels["nvidia.com/gpu.count"], "8");
  EXPECT_FALSE(labels.contains("nvidia.com/gpu.memory"));
  EXPECT_FALSE(node["metadata"].contains("annotations"));
  SimNode parsed = parse_node(node);
  EXPECT_EQ(parsed.gpu_memory_mib, 0);
  EXPECT_EQ(parsed.usable_gpu_memory_mib(), 0);
}

// SIM-5: the simulation reads the reserve back from the node; without the annotation it is the default.
TEST(GpuPools, NodesCarryTheirDriverReserveToTheSimulation) {
  NodeSpec spec;
  spec.name = "t4-node-0";
  spec.pool = "t4";
  spec.gpus = 1;
  spec.gpu_product = "T4";
  spec.gpu_memory_mib = 15360;
  spec.driver_reserve_mib = 300;
  json node = node_object(spec, 0);
  SimNode n = parse_node(node);
  EXPECT_EQ(n.gpu_memory_mib, 15360);
  EXPECT_EQ(n.gpu_driver_reserve_mib, 300);
  EXPECT_EQ(n.usable_gpu_memory_mib(), 15060);
  node["metadata"].erase("annotations");
  EXPECT_EQ(parse_node(node).gpu_driver_reserve_mib, 461) << "max(3 % of 15360, 256), rounded up";
}
