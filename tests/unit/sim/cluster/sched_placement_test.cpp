// Pure placement logic of the simulated schedulers (DESIGN §5: a KAI-like scheduler with per-GPU fractions
// summing to <= 1, binpack; kube-scheduler's filters for the default scheduler; SPEC CON-3 vocabulary).
#include "sim/cluster/sched_placement.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/cluster/sched_ledger.h"

using namespace kubex::sim::cluster;
using namespace kubex::sim::cluster::sched;
using nlohmann::json;

namespace {

PlacementNode gpu_node(const std::string& name, std::int64_t gpus = 2) {
  PlacementNode n;
  n.name = name;
  n.labels = {{"kubernetes.io/hostname", name}, {"nvidia.com/gpu.present", "true"}, {"rank", "5"}};
  n.cpu_milli = 16000;
  n.memory_bytes = 64LL << 30;
  n.gpus = gpus;
  return n;
}

PlacementPod pod_json(const json& spec) {
  PlacementPod p;
  if (spec.contains("tolerations")) p.tolerations = parse_tolerations(spec["tolerations"]);
  if (spec.contains("affinity")) parse_required_node_affinity(spec["affinity"], p);
  if (spec.contains("nodeSelector")) {
    for (auto& [k, v] : spec["nodeSelector"].items()) p.node_selector[k] = v.get<std::string>();
  }
  return p;
}

json affinity(const json& terms) {
  return {{"nodeAffinity", {{"requiredDuringSchedulingIgnoredDuringExecution", {{"nodeSelectorTerms", terms}}}}}};
}

std::vector<std::string> why(const PlacementPod& p, const PlacementNode& n, const NodeUse& u = {},
                             Strategy s = Strategy::kDefault) {
  return filter_node(p, n, u, s);
}

}  // namespace

TEST(SchedPlacement, TaintsAgainstTolerations) {
  struct Case {
    const char* name;
    Taint taint;
    json tolerations;
    bool fits;
  };
  std::vector<Case> cases = {
      {"no toleration, NoSchedule", {"gpu", "true", "NoSchedule"}, json::array(), false},
      {"no toleration, NoExecute", {"gpu", "true", "NoExecute"}, json::array(), false},
      {"PreferNoSchedule only scores", {"gpu", "true", "PreferNoSchedule"}, json::array(), true},
      {"Equal with value", {"gpu", "true", "NoSchedule"}, json::parse(R"([{"key":"gpu","operator":"Equal","value":"true","effect":"NoSchedule"}])"), true},
      {"default operator is Equal", {"gpu", "true", "NoSchedule"}, json::parse(R"([{"key":"gpu","value":"true"}])"), true},
      {"Equal, other value", {"gpu", "true", "NoSchedule"}, json::parse(R"([{"key":"gpu","operator":"Equal","value":"false"}])"), false},
      {"Exists on key", {"gpu", "x", "NoExecute"}, json::parse(R"([{"key":"gpu","operator":"Exists"}])"), true},
      {"Exists, empty key: everything", {"any", "x", "NoSchedule"}, json::parse(R"([{"operator":"Exists"}])"), true},
      {"effect mismatch", {"gpu", "true", "NoExecute"}, json::parse(R"([{"key":"gpu","operator":"Exists","effect":"NoSchedule"}])"), false},
      {"other key", {"gpu", "true", "NoSchedule"}, json::parse(R"([{"key":"tpu","operator":"Exists"}])"), false},
  };
  for (const auto& c : cases) {
    PlacementNode n = gpu_node("n1");
    n.taints = {c.taint};
    PlacementPod p = pod_json({{"tolerations", c.tolerations}});
    auto reasons = why(p, n);
    EXPECT_EQ(reasons.empty(), c.fits) << c.name;
    if (!c.fits) {
      ASSERT_EQ(reasons.size(), 1u) << c.name;
      EXPECT_EQ(reasons[0], "node(s) had untolerated taint {" + c.taint.key + ": " + c.taint.value + "}") << c.name;
    }
  }
}

