// DaemonSet placement: which nodes run a daemon pod (nodeSelector, required node affinity, taints against
// tolerations plus the standard DaemonSet tolerations) and how its pods are pinned (kube's daemon
// controller).
#include "sim/cluster/workload_daemonset.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace kubex::sim::cluster {
namespace {

using nlohmann::json;

SimNode node(const std::string& name, std::map<std::string, std::string> labels = {}, json taints = nullptr) {
  SimNode n;
  n.name = name;
  n.labels = std::move(labels);
  if (!taints.is_null()) n.taints_json = taints.dump();
  return n;
}

json taint(const std::string& key, const std::string& effect, const std::string& value = "") {
  json t = {{"key", key}, {"effect", effect}};
  if (!value.empty()) t["value"] = value;
  return t;
}

TEST(Tolerations, MatchTaints) {
  struct Case {
    Toleration t;
    Taint taint;
    bool want;
  };
  for (const auto& c : std::vector<Case>{
           {{"gpu", "Exists", "", "NoSchedule"}, {"gpu", "x", "NoSchedule"}, true},
           {{"gpu", "Exists", "", ""}, {"gpu", "", "NoExecute"}, true},      // empty effect: all effects
           {{"", "Exists", "", ""}, {"anything", "v", "NoSchedule"}, true},  // empty key + Exists: everything
           {{"gpu", "Equal", "a", "NoSchedule"}, {"gpu", "a", "NoSchedule"}, true},
           {{"gpu", "Equal", "a", "NoSchedule"}, {"gpu", "b", "NoSchedule"}, false},
           {{"gpu", "Exists", "", "NoExecute"}, {"gpu", "", "NoSchedule"}, false},
           {{"cpu", "Exists", "", ""}, {"gpu", "", "NoSchedule"}, false},
       }) {
    EXPECT_EQ(tolerates(c.t, c.taint), c.want) << c.t.key << "/" << c.t.op << " vs " << c.taint.key;
  }
}

TEST(NodeSelectorTerms, OperatorsAndFields) {
  auto terms = [](const char* text) { return parse_node_selector_terms(json::parse(text)); };
  SimNode n = node("gpu-node-1", {{"pool", "gpu"}, {"gpus", "4"}});
  EXPECT_TRUE(node_selector_terms_match(
      terms(R"([{"matchExpressions":[{"key":"pool","operator":"In","values":["gpu","x"]}]}])"), n));
  EXPECT_FALSE(node_selector_terms_match(
      terms(R"([{"matchExpressions":[{"key":"pool","operator":"NotIn","values":["gpu"]}]}])"), n));
  EXPECT_TRUE(node_selector_terms_match(
      terms(R"([{"matchExpressions":[{"key":"zone","operator":"DoesNotExist"}]}])"), n));
  EXPECT_TRUE(node_selector_terms_match(
      terms(R"([{"matchExpressions":[{"key":"gpus","operator":"Gt","values":["2"]}]}])"), n));
  EXPECT_FALSE(node_selector_terms_match(
      terms(R"([{"matchExpressions":[{"key":"gpus","operator":"Lt","values":["2"]}]}])"), n));
  EXPECT_TRUE(node_selector_terms_match(
      terms(R"([{"matchFields":[{"key":"metadata.name","operator":"In","values":["gpu-node-1"]}]}])"), n));
  EXPECT_FALSE(node_selector_terms_match(
      terms(R"([{"matchFields":[{"key":"metadata.name","operator":"In","values":["other"]}]}])"), n));
  // Terms are ORed, requirements within a term ANDed, an empty term matches nothing.
  EXPECT_TRUE(node_selector_terms_match(
      terms(R"([{"matchExpressions":[{"key":"pool","operator":"In","values":["cpu"]}]},
                                                  {"matchExpressions":[{"key":"pool","operator":"Exists"}]}])"),
      n));
  EXPECT_FALSE(node_selector_terms_match(terms(R"([{"matchExpressions":[{"key":"pool","operator":"Exists"},
                                                                        {"key":"zone","operator":"Exists"}]}])"),
                                         n));
  EXPECT_FALSE(node_selector_terms_match(terms(R"([{}])"), n));
  EXPECT_FALSE(node_selector_terms_match(terms(R"([])"), n));
}

