// CON-6a: node selector, required node affinity, taints and tolerations, CPU and memory, and the reason that
// names the constraint; the kube-scheduler request sum (requests.h) and movability (CON-4, CON-6a).
#include <gtest/gtest.h>

#include "decide/packing/constraints.h"
#include "decide/packing/movability.h"
#include "decide/packing/requests.h"
#include "packing_fixtures.h"

namespace kubex::decide::packing::test {
namespace {

// Candidate "c" (one movable 0.2 pod `p`, shaped by `shape`) and destinations built by the caller.
std::string reason_for(PoolPod p, std::vector<PoolNode> destinations, std::vector<PoolPod> others = {}) {
  Pool pool{{node("c")}, {std::move(p)}};
  for (auto& d : destinations) {
    pool.pods.push_back(frac("x-" + d.name, d.name, 10));
    pool.nodes.push_back(std::move(d));
  }
  for (auto& o : others) pool.pods.push_back(std::move(o));
  Plan plan_ = plan(pool, {});
  auto c = find_candidate(plan_, "c");
  if (!c || !c->candidate) return "not a candidate";
  return c->feasible ? "feasible -> " + c->placements[0].to : c->reason;
}

PoolNode labelled(std::string name, Labels labels) {
  PoolNode n = node(std::move(name));
  n.labels = std::move(labels);
  return n;
}

PoolNode tainted(std::string name, std::string key, std::string effect, std::string value = "") {
  PoolNode n = node(std::move(name));
  n.taints.push_back({std::move(key), std::move(value), std::move(effect)});
  return n;
}

TEST(PackingConstraints, NodeSelector) {  // CON-6a
  PoolPod p = frac("p", "c", 20);
  p.node_selector = {{"gpu", "t4"}};
  EXPECT_EQ(reason_for(p, {labelled("d", {{"gpu", "l4"}})}), "pod ml/p (0.2) does not fit: node selector");
  EXPECT_EQ(reason_for(p, {node("d")}), "pod ml/p (0.2) does not fit: node selector");
  EXPECT_EQ(reason_for(p, {labelled("d", {{"gpu", "t4"}, {"zone", "a"}})}), "feasible -> d");
}

struct AffinityCase {
  const char* name;
  NodeSelectorRequirement req;
  bool field = false;
  bool match;
};

TEST(PackingConstraints, RequiredNodeAffinityOperators) {  // CON-6a
  Labels labels{{"zone", "a"}, {"cores", "16"}, {"word", "x"}};
  std::vector<AffinityCase> cases = {
      {"In hit", {"zone", "In", {"a", "b"}}, false, true},
      {"In miss", {"zone", "In", {"b"}}, false, false},
      {"In absent", {"rack", "In", {"a"}}, false, false},
      {"NotIn hit", {"zone", "NotIn", {"a"}}, false, false},
      {"NotIn absent", {"rack", "NotIn", {"a"}}, false, true},
      {"Exists", {"zone", "Exists", {}}, false, true},
      {"Exists absent", {"rack", "Exists", {}}, false, false},
      {"DoesNotExist", {"rack", "DoesNotExist", {}}, false, true},
      {"DoesNotExist present", {"zone", "DoesNotExist", {}}, false, false},
      {"Gt", {"cores", "Gt", {"8"}}, false, true},
      {"Gt equal", {"cores", "Gt", {"16"}}, false, false},
      {"Lt", {"cores", "Lt", {"32"}}, false, true},
      {"Lt not integer label", {"word", "Lt", {"32"}}, false, false},
      {"Gt absent", {"rack", "Gt", {"1"}}, false, false},
      {"unknown operator", {"zone", "Equals", {"a"}}, false, false},
      {"matchFields name In", {"metadata.name", "In", {"d"}}, true, true},
      {"matchFields name NotIn", {"metadata.name", "NotIn", {"d"}}, true, false},
      {"matchFields other key", {"metadata.uid", "In", {"d"}}, true, false},
  };
  for (const auto& tc : cases) {
    PoolPod p = frac("p", "c", 20);
    NodeSelectorTerm term;
    (tc.field ? term.match_fields : term.match_expressions).push_back(tc.req);
    p.required_affinity = {term};
    PoolNode d = labelled("d", labels);
    EXPECT_EQ(node_affinity_matches(p, d), tc.match) << tc.name;
    EXPECT_EQ(reason_for(p, {d}), tc.match ? "feasible -> d" : "pod ml/p (0.2) does not fit: node affinity")
        << tc.name;
  }
}

TEST(PackingConstraints, AffinityTermsAreOredAndRequirementsAnded) {  // CON-6a
  PoolNode d = labelled("d", {{"zone", "a"}, {"gpu", "t4"}});
  PoolPod p = frac("p", "c", 20);
  p.required_affinity = {NodeSelectorTerm{{{"zone", "In", {"b"}}}, {}},
                         NodeSelectorTerm{{{"zone", "In", {"a"}}, {"gpu", "In", {"t4"}}}, {}}};
  EXPECT_TRUE(node_affinity_matches(p, d));
  p.required_affinity[1].match_expressions[1].values = {"l4"};
  EXPECT_FALSE(node_affinity_matches(p, d));
  p.required_affinity = {NodeSelectorTerm{}};  // an empty term matches no node
  EXPECT_FALSE(node_affinity_matches(p, d));
}

TEST(PackingConstraints, TaintsNeedTolerations) {  // CON-6a
  PoolPod p = frac("p", "c", 20);
  EXPECT_EQ(reason_for(p, {tainted("d", "dedicated", "NoSchedule", "x")}), "pod ml/p (0.2) does not fit: taint dedicated");
  EXPECT_EQ(reason_for(p, {tainted("d", "evict", "NoExecute")}), "pod ml/p (0.2) does not fit: taint evict");
  EXPECT_EQ(reason_for(p, {tainted("d", "soft", "PreferNoSchedule")}), "feasible -> d");
  PoolPod tol = p;
  tol.tolerations = {{"dedicated", "Equal", "x", "NoSchedule"}};
  EXPECT_EQ(reason_for(tol, {tainted("d", "dedicated", "NoSchedule", "x")}), "feasible -> d");
  EXPECT_EQ(reason_for(tol, {tainted("d", "dedicated", "NoSchedule", "y")}), "pod ml/p (0.2) does not fit: taint dedicated");
  EXPECT_EQ(reason_for(tol, {tainted("d", "dedicated", "NoExecute", "x")}), "pod ml/p (0.2) does not fit: taint dedicated");
}

TEST(PackingConstraints, TolerationMatching) {  // CON-6a, as Kubernetes' ToleratesTaint
  Taint t{"k", "v", "NoSchedule"};
  EXPECT_TRUE(tolerates({"k", "", "v", "NoSchedule"}, t));       // empty op is Equal
  EXPECT_TRUE(tolerates({"k", "Equal", "v", ""}, t));            // empty effect matches all
  EXPECT_TRUE(tolerates({"k", "Exists", "", "NoSchedule"}, t));  // Exists ignores the value
  EXPECT_TRUE(tolerates({"", "Exists", "", ""}, t));             // empty key + Exists tolerates everything
  EXPECT_FALSE(tolerates({"", "Equal", "", ""}, t));
  EXPECT_FALSE(tolerates({"k", "Equal", "w", ""}, t));
  EXPECT_FALSE(tolerates({"k", "Exists", "", "NoExecute"}, t));
  EXPECT_FALSE(tolerates({"other", "Exists", "", ""}, t));
  EXPECT_FALSE(tolerates({"k", "Gt", "v", ""}, t));
}

TEST(PackingConstraints, CpuAndMemoryRemaining) {  // CON-6a
  PoolPod p = frac("p", "c", 20);
  p.cpu_millis = 2000;
  p.memory_bytes = 2 * kGi;
  PoolNode d = node("d");
  d.cpu_millis = 4000;
  d.memory_bytes = 8 * kGi;
  // d already runs x-d (100m, 1Gi) and a CPU-only pod.
  EXPECT_EQ(reason_for(p, {d}, {cpu_only("busy", "d", 1901)}), "pod ml/p (0.2) does not fit: cpu");
  EXPECT_EQ(reason_for(p, {d}, {cpu_only("busy", "d", 1900)}), "feasible -> d");
  EXPECT_EQ(reason_for(p, {d}, {cpu_only("busy", "d", 0, 5 * kGi + 1)}), "pod ml/p (0.2) does not fit: memory");
  EXPECT_EQ(reason_for(p, {d}, {cpu_only("busy", "d", 0, 5 * kGi)}), "feasible -> d");
  PoolPod zero = frac("p", "c", 20);  // a pod requesting nothing fits even an overcommitted node
  zero.cpu_millis = 0;
  zero.memory_bytes = 0;
  EXPECT_EQ(reason_for(zero, {d}, {cpu_only("busy", "d", 9000, 20 * kGi)}), "feasible -> d");
}

TEST(PackingConstraints, PodsPlacedByThePlanTakeCpu) {  // CON-6a: "… and of the pods the plan has placed there"
  PoolNode d = node("d", 2);
  d.cpu_millis = 1100;  // x-d takes 100m
  Pool pool{{node("c"), d}, {frac("a", "c", 20), frac("b", "c", 20), frac("x-d", "d", 10)}};
  pool.pods[0].cpu_millis = 600;
  pool.pods[1].cpu_millis = 600;
  auto c = find_candidate(plan(pool, {}), "c");
  EXPECT_FALSE(c->feasible);
  EXPECT_EQ(c->reason, "pod ml/b (0.2) does not fit: cpu");
}

TEST(PackingConstraints, ReasonOfTheBestDestination) {  // CON-6a "using the best destination's reason"
  PoolPod p = frac("p", "c", 20);
  p.node_selector = {{"gpu", "t4"}};
  p.cpu_millis = 1000;
  PoolNode small = labelled("a-small", {{"gpu", "t4"}});
  small.cpu_millis = 500;
  // a-small passes the selector and fails on CPU; b-other fails on the selector: CPU is the closer miss.
  EXPECT_EQ(reason_for(p, {small, labelled("b-other", {{"gpu", "l4"}})}), "pod ml/p (0.2) does not fit: cpu");
  // Equal stages: the first destination by name gives the reason.
  PoolPod q = frac("p", "c", 20);
  EXPECT_EQ(reason_for(q, {tainted("b", "kb", "NoSchedule"), tainted("a", "ka", "NoSchedule")}),
            "pod ml/p (0.2) does not fit: taint ka");
}

TEST(PackingConstraints, GpuIsNamedWhenAnotherDestinationFailedAConstraint) {  // CON-6a `gpu`, CON-6 plain
  PoolPod p = frac("p", "c", 50);
  p.node_selector = {{"gpu", "t4"}};
  PoolNode full = labelled("a", {{"gpu", "t4"}});
  std::vector<PoolPod> fill = {frac("fill", "a", 80)};
  EXPECT_EQ(reason_for(p, {full, labelled("b", {{"gpu", "l4"}})}, fill), "pod ml/p (0.5) does not fit: gpu");
  // Only GPU room is missing everywhere: CON-6's wording, as in the SPEC example.
  EXPECT_EQ(reason_for(p, {full}, fill), "pod ml/p (0.5) does not fit");
}

TEST(PackingConstraints, FirstFailedCheckOrder) {  // CON-6a
  PoolPod p = frac("p", "c", 20);
  p.node_selector = {{"gpu", "t4"}};
  p.required_affinity = {NodeSelectorTerm{{{"zone", "In", {"a"}}}, {}}};
  p.cpu_millis = 100;
  PoolNode n = tainted("n", "k", "NoSchedule");
  EXPECT_EQ(first_failed_check(p, n, 0, 0), Check::kNodeSelector);
  n.labels["gpu"] = "t4";
  EXPECT_EQ(first_failed_check(p, n, 0, 0), Check::kNodeAffinity);
  n.labels["zone"] = "a";
  std::string key;
  EXPECT_EQ(first_failed_check(p, n, 0, 0, &key), Check::kTaint);
  EXPECT_EQ(key, "k");
  n.taints.clear();
  EXPECT_EQ(first_failed_check(p, n, n.cpu_millis, 0), Check::kCpu);
  EXPECT_EQ(first_failed_check(p, n, 0, n.memory_bytes), Check::kMemory);
  EXPECT_EQ(first_failed_check(p, n, 0, 0), Check::kNone);
}

TEST(PackingConstraints, OtherPoliciesConsolidationTaintIsNoDestination) {  // CON-5, CON-6a
  PoolNode d = tainted("d", kConsolidatingTaint, "NoSchedule", "other");
  d.consolidating_policy = "other";
  EXPECT_EQ(reason_for(frac("p", "c", 20), {d}), "pod ml/p (0.2) does not fit");
}

TEST(PackingRequests, KubeSchedulerSum) {  // CON-6a "containers plus init-container maximum"
  EXPECT_EQ(pod_requests({{false, false, 100, 10}, {false, false, 200, 20}}), (Requests{300, 30}));
  // A big init container dominates.
  EXPECT_EQ(pod_requests({{true, false, 1000, 5}, {false, false, 100, 10}}), (Requests{1000, 10}));
  // Sidecars add to the containers and run alongside later init containers.
  EXPECT_EQ(pod_requests({{true, true, 50, 50}, {true, false, 400, 10}, {false, false, 100, 10}}), (Requests{450, 60}));
  // An init container before the sidecar does not run alongside it.
  EXPECT_EQ(pod_requests({{true, false, 400, 10}, {true, true, 50, 50}, {false, false, 100, 10}}), (Requests{400, 60}));
  EXPECT_EQ(pod_requests({{false, false, 100, 10}}, {25, 5}), (Requests{125, 15}));  // spec.overhead
}

TEST(PackingMovability, Reasons) {  // CON-4, CON-6a
  MovabilityFacts ok{"ReplicaSet"};
  EXPECT_EQ(unmovable_reason(ok), "");
  EXPECT_EQ(unmovable_reason({}), "no controller owner");
  EXPECT_EQ(unmovable_reason({"DaemonSet"}), "owned by a DaemonSet");
  auto with = [&](auto set) {
    MovabilityFacts f = ok;
    set(f);
    return unmovable_reason(f);
  };
  EXPECT_EQ(with([](auto& f) { f.num_devices = true; }), "gpu-fraction-num-devices");
  EXPECT_EQ(with([](auto& f) { f.do_not_disrupt = true; }), "do-not-disrupt");
  EXPECT_EQ(with([](auto& f) { f.pdb_blocked = true; }), "PDB allows no disruption");
  EXPECT_EQ(with([](auto& f) { f.terminating = true; }), "terminating");
  EXPECT_EQ(with([](auto& f) { f.inter_pod_affinity = true; }), "required inter-pod affinity");
  EXPECT_EQ(with([](auto& f) { f.hard_topology_spread = true; }), "topology spread DoNotSchedule");
}

}  // namespace
}  // namespace kubex::decide::packing::test