TEST(SchedPlacement, NotReadyAndCordonedNodes) {
  PlacementNode n = gpu_node("n1");
  n.ready = false;
  EXPECT_EQ(why({}, n), std::vector<std::string>{"node(s) had untolerated taint {node.kubernetes.io/not-ready: }"});
  EXPECT_TRUE(why(pod_json({{"tolerations", json::parse(R"([{"key":"node.kubernetes.io/not-ready","operator":"Exists"}])")}}), n).empty());
  n.ready = true;
  n.unschedulable = true;
  EXPECT_EQ(why({}, n), std::vector<std::string>{"node(s) were unschedulable"});
  EXPECT_TRUE(why(pod_json({{"tolerations", json::parse(R"([{"key":"node.kubernetes.io/unschedulable","operator":"Exists","effect":"NoSchedule"}])")}}), n).empty());
}

TEST(SchedPlacement, NodeSelectorAndRequiredAffinity) {
  struct Case {
    const char* name;
    json spec;
    bool fits;
  };
  auto expr = [](const char* key, const char* op, json values = nullptr) {
    json e = {{"key", key}, {"operator", op}};
    if (!values.is_null()) e["values"] = values;
    return e;
  };
  std::vector<Case> cases = {
      {"nodeSelector match", {{"nodeSelector", {{"nvidia.com/gpu.present", "true"}}}}, true},
      {"nodeSelector mismatch", {{"nodeSelector", {{"nvidia.com/gpu.present", "false"}}}}, false},
      {"nodeSelector missing label", {{"nodeSelector", {{"zone", "a"}}}}, false},
      {"In", {{"affinity", affinity({{{"matchExpressions", {expr("rank", "In", {"4", "5"})}}}})}}, true},
      {"In, no value", {{"affinity", affinity({{{"matchExpressions", {expr("rank", "In", {"4"})}}}})}}, false},
      {"NotIn", {{"affinity", affinity({{{"matchExpressions", {expr("rank", "NotIn", {"4"})}}}})}}, true},
      {"NotIn, absent label", {{"affinity", affinity({{{"matchExpressions", {expr("zone", "NotIn", {"a"})}}}})}}, true},
      {"Exists", {{"affinity", affinity({{{"matchExpressions", {expr("rank", "Exists")}}}})}}, true},
      {"DoesNotExist", {{"affinity", affinity({{{"matchExpressions", {expr("rank", "DoesNotExist")}}}})}}, false},
      {"Gt", {{"affinity", affinity({{{"matchExpressions", {expr("rank", "Gt", {"4"})}}}})}}, true},
      {"Gt, equal", {{"affinity", affinity({{{"matchExpressions", {expr("rank", "Gt", {"5"})}}}})}}, false},
      {"Lt", {{"affinity", affinity({{{"matchExpressions", {expr("rank", "Lt", {"10"})}}}})}}, true},
      {"Lt, not a number", {{"affinity", affinity({{{"matchExpressions", {expr("rank", "Lt", {"x"})}}}})}}, false},
      {"expressions are ANDed", {{"affinity", affinity({{{"matchExpressions", {expr("rank", "Exists"), expr("zone", "Exists")}}}})}}, false},
      {"terms are ORed",
       {{"affinity", affinity({{{"matchExpressions", {expr("zone", "Exists")}}}, {{"matchExpressions", {expr("rank", "Exists")}}}})}},
       true},
      {"matchFields name In", {{"affinity", affinity({{{"matchFields", {expr("metadata.name", "In", {"n1"})}}}})}}, true},
      {"matchFields name NotIn", {{"affinity", affinity({{{"matchFields", {expr("metadata.name", "NotIn", {"n1"})}}}})}}, false},
      {"matchFields other field", {{"affinity", affinity({{{"matchFields", {expr("metadata.uid", "In", {"n1"})}}}})}}, false},
      {"empty term matches nothing", {{"affinity", affinity({json::object()})}}, false},
      {"unknown operator", {{"affinity", affinity({{{"matchExpressions", {expr("rank", "Near", {"5"})}}}})}}, false},
      {"preferred affinity is not a filter",
       json::parse(R"({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}}})"), true},
  };
  for (const auto& c : cases) {
    auto reasons = why(pod_json(c.spec), gpu_node("n1"));
    EXPECT_EQ(reasons.empty(), c.fits) << c.name;
    if (!c.fits) {
      EXPECT_EQ(reasons, std::vector<std::string>{"node(s) didn't match Pod's node affinity/selector"}) << c.name;
    }
  }
}

