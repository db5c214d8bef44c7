// SIM-6: the cluster `kubex-sim serve --trace DIR` builds: nodes with their model, memory and pool label, one
// Deployment per kept pod (KAI fraction, whole GPUs or CPU only, gpu_spec as node affinity) in creation
// order.
#include "sim/cluster/trace_cluster.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "sim/cluster/node_objects.h"

using namespace kubex::sim::cluster;
using nlohmann::json;

namespace {

TracePod pod(const std::string& name, int num_gpu, int gpu_milli, std::int64_t created = 0,
             const std::string& phase = "Running") {
  TracePod p;
  p.name = name;
  p.cpu_milli = 6000;
  p.memory_mib = 12288;
  p.num_gpu = num_gpu;
  p.gpu_milli = gpu_milli;
  p.qos = "LS";
  p.phase = phase;
  p.creation_time = created;
  return p;
}

const json& container(const json& d) {
  return d["spec"]["template"]["spec"]["containers"][0];
}

}  // namespace

// SIM-6, SIM-5: each node with its CPU, memory, GPUs and model; the model's memory only when it is known.
TEST(TraceCluster, NodesKeepTheirShapeModelAndPool) {
  std::vector<TraceNode> nodes = {{"openb-node-0000", 64000, 262144, 2, "T4"},
                                  {"openb-node-0001", 96000, 786432, 8, "G2"},
                                  {"openb-node-0002", 32500, 262144, 0, ""}};
  auto specs = trace_node_specs(nodes);
  ASSERT_EQ(specs.size(), 3u);
  json t4 = node_object(specs[0], 0);
  EXPECT_EQ(t4["metadata"]["name"], "openb-node-0000");
  EXPECT_EQ(t4["status"]["capacity"]["cpu"], "64");
  EXPECT_EQ(t4["status"]["capacity"]["memory"], "262144Mi");
  EXPECT_EQ(t4["status"]["capacity"]["nvidia.com/gpu"], "2");
  const json& l = t4["metadata"]["labels"];
  EXPECT_EQ(l["nvidia.com/gpu.present"], "true");
  EXPECT_EQ(l["nvidia.com/gpu.product"], "T4");
  EXPECT_EQ(l["nvidia.com/gpu.memory"], "15360");
  EXPECT_EQ(l["nvidia.com/gpu.count"], "2");
  EXPECT_EQ(l[kNodePoolLabel], "t4");
  json g2 = node_object(specs[1], 1);
  EXPECT_EQ(g2["metadata"]["labels"]["nvidia.com/gpu.product"], "G2");
  EXPECT_EQ(g2["metadata"]["labels"]["nvidia.com/gpu.count"], "8");
  EXPECT_FALSE(g2["metadata"]["labels"].contains("nvidia.com/gpu.memory")) << "G2's memory is not disclosed";
  EXPECT_EQ(g2["metadata"]["labels"][kNodePoolLabel], "g2");
  json cpu = node_object(specs[2], 2);
  EXPECT_EQ(cpu["status"]["capacity"]["cpu"], "32500m");
  EXPECT_FALSE(cpu["metadata"]["labels"].contains("nvidia.com/gpu.present"));
  EXPECT_EQ(cpu["metadata"]["labels"][kNodePoolLabel], "cpu");
}

// SIM-6: num_gpu == 1 with gpu_milli < 1000 is a KAI fraction in the trace queue.
TEST(TraceCluster, ASharingPodIsAKaiFraction) {
  json d = trace_deployment(pod("openb-pod-0001", 1, 460));
  EXPECT_EQ(d["kind"], "Deployment");
  EXPECT_EQ(d["metadata"]["namespace"], "trace");
  EXPECT_EQ(d["metadata"]["labels"]["kai.scheduler/queue"], "trace");
  EXPECT_EQ(d["spec"]["replicas"], 1);
  const json& tmpl = d["spec"]["template"];
  EXPECT_EQ(tmpl["metadata"]["annotations"]["gpu-fraction"], "0.46");
  EXPECT_EQ(tmpl["metadata"]["labels"]["kai.scheduler/queue"], "trace");
  EXPECT_EQ(tmpl["metadata"]["labels"]["app"], "openb-pod-0001");
  EXPECT_EQ(tmpl["metadata"]["labels"]["sim.kubex.ai/trace-qos"], "LS");
  EXPECT_EQ(tmpl["spec"]["schedulerName"], "kai-scheduler");
  EXPECT_EQ(container(d)["resources"]["requests"], (json{{"cpu", "6"}, {"memory", "12288Mi"}}));
  EXPECT_FALSE(container(d)["resources"].contains("limits")) << "a fraction asks for no nvidia.com/gpu";
  EXPECT_EQ(d["spec"]["selector"]["matchLabels"], (json{{"app", "openb-pod-0001"}}));
}

