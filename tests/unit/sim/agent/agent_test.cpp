// kubex-sim agent against kubex-sim serve (SIM-2, SIM-3, SIM-7): the same simulation through LIST/WATCH/REST. The
// API server is an in-process `serve --no-cluster`, reached over TLS with the engine's REST client, exactly as the
// agent reaches kind or a real kube-apiserver.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/time_format.h"
#include "common/yaml.h"
#include "kube/client/client.h"
#include "kube/client/kubeconfig.h"
#include "sim/agent/rest_io.h"
#include "sim/cluster/cluster.h"
#include "sim/cluster/instance.h"
#include "sim/cluster/node_lease.h"
#include "sim/cluster/node_objects.h"
#include "sim/gpu/gpu_model.h"

namespace kubex::sim::agent {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

bool eventually(const std::function<bool()>& ok, std::chrono::milliseconds within = 60s) {  // bounds a hang only
  for (auto end = std::chrono::steady_clock::now() + within; std::chrono::steady_clock::now() < end;) {
    if (ok()) return true;
    std::this_thread::sleep_for(100ms);
  }
  return ok();
}

// A node someone else registered (no agent label).
json foreign_node(const std::string& name, int gpus, int index) {
  cluster::NodeSpec spec;
  spec.name = name;
  spec.pool = "other";
  spec.gpus = gpus;
  return cluster::node_object(spec, index);
}

cluster::ClusterConfig two_t4_nodes() {
  cluster::ClusterConfig c = cluster::ClusterConfig::defaults();
  c.pools.clear();
  cluster::NodePool pool;
  pool.name = "agent-t4";
  pool.count = 2;
  pool.gpus_per_node = 1;
  pool.gpu_product = "Tesla-T4";
  pool.gpu_memory_mib = 15360;
  c.pools.push_back(pool);
  return c;
}

class AgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster::InstanceOptions o;
    o.no_cluster = true;  // the API server only: nodes, kubelet and schedulers come from the agent
    o.metrics_listen = "";
    auto in = cluster::Instance::start(o, gpu::make_gpu_model);
    ASSERT_TRUE(in) << in.error().str();
    server = std::move(*in);
    auto conn = kube::load_kubeconfig(server->kubeconfig());
    ASSERT_TRUE(conn) << conn.error().str();
    auto c = kube::Client::create(*conn);
    ASSERT_TRUE(c) << c.error().str();
    client = *c;
    for (const auto& y : {cluster::queue_crd_yaml(), cluster::model_crd_yaml()}) {
      auto crd = common::yaml_to_json(y);
      ASSERT_TRUE(crd);
      ASSERT_TRUE(client->create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", *crd));
    }
    ASSERT_TRUE(eventually([&] { return client->get("/apis/scheduling.run.ai/v2").has_value(); }));
    for (const char* ns : {"kai-resource-reservation", "kube-node-lease"}) {
      client->create("/api/v1/namespaces", {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}});
    }
    json queue = {{"apiVersion", "scheduling.run.ai/v2"},
                  {"kind", "Queue"},
                  {"metadata", {{"name", "team-a"}}},
                  {"spec", {{"resources", {{"gpu", {{"quota", -1}, {"limit", -1}, {"overQuotaWeight", 1}}}}}}}};
    ASSERT_TRUE(client->create("/apis/scheduling.run.ai/v2/queues", queue));
  }

  void TearDown() override {
    stop_agent();
    client.reset();  // closes its kept-alive connections, so the server stops at once
    if (server) server->stop();
  }

  common::Result<int> start_agent(const std::string& name = "agent-1") {
    io = std::make_unique<RestIo>(client, name);
    agent = std::make_unique<cluster::Cluster>(*io, two_t4_nodes(), gpu::make_gpu_model, cluster::Front::agent(name));
    return agent->start("");
  }

  void stop_agent() {
    if (agent) agent->stop();
    agent.reset();
    io.reset();
  }

  json pod(const std::string& name) { return client->get("/api/v1/namespaces/default/pods/" + name).value_or(json()); }

  static json fraction_pod(const std::string& name, const std::string& fraction) {
    return {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata",
             {{"name", name},
              {"namespace", "default"},
              {"labels", {{"kai.scheduler/queue", "team-a"}}},
              {"annotations", {{"gpu-fraction", fraction}}}}},
            {"spec",
             {{"schedulerName", "kai-scheduler"},
              {"containers",
               json::array({{{"name", "main"},
                             {"image", "vllm/vllm-openai:v0.6.0"},
                             {"resources", {{"requests", {{"cpu", "100m"}, {"memory", "128Mi"}}}}}}})}}}};
  }

  static bool ready(const json& p) {
    for (const auto& c : p["status"].value("conditions", json::array())) {
      if (c.value("type", "") == "Ready") return c.value("status", "") == "True";
    }
    return false;
  }

  std::unique_ptr<cluster::Instance> server;
  std::shared_ptr<kube::Client> client;
  std::unique_ptr<RestIo> io;
  std::unique_ptr<cluster::Cluster> agent;
};