TEST(SchedPlacement, ResourceFitReportsEveryShortage) {
  PlacementNode n = gpu_node("n1", 1);
  n.pods = 3;
  NodeUse u;
  u.cpu_milli = 15000;
  u.memory_bytes = 63LL << 30;
  u.pods = 3;
  u.whole_gpus = 1;
  PlacementPod p;
  p.cpu_milli = 2000;
  p.memory_bytes = 2LL << 30;
  p.gpus = 1;
  EXPECT_EQ(why(p, n, u), (std::vector<std::string>{"Too many pods", "Insufficient cpu", "Insufficient memory",
                                                    "Insufficient nvidia.com/gpu"}));
  EXPECT_EQ(why(p, n, u, Strategy::kKai).back(), "node(s) didn't have enough resources: GPUs");
  p.cpu_milli = p.memory_bytes = 0;
  u.pods = 0;
  u.whole_gpus = 0;
  u.groups = {GpuGroupUse{"g", 10, 1}};  // a fraction group holds the only GPU
  EXPECT_EQ(why(p, n, u), std::vector<std::string>{"Insufficient nvidia.com/gpu"});
}

TEST(SchedPlacement, UnschedulableMessageLikeKubeScheduler) {
  std::vector<PlacementNode> nodes = {gpu_node("a"), gpu_node("b"), gpu_node("c"), gpu_node("d", 0)};
  nodes[3].labels.erase("nvidia.com/gpu.present");
  std::vector<NodeUse> uses(4);
  for (int i = 0; i < 3; ++i) uses[i].whole_gpus = 2;
  std::vector<NodeSlot> slots;
  for (int i = 0; i < 4; ++i) slots.push_back({&nodes[i], &uses[i]});
  PlacementPod p;
  p.gpus = 1;
  p.node_selector = {{"nvidia.com/gpu.present", "true"}};
  Decision d = place(p, slots, Strategy::kDefault);
  EXPECT_FALSE(d.scheduled);
  EXPECT_EQ(d.message,
            "0/4 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 3 Insufficient "
            "nvidia.com/gpu.");
  EXPECT_EQ(place(p, {}, Strategy::kDefault).message, "no nodes available to schedule pods");
}

TEST(SchedPlacement, DefaultSchedulerPrefersLeastAllocatedThenName) {
  std::vector<PlacementNode> nodes = {gpu_node("b"), gpu_node("a"), gpu_node("c")};
  std::vector<NodeUse> uses(3);
  uses[0].nonzero_cpu_milli = 8000;  // b is half full
  std::vector<NodeSlot> slots = {{&nodes[0], &uses[0]}, {&nodes[1], &uses[1]}, {&nodes[2], &uses[2]}};
  PlacementPod p;
  p.cpu_milli = 1000;
  EXPECT_EQ(place(p, slots, Strategy::kDefault).node, "a");  // a and c tie: name
  uses[1].nonzero_cpu_milli = 4000;
  EXPECT_EQ(place(p, slots, Strategy::kDefault).node, "c");
  nodes[2].taints = {{"spot", "true", "PreferNoSchedule"}};
  EXPECT_EQ(place(p, slots, Strategy::kDefault).node, "a");  // PreferNoSchedule costs more than the load
}

TEST(SchedPlacement, KaiFractionGoesToFullestGroupThatFits) {
  PlacementNode n = gpu_node("n1", 4);
  NodeUse u;
  u.groups = {GpuGroupUse{"g0", 30, 1, 0, 1}, GpuGroupUse{"g1", 60, 2, 1, 1}, GpuGroupUse{"g2", 90, 3, 2, 1}};
  EXPECT_EQ(fraction_slot(30, n, u), std::optional<std::string>("g1"));  // 90 is full for 0.3
  EXPECT_EQ(fraction_slot(10, n, u), std::optional<std::string>("g2"));
  EXPECT_EQ(fraction_slot(50, n, u), std::optional<std::string>("g0"));
  EXPECT_EQ(fraction_slot(80, n, u), std::optional<std::string>(""));  // a new group on the free GPU
  u.whole_gpus = 1;
  EXPECT_EQ(fraction_slot(80, n, u), std::nullopt);
  u.groups[2].dying = true;  // a group whose reservation pod goes away is never chosen
  EXPECT_EQ(fraction_slot(10, n, u), std::optional<std::string>("g1"));
}

