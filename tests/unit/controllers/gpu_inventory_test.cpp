// observe/gpu_inventory (CON-1, CON-2, CON-4, CON-6a): what the planner's model gets from projected nodes, pods and
// PodDisruptionBudgets (the same api::project_* the informers use).
#include "observe/gpu_inventory.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace kubex::observe {
namespace {

using nlohmann::json;
namespace pk = decide::packing;

json pod_json() {
  return json::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ml", "uid": "u1",
                 "labels": {"app": "web", "runai-gpu-group": "g-1"},
                 "annotations": {"gpu-fraction": "0.25"},
                 "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1", "uid": "rs",
                                      "controller": true}]},
    "spec": {"nodeName": "n1", "schedulerName": "kai-scheduler",
             "nodeSelector": {"disk": "ssd"},
             "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "x", "effect": "NoSchedule"},
                             {"operator": "Exists"}],
             "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                 {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1", "z2"]}],
                  "matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n9"]}]}]}}},
             "initContainers": [{"name": "init", "image": "i", "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}}],
             "containers": [{"name": "a", "image": "i", "resources": {"requests": {"cpu": "500m", "memory": "256Mi"}}},
                            {"name": "b", "image": "i", "resources": {"limits": {"cpu": "250m", "memory": "128Mi"}}}]},
    "status": {"phase": "Running"}})");
}

pk::PoolPod model(const json& pod, const std::vector<const api::PdbView*>& pdbs = {}) {
  return pool_pod(*api::project_pod(pod), pdbs);
}

TEST(GpuInventory, PodModel) {  // CON-2, CON-3, CON-6a
  pk::PoolPod p = model(pod_json());
  EXPECT_EQ(p.ns, "ml");
  EXPECT_EQ(p.name, "p");
  EXPECT_EQ(p.node, "n1");
  EXPECT_EQ(p.gpu_group, "g-1");
  EXPECT_EQ(p.fraction, 25);
  EXPECT_EQ(p.whole_gpus, 0);
  // Containers 500m + 250m (limit as the defaulted request) = 750m < init 2 cores: the init maximum counts.
  EXPECT_EQ(p.cpu_millis, 2000);
  EXPECT_EQ(p.memory_bytes, 1LL << 30);
  EXPECT_EQ(p.node_selector, (pk::Labels{{"disk", "ssd"}}));
  ASSERT_EQ(p.required_affinity.size(), 1u);
  EXPECT_EQ(p.required_affinity[0].match_expressions,
            (std::vector<pk::NodeSelectorRequirement>{{"zone", "In", {"z1", "z2"}}}));
  EXPECT_EQ(p.required_affinity[0].match_fields,
            (std::vector<pk::NodeSelectorRequirement>{{"metadata.name", "NotIn", {"n9"}}}));
  EXPECT_EQ(p.tolerations, (std::vector<pk::Toleration>{{"dedicated", "Equal", "x", "NoSchedule"},
                                                         {"", "Exists", "", ""}}));
  EXPECT_EQ(p.unmovable, "");
}

TEST(GpuInventory, WholeGpusFromLimitsElseRequests) {  // CON-2
  json j = pod_json();
  j["metadata"]["annotations"] = json::object();
  j["spec"]["containers"][0]["resources"] = {{"limits", {{"nvidia.com/gpu", "2"}}}};
  j["spec"]["containers"][1]["resources"] = {{"requests", {{"nvidia.com/gpu", "1"}}}};
  pk::PoolPod p = model(j);
  EXPECT_EQ(p.fraction, 0);
  EXPECT_EQ(p.whole_gpus, 3);
}