// SIM-2: the pools' nodes with the GPU capacity, GFD labels and the agent's label; Leases renewed like a kubelet's.
TEST_F(AgentTest, RegistersItsNodesWithGpuCapacityAndGfdLabelsAndRenewsTheirLeases) {
  ASSERT_TRUE(start_agent());
  // A node is created first and its status written after, as a kubelet does: wait for both nodes' capacity.
  json nodes;
  ASSERT_TRUE(eventually([&] {
    auto got = client->get("/api/v1/nodes?labelSelector=sim.kubex.ai%2Fagent%3Dagent-1");
    if (!got || !(*got)["items"].is_array() || (*got)["items"].size() != 2) return false;
    nodes = *got;
    for (const auto& n : nodes["items"]) {
      // Until its status is written, a node's status may be absent, null or without allocatable.
      const auto st = n.find("status");
      if (st == n.end() || !st->is_object()) return false;
      const auto alloc = st->find("allocatable");
      if (alloc == st->end() || !alloc->is_object() || !alloc->contains("nvidia.com/gpu")) return false;
    }
    return true;
  })) << nodes.dump();
  for (const auto& n : nodes["items"]) {
    EXPECT_EQ(n["status"]["allocatable"].value("nvidia.com/gpu", ""), "1");
    EXPECT_EQ(n["metadata"]["labels"].value("nvidia.com/gpu.present", ""), "true");
    EXPECT_EQ(n["metadata"]["labels"].value("nvidia.com/gpu.product", ""), "Tesla-T4");
    EXPECT_EQ(n["metadata"]["labels"].value("nvidia.com/gpu.count", ""), "1");
  }
  const std::string lease = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/agent-t4-node-0";
  std::string first;
  ASSERT_TRUE(eventually([&] {
    auto l = client->get(lease);
    if (l) first = l->value("spec", json::object()).value("renewTime", "");
    return !first.empty();
  }));
  auto l = client->get(lease);
  EXPECT_EQ((*l)["spec"].value("holderIdentity", ""), "agent-t4-node-0");
  EXPECT_EQ((*l)["metadata"]["ownerReferences"][0].value("kind", ""), "Node");  // removed with its node
  // Renewed every kNodeLeaseRenewInterval (10 s), measured on the Lease's own renewTime (microseconds, written by
  // the agent), not on this test's clock: a loaded machine may delay what the test sees, not what the agent wrote.
  std::string second;
  ASSERT_TRUE(eventually([&] {
    auto again = client->get(lease);
    if (again) second = again->value("spec", json::object()).value("renewTime", "");
    return !second.empty() && second != first;
  })) << "lease not renewed; first renewTime " << first;
  auto t1 = common::parse_rfc3339(first);
  auto t2 = common::parse_rfc3339(second);
  ASSERT_TRUE(t1 && t2) << first << " " << second;
  const auto renewed_after = std::chrono::duration<double>(*t2 - *t1).count();
  EXPECT_GE(renewed_after, 0.75 * cluster::kNodeLeaseRenewInterval.count()) << first << " -> " << second;
  EXPECT_LE(renewed_after, 1.25 * cluster::kNodeLeaseRenewInterval.count()) << first << " -> " << second;
}

// SIM-2, SIM-3: a kai-scheduler pod is bound through pods/binding to one of the agent's nodes, gets its reservation
// pod and runai-gpu-group label, and goes Pending -> Running -> Ready through the status subresource.
TEST_F(AgentTest, SchedulesAndRunsAKaiFractionPodOnItsNodes) {
  ASSERT_TRUE(start_agent());
  ASSERT_TRUE(client->create("/api/v1/namespaces/default/pods", fraction_pod("frac", "0.5")));
  ASSERT_TRUE(eventually([&] { return ready(pod("frac")); })) << pod("frac").dump();
  json p = pod("frac");
  EXPECT_TRUE(p["spec"].value("nodeName", "").starts_with("agent-t4-node-"));
  EXPECT_FALSE(p["metadata"]["labels"].value("runai-gpu-group", "").empty());
  EXPECT_EQ(p["status"].value("phase", ""), "Running");
  auto reservations = client->get("/api/v1/namespaces/kai-resource-reservation/pods");
  ASSERT_TRUE(reservations);
  EXPECT_EQ((*reservations)["items"].size(), 1u);
  // Graceful deletion ends with the agent's kubelet removing the pod; the emptied group's reservation goes too.
  ASSERT_TRUE(client->remove("/api/v1/namespaces/default/pods/frac"));
  EXPECT_TRUE(eventually([&] { return !client->get("/api/v1/namespaces/default/pods/frac"); }));
  EXPECT_TRUE(eventually([&] {
    auto r = client->get("/api/v1/namespaces/kai-resource-reservation/pods");
    return r && (*r)["items"].empty();
  }));
}

