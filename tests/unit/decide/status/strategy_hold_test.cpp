// VAL-4 "strategy DELETE": which finalizer write and which status a strategy gets from its references.
#include "decide/status/strategy_hold.h"

#include <gtest/gtest.h>

using namespace kubex::decide;
using F = StrategyHold::Finalizer;

namespace {

struct Row {
  const char* what;
  bool has_finalizer, deleting;
  std::vector<std::string> refs;
  F finalizer;
  const char* terminating_message;  // nullptr: no Terminating condition
};

}  // namespace

TEST(StrategyHold, FinalizerFollowsTheReferencesAndHoldsADeletedStrategy) {  // VAL-4
  const std::vector<std::string> two = {"ClusterGpuReactivePolicy/r", "ClusterProactivePolicy/p"};
  const std::vector<Row> rows = {
      {"referenced, no finalizer yet: add it", false, false, two, F::kAdd, nullptr},
      {"referenced, finalizer present: keep", true, false, two, F::kKeep, nullptr},
      {"unreferenced, finalizer present: remove", true, false, {}, F::kRemove, nullptr},
      {"unreferenced, no finalizer: nothing", false, false, {}, F::kKeep, nullptr},
      {"deleted while referenced: held, status says by whom", true, true, two, F::kKeep,
       "still referenced by ClusterGpuReactivePolicy/r, ClusterProactivePolicy/p"},
      {"deleted, last policy gone: released", true, true, {}, F::kRemove, nullptr},
      {"deleted before the finalizer was added: never added to a deleted object", false, true, two, F::kKeep,
       nullptr},
  };
  for (const auto& r : rows) {
    StrategyHold h = strategy_hold({r.has_finalizer, r.deleting, r.refs});
    EXPECT_EQ(h.finalizer, r.finalizer) << r.what;
    if (r.terminating_message) {
      ASSERT_TRUE(h.terminating.has_value()) << r.what;
      EXPECT_EQ(h.terminating->type, "Terminating") << r.what;
      EXPECT_EQ(h.terminating->status, "True") << r.what;
      EXPECT_EQ(h.terminating->reason, "StillReferenced") << r.what;
      EXPECT_EQ(h.terminating->message, r.terminating_message) << r.what;
    } else {
      EXPECT_FALSE(h.terminating.has_value()) << r.what;
    }
  }
}