TEST(GpuInventory, UnmovablePods) {  // CON-4, CON-6a
  json bare = pod_json();
  bare["metadata"].erase("ownerReferences");
  EXPECT_EQ(model(bare).unmovable, "no controller owner");
  json ds = pod_json();
  ds["metadata"]["ownerReferences"][0]["kind"] = "DaemonSet";
  EXPECT_EQ(model(ds).unmovable, "owned by a DaemonSet");
  json dnd = pod_json();
  dnd["metadata"]["annotations"]["karpenter.sh/do-not-disrupt"] = "true";
  EXPECT_EQ(model(dnd).unmovable, "do-not-disrupt");
  json dnd2 = pod_json();
  dnd2["metadata"]["annotations"]["rightsizing.kubex.ai/do-not-disrupt"] = "true";
  EXPECT_EQ(model(dnd2).unmovable, "do-not-disrupt");
  json dnd_false = pod_json();
  dnd_false["metadata"]["annotations"]["rightsizing.kubex.ai/do-not-disrupt"] = "false";
  EXPECT_EQ(model(dnd_false).unmovable, "");
  json term = pod_json();
  term["metadata"]["deletionTimestamp"] = "2027-01-01T00:00:00Z";
  EXPECT_EQ(model(term).unmovable, "terminating");
  EXPECT_TRUE(model(term).leaving);  // CON-7a: not placed again
  json anti = pod_json();
  anti["spec"]["affinity"]["podAntiAffinity"] = {{"requiredDuringSchedulingIgnoredDuringExecution",
                                                  json::array({{{"topologyKey", "kubernetes.io/hostname"}}})}};
  EXPECT_EQ(model(anti).unmovable, "required inter-pod affinity");
  json spread = pod_json();
  spread["spec"]["topologySpreadConstraints"] = json::array(
      {{{"maxSkew", 1}, {"topologyKey", "zone"}, {"whenUnsatisfiable", "ScheduleAnyway"}}});
  EXPECT_EQ(model(spread).unmovable, "");
  spread["spec"]["topologySpreadConstraints"][0]["whenUnsatisfiable"] = "DoNotSchedule";
  EXPECT_EQ(model(spread).unmovable, "topology spread DoNotSchedule");
}

TEST(GpuInventory, PdbWithNoDisruptionAllowed) {  // CON-4
  auto pdb = [](const char* selector, int allowed) {
    return api::project_pdb(json{{"apiVersion", "policy/v1"}, {"kind", "PodDisruptionBudget"},
                                 {"metadata", {{"name", "b"}, {"namespace", "ml"}}},
                                 {"spec", {{"selector", json::parse(selector)}}},
                                 {"status", {{"disruptionsAllowed", allowed}}}});
  };
  auto blocking = pdb(R"({"matchLabels":{"app":"web"}})", 0);
  auto allowing = pdb(R"({"matchLabels":{"app":"web"}})", 1);
  auto other = pdb(R"({"matchLabels":{"app":"db"}})", 0);
  EXPECT_EQ(model(pod_json(), {blocking.get()}).unmovable, "PDB allows no disruption");
  EXPECT_EQ(model(pod_json(), {allowing.get(), other.get()}).unmovable, "");
}

TEST(GpuInventory, NodeModel) {  // CON-2, CON-5, CON-6a
  auto n = api::project_node(json::parse(R"({
    "apiVersion": "v1", "kind": "Node",
    "metadata": {"name": "n1", "labels": {"pool": "t4"}},
    "spec": {"unschedulable": true,
             "taints": [{"key": "rightsizing.kubex.ai/consolidating", "value": "pool-a", "effect": "NoSchedule"},
                        {"key": "gpu", "effect": "NoExecute"}]},
    "status": {"allocatable": {"nvidia.com/gpu": "4", "cpu": "15500m", "memory": "64Gi"},
               "conditions": [{"type": "Ready", "status": "True"}]}})"));
  pk::PoolNode m = pool_node(*n);
  EXPECT_EQ(m.name, "n1");
  EXPECT_EQ(m.gpu_capacity, 4);
  EXPECT_EQ(m.cpu_millis, 15500);
  EXPECT_EQ(m.memory_bytes, 64LL << 30);
  EXPECT_TRUE(m.ready);
  EXPECT_TRUE(m.unschedulable);
  EXPECT_EQ(m.labels, (pk::Labels{{"pool", "t4"}}));
  EXPECT_EQ(m.taints, (std::vector<pk::Taint>{{"rightsizing.kubex.ai/consolidating", "pool-a", "NoSchedule"},
                                               {"gpu", "", "NoExecute"}}));
  EXPECT_EQ(m.consolidating_policy, "pool-a");
}

TEST(GpuInventory, CountedPods) {  // CON-2
  json j = pod_json();
  EXPECT_TRUE(counted(*api::project_pod(j), "kai-resource-reservation"));
  j["status"]["phase"] = "Succeeded";
  EXPECT_FALSE(counted(*api::project_pod(j), "kai-resource-reservation"));
  j["status"]["phase"] = "Pending";
  EXPECT_TRUE(counted(*api::project_pod(j), "kai-resource-reservation"));
  j["metadata"]["namespace"] = "kai-resource-reservation";
  EXPECT_FALSE(counted(*api::project_pod(j), "kai-resource-reservation"));
  j["metadata"]["namespace"] = "ml";
  j["spec"].erase("nodeName");
  EXPECT_FALSE(counted(*api::project_pod(j), "kai-resource-reservation"));
}

}  // namespace
}  // namespace kubex::observe