TEST(SchedPlacement, KaiBinpackAcrossNodes) {
  std::vector<PlacementNode> nodes = {gpu_node("a"), gpu_node("b"), gpu_node("c")};
  std::vector<NodeUse> uses(3);
  uses[0].groups = {GpuGroupUse{"ga", 50, 1, 0, 1}};
  uses[1].groups = {GpuGroupUse{"gb", 50, 1, 0, 1}};
  uses[1].whole_gpus = 1;  // b is fuller: same group fullness, fewer free GPUs
  std::vector<NodeSlot> slots = {{&nodes[0], &uses[0]}, {&nodes[1], &uses[1]}, {&nodes[2], &uses[2]}};
  PlacementPod p;
  p.fraction = 30;
  Decision d = place(p, slots, Strategy::kKai);
  EXPECT_TRUE(d.scheduled);
  EXPECT_EQ(d.node, "b");
  EXPECT_EQ(d.group, "gb");
  p.fraction = 60;  // fits no group: a new group on the fullest node with a free GPU (a, not empty c)
  d = place(p, slots, Strategy::kKai);
  EXPECT_EQ(d.node, "a");
  EXPECT_TRUE(d.new_group);
  p.fraction = 0;
  p.gpus = 1;  // whole GPU: fewest free GPUs first (b has none left: a)
  uses[1].whole_gpus = 1;
  EXPECT_EQ(place(p, slots, Strategy::kKai).node, "a");
  p.gpus = 2;
  EXPECT_EQ(place(p, slots, Strategy::kKai).node, "c");
}

// SIM-9 (findings F1): KAI's gpusharingorder gives a flat +1000 to every node with a group the fraction fits in,
// however full; binpack on free whole GPUs decides between such nodes. A user sees a 0.5 pod join the 0.25 group on
// the busier node b, not the 0.5 group on a, as with the real KAI-Scheduler.
TEST(SchedPlacement, Sim9KaiFractionNodeOrderIgnoresHowFullTheGroupIs) {
  std::vector<PlacementNode> nodes = {gpu_node("node-a"), gpu_node("node-b")};
  std::vector<NodeUse> uses(2);
  uses[0].groups = {GpuGroupUse{"ga", 50, 1, 0, 1}};  // node-a: a group at 0.5, one free GPU
  uses[1].groups = {GpuGroupUse{"gb", 25, 1, 0, 1}};  // node-b: a group at 0.25, the other GPU whole
  uses[1].whole_gpus = 1;
  std::vector<NodeSlot> slots = {{&nodes[0], &uses[0]}, {&nodes[1], &uses[1]}};
  PlacementPod p;
  p.fraction = 50;
  Decision d = place(p, slots, Strategy::kKai);
  EXPECT_EQ(d.node, "node-b");
  EXPECT_EQ(d.group, "gb");
  EXPECT_FALSE(d.new_group);
}

// SIM-9 (findings F1b, F3): between nodes with a fitting group and equally many free GPUs the node name decides,
// not the fuller group or the more allocated node. A user sees the 0.5 pod on node-a (group at 0.25), like KAI.
TEST(SchedPlacement, Sim9KaiFractionTieGoesToTheNodeName) {
  std::vector<PlacementNode> nodes = {gpu_node("node-a", 1), gpu_node("node-b", 1)};
  std::vector<NodeUse> uses(2);
  uses[0].groups = {GpuGroupUse{"ga", 25, 1, 0, 1}};
  uses[1].groups = {GpuGroupUse{"gb", 50, 1, 0, 1}};
  std::vector<NodeSlot> slots = {{&nodes[0], &uses[0]}, {&nodes[1], &uses[1]}};
  PlacementPod p;
  p.fraction = 50;
  Decision d = place(p, slots, Strategy::kKai);
  EXPECT_EQ(d.node, "node-a");
  EXPECT_EQ(d.group, "ga");
  // Pods 0.5, 0.4, 0.2 on groups at 0.40 (a) and 0.50 (b): KAI strands the 0.2 (findings section 2, item 2).
  uses[0].groups = {GpuGroupUse{"ga", 40, 1, 0, 1}};
  std::vector<std::string> got;
  for (int f : {50, 40, 20}) {
    p.fraction = f;
    d = place(p, slots, Strategy::kKai);
    got.push_back(d.scheduled ? d.node : "pending");
    if (!d.scheduled) continue;
    for (auto& u : uses) {
      for (auto& g : u.groups) g.hundredths += g.id == d.group ? f : 0;
    }
  }
  EXPECT_EQ(got, (std::vector<std::string>{"node-a", "node-b", "pending"}));
}

