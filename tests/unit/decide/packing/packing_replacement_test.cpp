// ACT-2a: the replacement of an upsized pod fits the cluster now, by the same packing rules as consolidation.
#include <gtest/gtest.h>

#include "decide/packing/replacement.h"
#include "packing_fixtures.h"

namespace kubex::decide::packing::test {
namespace {

struct Case {
  const char* what;
  Pool pool;
  Hundredths fraction;
  std::int64_t whole;
  bool fits;
  const char* node_or_reason;
};

PoolNode t4(std::string name, std::int64_t gpus = 1) {
  PoolNode n = node(std::move(name), gpus);
  n.labels = {{"nvidia.com/gpu.product", "T4"}, {"nvidia.com/gpu.memory", "15360"}};
  return n;
}
PoolNode l4(std::string name) {
  PoolNode n = node(std::move(name));
  n.labels = {{"nvidia.com/gpu.product", "L4"}, {"nvidia.com/gpu.memory", "23034"}};
  return n;
}
PoolNode not_ready(PoolNode n) {
  n.ready = false;
  return n;
}
PoolPod with_selector(PoolPod p, std::string k, std::string v) {
  p.node_selector[std::move(k)] = std::move(v);
  return p;
}

TEST(ReplacementFit, Table) {  // ACT-2a
  const Case cases[] = {
      {"the issue's case: one 1-GPU node, two 0.4 pods, 0.7 wanted: no room", {{node("n1")}, {frac("a", "n1", 40),
       frac("b", "n1", 40)}}, 70, 0, false, "pod ml/a (0.7) does not fit"},
      {"a second node, empty, takes it (ACT-2a allows empty nodes)", {{node("n1"), node("n2")},
       {frac("a", "n1", 40), frac("b", "n1", 40)}}, 70, 0, true, "n2"},
      {"its own share is freed: alone on its GPU, 0.4 → 0.9 fits in place", {{node("n1")}, {frac("a", "n1", 40)}},
       90, 0, true, "n1"},
      {"own share freed, with a neighbour: 0.4 + 0.3 neighbour, 0.6 wanted fits (0.9)", {{node("n1")},
       {frac("a", "n1", 40), frac("b", "n1", 30)}}, 60, 0, true, "n1"},
      {"the T4 cap: 0.4 + 0.3 neighbour, 0.7 wanted is 1.00 > 0.96", {{t4("n1")}, {frac("a", "n1", 40),
       frac("b", "n1", 30)}}, 70, 0, false, "pod ml/a (0.7) does not fit: reserve"},
      {"another GPU model never takes a fraction", {{t4("n1"), l4("n2")}, {frac("a", "n1", 40), frac("b", "n1", 40)}},
       70, 0, false, "pod ml/a (0.7) does not fit: gpu"},  // the L4 is empty and would fit
      {"a NotReady node is not a place", {{node("n1"), not_ready(node("n2"))}, {frac("a", "n1", 40),
       frac("b", "n1", 40)}}, 70, 0, false, "pod ml/a (0.7) does not fit"},
      {"the pod's node selector keeps it off the free node", {{node("n1"), node("n2")},
       {with_selector(frac("a", "n1", 40), "pool", "x"), frac("b", "n1", 40)}}, 70, 0, false,
       "pod ml/a (0.7) does not fit: node selector"},
      {"a fraction becoming one whole GPU needs a completely free GPU: its own, once freed", {{node("n1")},
       {frac("a", "n1", 40)}}, 0, 1, true, "n1"},
      {"a fraction becoming whole with a neighbour on its GPU: no free GPU", {{node("n1")}, {frac("a", "n1", 40),
       frac("b", "n1", 30)}}, 0, 1, false, "pod ml/a (1) does not fit"},
      {"whole GPUs may go to another model", {{t4("n1"), l4("n2")}, {frac("a", "n1", 40), frac("b", "n1", 40)}}, 0,
       1, true, "n2"},
      {"1 → 2 whole GPUs on a 2-GPU node: its own GPU plus the free one", {{node("n1", 2)}, {whole("a", "n1", 1)}}, 0,
       2, true, "n1"},
      {"a pod the snapshot does not hold", {{node("n1")}, {}}, 50, 0, false, "pod ml/a is not on a node"},
  };
  for (const Case& c : cases) {
    ReplacementFit f = replacement_fit(c.pool, "ml", "a", c.fraction, c.whole, MemoryReserve{});
    EXPECT_EQ(f.fits, c.fits) << c.what << ": " << f.reason;
    EXPECT_EQ(c.fits ? f.node : f.reason, c.node_or_reason) << c.what;
  }
}

TEST(ReplacementFit, CpuAndMemoryOfThePodAreFreedOnItsOwnNode) {  // ACT-2a with CON-6a
  PoolNode n = node("n1");
  n.cpu_millis = 1000;
  PoolPod a = frac("a", "n1", 40);
  a.cpu_millis = 800;  // the node is nearly full of CPU, but most of it is the pod's own
  EXPECT_TRUE(replacement_fit({{n}, {a}}, "ml", "a", 80, 0, MemoryReserve{}).fits);
}

}  // namespace
}  // namespace kubex::decide::packing::test