// SIM-6: whole GPUs otherwise, through the default scheduler; CPU-only pods ask for no GPU.
TEST(TraceCluster, OtherPodsAskForWholeGpusOrNone) {
  for (auto [num_gpu, gpu_milli] : {std::pair{1, 1000}, std::pair{8, 1000}, std::pair{1, 0}}) {
    json d = trace_deployment(pod("w", num_gpu, gpu_milli));
    EXPECT_EQ(container(d)["resources"]["limits"]["nvidia.com/gpu"], std::to_string(num_gpu));
    EXPECT_FALSE(d["spec"]["template"]["spec"].contains("schedulerName"));
    EXPECT_FALSE(d["spec"]["template"]["metadata"].contains("annotations"));
    EXPECT_FALSE(d["metadata"]["labels"].contains("kai.scheduler/queue"));
  }
  json cpu = trace_deployment(pod("c", 0, 0));
  EXPECT_FALSE(container(cpu)["resources"].contains("limits"));
  EXPECT_EQ(container(cpu)["resources"]["requests"]["cpu"], "6");
}

// SIM-6: gpu_spec is required node affinity on nvidia.com/gpu.product.
TEST(TraceCluster, GpuSpecIsRequiredNodeAffinityOnTheProduct) {
  TracePod p = pod("s", 1, 1000);
  p.gpu_spec = {"V100M16", "V100M32"};
  json d = trace_deployment(p);
  EXPECT_EQ(d["spec"]["template"]["spec"]["affinity"],
            json::parse(
                R"({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "nvidia.com/gpu.product", "operator": "In",
                                       "values": ["V100M16", "V100M32"]}]}]}}})"));
  EXPECT_FALSE(trace_deployment(pod("n", 1, 1000))["spec"]["template"]["spec"].contains("affinity"));
}

TEST(TraceCluster, GpuFractionIsGpuMilliOverAThousand) {
  EXPECT_EQ(gpu_fraction_text(460), "0.46");
  EXPECT_EQ(gpu_fraction_text(5), "0.005");
  EXPECT_EQ(gpu_fraction_text(50), "0.05");
  EXPECT_EQ(gpu_fraction_text(999), "0.999");
  EXPECT_EQ(gpu_fraction_text(100), "0.1");
}

// SIM-6: --trace-phase keeps one phase (or all); Deployments come in creation-time order, file order on ties.
TEST(TraceCluster, KeepsThePhaseAndCreatesInCreationOrder) {
  std::vector<TracePod> pods = {pod("c", 0, 0, 30), pod("a", 0, 0, 10), pod("f", 0, 0, 5, "Failed"),
                                pod("b", 0, 0, 10), pod("z", 0, 0, 0)};
  auto w = trace_workloads(pods, "Running");
  EXPECT_EQ(w.pods_in_file, 5u);
  EXPECT_EQ(w.deployments, 4u);
  std::vector<std::string> kinds, names;
  for (const json& o : w.objects) {
    kinds.push_back(o["kind"]);
    names.push_back(o["metadata"]["name"]);
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"Namespace", "Queue", "Queue", "Deployment", "Deployment",
                                             "Deployment", "Deployment"}));
  EXPECT_EQ(names, (std::vector<std::string>{"trace", "trace-root", "trace", "z", "a", "b", "c"}));
  EXPECT_EQ(w.objects[2]["spec"]["parentQueue"], "trace-root");
  EXPECT_EQ(trace_workloads(pods, "all").deployments, 5u);
  EXPECT_EQ(trace_workloads(pods, "Failed").deployments, 1u);
}

// SIM-6: files are read from DIR; an error names the file as it was opened.
TEST(TraceCluster, LoadsADirectoryAndNamesTheBadFile) {
  auto dir = std::filesystem::temp_directory_path() / ("kubex-trace-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) { std::ofstream(dir / name) << text; };
  write("openb_node_list_gpu_node.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,T4\n");
  write("openb_pod_list_default.csv",
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time\n"
        "p0,1000,1024,1,500,,LS,Running,3\np1,1000,1024,0,0,,LS,Failed,1\n");
  write("bad.csv",
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time\n"
        "p0,1000,1024,1,500,,LS,Running,3\np1,1000,1024,x,0,,LS,Failed,1\n");
  TraceOptions o;
  o.dir = dir.string();
  auto t = load_trace(o);
  ASSERT_TRUE(t.has_value()) << t.error().str();
  ASSERT_EQ(t->nodes.size(), 1u);
  EXPECT_EQ(t->nodes[0].gpu_memory_mib, 15360);
  EXPECT_EQ(t->workloads.deployments, 1u);
  o.pods_file = "bad.csv";
  auto bad = load_trace(o);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().str(),
            (dir / "bad.csv").string() + ":3:4: num_gpu: \"x\" is not a whole number >= 0");
  o.pods_file = "missing.csv";
  auto missing = load_trace(o);
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().str().find("missing.csv"), std::string::npos) << missing.error().str();
  EXPECT_EQ(trace_file_path(o, "/abs/pods.csv"), "/abs/pods.csv");
  EXPECT_EQ(trace_file_path(o, "sub/pods.csv"), "sub/pods.csv");
  std::filesystem::remove_all(dir);
}