// SIM-9: on the chosen node the fraction joins the fullest group it fits in; a node whose groups it does not fit
// in comes after every node with a fitting group, whatever their free GPUs, and then opens a new GPU.
TEST(SchedPlacement, Sim9KaiFractionFittingGroupBeatsFreeGpusAndFullestGroupWinsOnTheNode) {
  std::vector<PlacementNode> nodes = {gpu_node("node-a", 6), gpu_node("node-b", 2), gpu_node("node-c", 2)};
  std::vector<NodeUse> uses(3);
  uses[0].groups = {GpuGroupUse{"a0", 20, 1, 0, 1}, GpuGroupUse{"a1", 60, 1, 1, 1}, GpuGroupUse{"a2", 90, 1, 2, 1}};
  uses[1].groups = {GpuGroupUse{"b0", 80, 1, 0, 1}};
  uses[1].whole_gpus = 1;  // node-b: no free GPU
  uses[2].whole_gpus = 1;  // node-c: one free GPU, no group (node-a has three free)
  std::vector<NodeSlot> slots = {{&nodes[0], &uses[0]}, {&nodes[1], &uses[1]}, {&nodes[2], &uses[2]}};
  PlacementPod p;
  p.fraction = 20;  // fits a0, a1, b0: node-b has fewer free GPUs
  EXPECT_EQ(place(p, slots, Strategy::kKai).group, "b0");
  p.fraction = 30;  // fits a0 and a1 only: node-a (not node-c with fewer free GPUs), its fullest fitting group
  Decision d = place(p, slots, Strategy::kKai);
  EXPECT_EQ(d.node, "node-a");
  EXPECT_EQ(d.group, "a1");
  p.fraction = 95;  // fits no group: a new GPU on the node with the fewest free GPUs
  d = place(p, slots, Strategy::kKai);
  EXPECT_EQ(d.node, "node-c");
  EXPECT_TRUE(d.new_group);
}

// SIM-9 (findings W1/W2): whole-GPU pods go to the node with fewer free GPUs, then by node name; how much of a node
// is allocated does not break the tie. A user sees the pod on node-a in both cases, like KAI (and CON-6).
TEST(SchedPlacement, Sim9KaiWholeGpuTieGoesToTheNodeName) {
  std::vector<PlacementNode> nodes = {gpu_node("node-a", 4), gpu_node("node-b", 8)};
  std::vector<NodeUse> uses(2);
  uses[0].whole_gpus = 2;  // W1: 2 of 4 used
  uses[1].whole_gpus = 6;  // 6 of 8 used
  std::vector<NodeSlot> slots = {{&nodes[0], &uses[0]}, {&nodes[1], &uses[1]}};
  PlacementPod p;
  p.gpus = 1;
  EXPECT_EQ(place(p, slots, Strategy::kKai).node, "node-a");
  std::vector<PlacementNode> w2 = {gpu_node("node-a"), gpu_node("node-b")};
  std::vector<NodeUse> w2_uses(2);
  w2_uses[0].groups = {GpuGroupUse{"ga", 25, 1, 0, 1}};  // W2: a group at 0.25
  w2_uses[1].whole_gpus = 1;                             // one whole pod
  slots = {{&w2[0], &w2_uses[0]}, {&w2[1], &w2_uses[1]}};
  EXPECT_EQ(place(p, slots, Strategy::kKai).node, "node-a");
}