// SIM-2: it touches no node it did not create and no pod not bound to its nodes, even a terminating one.
TEST_F(AgentTest, LeavesForeignNodesAndTheirPodsAlone) {
  json other = foreign_node("someone-elses-node", 1, 50);
  ASSERT_TRUE(client->create("/api/v1/nodes", other));
  json foreign = fraction_pod("foreign", "0.5");
  foreign["spec"]["schedulerName"] = "default-scheduler";
  foreign["spec"]["nodeName"] = "someone-elses-node";
  ASSERT_TRUE(client->create("/api/v1/namespaces/default/pods", foreign));
  ASSERT_TRUE(start_agent());
  ASSERT_TRUE(client->create("/api/v1/namespaces/default/pods", fraction_pod("mine", "0.5")));
  ASSERT_TRUE(eventually([&] { return ready(pod("mine")); }));
  ASSERT_TRUE(client->remove("/api/v1/namespaces/default/pods/foreign"));  // 30 s grace: only its kubelet ends it
  ASSERT_TRUE(client->remove("/api/v1/namespaces/default/pods/mine"));
  ASSERT_TRUE(eventually([&] { return !client->get("/api/v1/namespaces/default/pods/mine").has_value(); }));
  // By now the agent's feeds have seen the foreign pod's deletion for seconds: it is still there, untouched.
  json f = pod("foreign");
  ASSERT_TRUE(f.is_object());
  EXPECT_FALSE(f["metadata"].value("deletionTimestamp", "").empty());
  EXPECT_FALSE(f["status"].contains("containerStatuses")) << f["status"].dump();
  auto n = client->get("/api/v1/nodes/someone-elses-node");
  ASSERT_TRUE(n);
  EXPECT_FALSE((*n)["metadata"]["labels"].contains(cluster::kNodeAgentLabel));
  EXPECT_FALSE(client->get("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/someone-elses-node"));
}

// SIM-2: a node of the same name that the agent did not create stops it with a message naming the node.
TEST_F(AgentTest, RefusesToStartOverANodeItDidNotCreate) {
  json clash = foreign_node("agent-t4-node-1", 1, 7);
  ASSERT_TRUE(client->create("/api/v1/nodes", clash));
  auto r = start_agent();
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().str().find("agent-t4-node-1 already exists and was not registered by this agent"),
            std::string::npos)
      << r.error().str();
}

// SIM-2: a restarted agent adopts its nodes and their pods; --delete-nodes-on-exit removes only its nodes.
TEST_F(AgentTest, AdoptsItsNodesAfterARestartAndDeletesOnlyThemOnExit) {
  ASSERT_TRUE(start_agent());
  ASSERT_TRUE(client->create("/api/v1/namespaces/default/pods", fraction_pod("survivor", "0.5")));
  ASSERT_TRUE(eventually([&] { return ready(pod("survivor")); }));
  std::string uid = pod("survivor")["metadata"].value("uid", "");
  stop_agent();
  ASSERT_TRUE(start_agent()) << "a restarted agent must adopt the nodes it registered";
  ASSERT_TRUE(client->remove("/api/v1/namespaces/default/pods/survivor"));
  EXPECT_TRUE(eventually([&] { return !client->get("/api/v1/namespaces/default/pods/survivor").has_value(); }))
      << "the restarted agent's kubelet did not finish the graceful deletion of " << uid;
  json other = foreign_node("bystander", 0, 60);
  ASSERT_TRUE(client->create("/api/v1/nodes", other));
  agent->stop();
  ASSERT_TRUE(agent->delete_nodes());
  auto nodes = client->get("/api/v1/nodes");
  ASSERT_TRUE(nodes);
  ASSERT_EQ((*nodes)["items"].size(), 1u);
  EXPECT_EQ((*nodes)["items"][0]["metadata"].value("name", ""), "bystander");
}

}  // namespace
}  // namespace kubex::sim::agent