TEST(DaemonPlacement, WhichNodesRunThePod) {
  json plain = {{"spec", {{"containers", {{{"name", "c"}}}}}}};
  json selective = {{"spec", {{"nodeSelector", {{"pool", "gpu"}}}, {"containers", {{{"name", "c"}}}}}}};
  json affine =
      json::parse(R"({"spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
      {"nodeSelectorTerms":[{"matchExpressions":[{"key":"pool","operator":"In","values":["cpu"]}]}]}}}}})");
  json tolerant = {{"spec", {{"tolerations", {{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}}}}}}};
  struct Case {
    const char* what;
    const json& tmpl;
    SimNode n;
    bool want;
  };
  for (const auto& c : std::vector<Case>{
           {"no constraints", plain, node("a"), true},
           {"nodeSelector match", selective, node("a", {{"pool", "gpu"}}), true},
           {"nodeSelector miss", selective, node("a", {{"pool", "cpu"}}), false},
           {"required affinity match", affine, node("a", {{"pool", "cpu"}}), true},
           {"required affinity miss", affine, node("a", {{"pool", "gpu"}}), false},
           {"untolerated NoSchedule taint", plain,
            node("a", {}, json::array({taint("nvidia.com/gpu", "NoSchedule")})), false},
           {"untolerated NoExecute taint", plain,
            node("a", {}, json::array({taint("dedicated", "NoExecute", "x")})), false},
           {"PreferNoSchedule is ignored", plain,
            node("a", {}, json::array({taint("x", "PreferNoSchedule")})), true},
           {"tolerated by the template", tolerant,
            node("a", {}, json::array({taint("nvidia.com/gpu", "NoSchedule")})), true},
           {"standard DaemonSet toleration: unschedulable", plain,
            node("a", {}, json::array({taint("node.kubernetes.io/unschedulable", "NoSchedule")})), true},
           {"standard DaemonSet toleration: not-ready", plain,
            node("a", {}, json::array({taint("node.kubernetes.io/not-ready", "NoExecute")})), true},
           {"network-unavailable only with hostNetwork", plain,
            node("a", {}, json::array({taint("node.kubernetes.io/network-unavailable", "NoSchedule")})),
            false},
       }) {
    EXPECT_EQ(node_should_run_daemon(daemon_placement(c.tmpl), c.n), c.want) << c.what;
  }
  json host = {{"spec", {{"hostNetwork", true}}}};
  EXPECT_TRUE(node_should_run_daemon(
      daemon_placement(host),
      node("a", {}, json::array({taint("node.kubernetes.io/network-unavailable", "NoSchedule")}))));
}

TEST(DaemonPods, TolerationsAndPinning) {
  json spec = {{"tolerations",
                {{{"key", "node.kubernetes.io/not-ready"},
                  {"operator", "Exists"},
                  {"effect", "NoExecute"},
                  {"tolerationSeconds", 300}},
                 {{"key", "gpu"}, {"operator", "Exists"}}}}};
  json t = daemon_tolerations(spec);
  ASSERT_EQ(t.size(), 7u);  // the template's gpu toleration + the six standard ones (not-ready replaced)
  EXPECT_EQ(t[0],
            (json{{"key", "node.kubernetes.io/not-ready"}, {"operator", "Exists"}, {"effect", "NoExecute"}}));
  EXPECT_EQ(t[1]["key"], "gpu");

  json affinity = json::parse(R"({"podAntiAffinity":{"x":1},"nodeAffinity":{
      "preferredDuringSchedulingIgnoredDuringExecution":[{"weight":1}],
      "requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"a","operator":"Exists"}]}]}}})");
  json pinned = pin_to_node(affinity, "node-7");
  EXPECT_EQ(pinned["podAntiAffinity"], json({{"x", 1}}));
  EXPECT_EQ(pinned["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"].size(), 1u);
  EXPECT_EQ(
      pinned["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"],
      json::parse(
          R"({"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["node-7"]}]}]})"));
  EXPECT_EQ(pin_to_node(nullptr, "n")["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
                                     ["nodeSelectorTerms"][0]["matchFields"][0]["values"][0],
            "n");

  SimPod p;
  p.affinity_json = pinned.dump();
  EXPECT_EQ(daemon_pod_node(p), "node-7");  // pending: from the pinning affinity
  p.node = "node-8";
  EXPECT_EQ(daemon_pod_node(p), "node-8");  // bound: spec.nodeName
  SimPod odd;
  odd.affinity_json = "not json";
  EXPECT_EQ(daemon_pod_node(odd), "");
}

}  // namespace
}  // namespace kubex::sim::cluster
