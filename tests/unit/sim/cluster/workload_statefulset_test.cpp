// StatefulSet ordering decisions (kube's StatefulSetControl.updateStatefulSet semantics).
#include "sim/cluster/workload_statefulset.h"

#include <gtest/gtest.h>

namespace kubex::sim::cluster {
namespace {

// A healthy pod of "web" at ordinal `ord` and revision `rev`.
StsPod pod(std::int64_t ord, const std::string& rev = "u") {
  return {"web-" + std::to_string(ord), ord, false, false, true, true, rev};
}
StsPod not_ready(std::int64_t ord, const std::string& rev = "u") {
  auto p = pod(ord, rev);
  p.running_ready = p.available = false;
  return p;
}

StsInput input(std::int64_t replicas, std::vector<StsPod> pods, bool ordered = true) {
  StsInput in;
  in.replicas = replicas;
  in.ordered_ready = ordered;
  in.current_revision = "c";
  in.update_revision = "u";
  in.pods = std::move(pods);
  return in;
}

// "create 0", "delete web-2 (scale-down)", ... for readable expectations.
std::vector<std::string> show(const std::vector<StsAction>& actions) {
  std::vector<std::string> out;
  for (const auto& a : actions) {
    if (a.kind == StsAction::Kind::kCreate) {
      out.push_back("create " + std::to_string(a.ordinal) + "@" + a.revision);
    } else {
      out.push_back("delete " + a.name + " (" + a.reason + ")");
    }
  }
  return out;
}

using V = std::vector<std::string>;

TEST(StatefulSetOrdinal, ParsesOnlyOwnNames) {
  EXPECT_EQ(statefulset_ordinal("web", "web-0"), 0);
  EXPECT_EQ(statefulset_ordinal("web", "web-12"), 12);
  EXPECT_EQ(statefulset_ordinal("web", "web-x"), -1);
  EXPECT_EQ(statefulset_ordinal("web", "web-"), -1);
  EXPECT_EQ(statefulset_ordinal("web", "web-01"), -1);
  EXPECT_EQ(statefulset_ordinal("web", "webx-1"), -1);
  EXPECT_EQ(statefulset_ordinal("web", "web-api-1"), -1);
  EXPECT_EQ(statefulset_ordinal("web-api", "web-api-1"), 1);
}

TEST(StatefulSetPlan, OrderedReadyCreatesOneAtATimeInOrder) {
  struct Case {
    const char* what;
    StsInput in;
    V want;
  };
  for (const auto& c : std::vector<Case>{
           {"empty set starts with ordinal 0 only", input(3, {}), {"create 0@u"}},
           {"waits while 0 is not Running and Ready", input(3, {not_ready(0)}), {}},
           {"1 once 0 is ready", input(3, {pod(0)}), {"create 1@u"}},
           {"fills a gap below existing pods first", input(3, {pod(0), pod(2)}), {"create 1@u"}},
           {"a deleted middle pod is recreated with its name", input(3, {pod(0), pod(2), pod(1)}), {}},
           {"terminating pod blocks",
            input(2, {pod(0),
                      [] {
                        auto p = pod(1);
                        p.terminating = true;
                        return p;
                      }()}),
            {}},
           {"finished pod is deleted and nothing else happens",
            input(3, {[] {
                        auto p = pod(0);
                        p.finished = true;
                        return p;
                      }(),
                      pod(1)}),
            {"delete web-0 (finished)"}},
           {"parallel creates everything at once",
            input(3, {}, false),
            {"create 0@u", "create 1@u", "create 2@u"}},
           {"parallel does not wait for readiness",
            input(3, {not_ready(0)}, false),
            {"create 1@u", "create 2@u"}},
       }) {
    EXPECT_EQ(show(plan_statefulset(c.in)), c.want) << c.what;
  }
}

TEST(StatefulSetPlan, ScaleDownFromTheHighestOrdinal) {
  struct Case {
    const char* what;
    StsInput in;
    V want;
  };
  for (const auto& c : std::vector<Case>{
           {"ordered: one at a time, highest first",
            input(1, {pod(0), pod(1), pod(2)}),
            {"delete web-2 (scale-down)"}},
           {"ordered: waits for a terminating condemned pod",
            input(1, {pod(0), pod(1),
                      [] {
                        auto p = pod(2);
                        p.terminating = true;
                        return p;
                      }()}),
            {}},
           {"ordered: not while a remaining replica is unhealthy", input(1, {not_ready(0), pod(1)}), {}},
           {"ordered: an unhealthy condemned pod may go if it is the first unhealthy",
            input(1, {pod(0), pod(1), not_ready(2)}),
            {"delete web-2 (scale-down)"}},
           {"ordered: blocked when a lower condemned pod is unhealthy",
            input(1, {pod(0), not_ready(1), not_ready(2)}),
            {}},
           {"parallel: all condemned at once",
            input(1, {pod(0), pod(1), pod(2)}, false),
            {"delete web-2 (scale-down)", "delete web-1 (scale-down)"}},
           {"to zero", input(0, {pod(0), pod(1)}), {"delete web-1 (scale-down)"}},
       }) {
    EXPECT_EQ(show(plan_statefulset(c.in)), c.want) << c.what;
  }
}

TEST(StatefulSetPlan, RollingUpdateHighestFirstHonouringPartition) {
  auto with = [](StsInput in, std::int64_t partition, bool on_delete = false) {
    in.partition = partition;
    in.on_delete = on_delete;
    return in;
  };
  struct Case {
    const char* what;
    StsInput in;
    V want;
  };
  for (const auto& c : std::vector<Case>{
           {"highest out-of-date pod first",
            input(3, {pod(0, "c"), pod(1, "c"), pod(2, "c")}),
            {"delete web-2 (update)"}},
           {"then the next once the updated one is available",
            input(3, {pod(0, "c"), pod(1, "c"), pod(2)}),
            {"delete web-1 (update)"}},
           {"waits for the updated pod to be available",
            input(3, {pod(0, "c"), pod(1, "c"), not_ready(2)}),
            {}},
           {"waits for the deleted pod's replacement", input(3, {pod(0, "c"), pod(1, "c")}), {"create 2@u"}},
           {"partition 2 keeps 0 and 1", with(input(3, {pod(0, "c"), pod(1, "c"), pod(2)}), 2), {}},
           {"partition 1 updates 2 then 1",
            with(input(3, {pod(0, "c"), pod(1, "c"), pod(2, "c")}), 1),
            {"delete web-2 (update)"}},
           {"a missing pod below the partition gets the current revision",
            with(input(3, {pod(1, "c"), pod(2)}), 2),
            {"create 0@c"}},
           {"OnDelete never deletes for updates", with(input(2, {pod(0, "c"), pod(1, "c")}), 0, true), {}},
           {"parallel also rolls one at a time",
            input(3, {pod(0, "c"), pod(1, "c"), pod(2, "c")}, false),
            {"delete web-2 (update)"}},
           {"up to date: nothing", input(2, {pod(0), pod(1)}), {}},
       }) {
    EXPECT_EQ(show(plan_statefulset(c.in)), c.want) << c.what;
  }
}

TEST(StatefulSetPlan, StartOrdinal) {
  auto in = input(2, {});
  in.start_ordinal = 5;
  EXPECT_EQ(show(plan_statefulset(in)), V{"create 5@u"});
  in.pods = {pod(5), pod(0)};  // 0 is now outside [5, 7)
  EXPECT_EQ(show(plan_statefulset(in)), V{"create 6@u"});
  in.pods = {pod(5), pod(6), pod(0)};
  EXPECT_EQ(show(plan_statefulset(in)), V{"delete web-0 (scale-down)"});
}

}  // namespace
}  // namespace kubex::sim::cluster