// SIM-9 (findings F9): a kai-scheduler pod without GPUs is placed like KAI places it: nodes without GPUs first
// (resourcetype +10), then the fewest free millicores (CPU binpack), then the node name; PreferNoSchedule taints are
// not scored. A user sees such pods packed onto the CPU node already busiest, not spread as default-scheduler does.
TEST(SchedPlacement, Sim9KaiCpuOnlyPodsBinpackCpuNodesFirst) {
  std::vector<PlacementNode> nodes = {gpu_node("cpu-a", 0), gpu_node("cpu-b", 0), gpu_node("gpu-c", 2)};
  std::vector<NodeUse> uses(3);
  uses[0].cpu_milli = 4000;   // cpu-a: 12 cores free
  uses[1].cpu_milli = 12000;  // cpu-b: 4 cores free
  uses[2].cpu_milli = 15000;  // gpu-c: 1 core free, but it has GPUs
  std::vector<NodeSlot> slots = {{&nodes[0], &uses[0]}, {&nodes[1], &uses[1]}, {&nodes[2], &uses[2]}};
  PlacementPod p;
  p.cpu_milli = 1000;
  EXPECT_EQ(place(p, slots, Strategy::kKai).node, "cpu-b");
  EXPECT_EQ(place(p, slots, Strategy::kDefault).node, "cpu-a");  // default-scheduler spreads (LeastAllocated)
  nodes[1].taints = {{"spot", "true", "PreferNoSchedule"}};
  EXPECT_EQ(place(p, slots, Strategy::kKai).node, "cpu-b");  // not scored by KAI
  p.cpu_milli = 8000;  // fits only cpu-a among the CPU nodes
  EXPECT_EQ(place(p, slots, Strategy::kKai).node, "cpu-a");
  p.cpu_milli = 13000;  // fits no CPU node: the GPU node
  uses[2].cpu_milli = 0;
  EXPECT_EQ(place(p, slots, Strategy::kKai).node, "gpu-c");
  p.cpu_milli = 1000;  // equal free millicores: the node name
  uses[1].cpu_milli = 4000;
  EXPECT_EQ(place(p, slots, Strategy::kKai).node, "cpu-a");
}

TEST(SchedPlacement, SevenFractionsOnATwoGpuNode) {  // issue 3: six fit, three per GPU, the seventh does not
  Ledger ledger;
  SimNode node;
  node.name = "gpu-node-0";
  node.gpus = 2;
  node.cpu_milli = 16000;
  node.memory_bytes = 64LL << 30;
  ledger.upsert_node(node);
  PlacementPod p;
  p.fraction = fraction_hundredths(0.3);
  std::map<std::string, int> per_group;
  for (int i = 0; i < 7; ++i) {
    Decision d = ledger.schedule("ml/p" + std::to_string(i), p, Strategy::kKai, "group-" + std::to_string(i),
                                 "sfx" + std::to_string(i));
    if (i < 6) {
      ASSERT_TRUE(d.scheduled) << i << ": " << d.message;
      ++per_group[d.group];
    } else {
      EXPECT_FALSE(d.scheduled);
      EXPECT_EQ(d.message, "0/1 nodes are available: 1 node(s) didn't have enough resources: GPUs.");
    }
  }
  EXPECT_EQ(per_group, (std::map<std::string, int>{{"group-0", 3}, {"group-3", 3}}));
  NodeUse u = ledger.use_of("gpu-node-0");
  ASSERT_EQ(u.groups.size(), 2u);
  for (const auto& g : u.groups) EXPECT_EQ(g.hundredths, 90);
  EXPECT_EQ(u.gpus_held(), 2);
  // A whole-GPU pod does not fit any more: reservations hold both GPUs.
  PlacementPod whole;
  whole.gpus = 1;
  EXPECT_FALSE(ledger.schedule("ml/whole", whole, Strategy::kDefault).scheduled);
}

TEST(SchedPlacement, FractionHundredths) {
  EXPECT_EQ(fraction_hundredths(0.3), 30);
  EXPECT_EQ(fraction_hundredths(0.333), 33);
  EXPECT_EQ(fraction_hundredths(0.001), 1);
  EXPECT_EQ(fraction_hundredths(0.999), 100);
  EXPECT_EQ(fraction_hundredths(0), 0);
}

TEST(SchedPlacement, MalformedSpecsAreTolerated) {
  PlacementPod p;
  parse_required_node_affinity(json::parse(R"({"nodeAffinity": "x"})"), p);
  EXPECT_FALSE(p.has_required_affinity);
  parse_required_node_affinity(json::parse(R"({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [1, {"matchExpressions": [2, {"key": 3}]}]}}})"), p);
  EXPECT_TRUE(p.has_required_affinity);
  EXPECT_TRUE(parse_tolerations(json::parse(R"([1, "x", {"key": 5}])")).size() == 1);
  EXPECT_TRUE(parse_taints(json("nope")).empty());
}
