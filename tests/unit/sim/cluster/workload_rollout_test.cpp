// Deployment rollout arithmetic and the pod-template-hash (issue 3 item 2; kube's deployment/util semantics).
#include "sim/cluster/workload_rollout.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "sim/cluster/workload_common.h"
#include "sim/cluster/workload_deployment.h"

namespace kubex::sim::cluster {
namespace {

using nlohmann::json;

json tmpl(const std::string& image) {
  return {{"metadata", {{"labels", {{"app", "web"}}}}},
          {"spec", {{"containers", {{{"name", "c"}, {"image", image}}}}, {"restartPolicy", "Always"}}}};
}

TEST(PodTemplateHash, StableShapeAndSensitivity) {
  std::string h = pod_template_hash(tmpl("nginx:1"), 0);
  EXPECT_EQ(h.size(), 10u);
  EXPECT_EQ(h.find_first_not_of("bcdfghjklmnpqrstvwxz2456789"), std::string::npos) << h;
  // Same template -> same hash, whatever the key order of the input.
  json reordered =
      json::parse(R"({"spec":{"restartPolicy":"Always","containers":[{"image":"nginx:1","name":"c"}]},
                                   "metadata":{"labels":{"app":"web"}}})");
  EXPECT_EQ(pod_template_hash(reordered, 0), h);
  // The pod-template-hash label itself does not take part (an RS template compares equal to its
  // Deployment's).
  json labelled = tmpl("nginx:1");
  labelled["metadata"]["labels"][kPodTemplateHashLabel] = h;
  EXPECT_EQ(pod_template_hash(labelled, 0), h);
  EXPECT_EQ(template_without_hash(labelled), tmpl("nginx:1"));
  // Any change of the template, or a collision count, gives another hash.
  EXPECT_NE(pod_template_hash(tmpl("nginx:2"), 0), h);
  EXPECT_NE(pod_template_hash(tmpl("nginx:1"), 1), h);
  EXPECT_NE(pod_template_hash(tmpl("nginx:1"), 1), pod_template_hash(tmpl("nginx:1"), 2));
}

TEST(PodTemplateHash, KnownValueNeverChanges) {
  // Pinned: changing the hash function would roll every Deployment of a restarted simulator (--data-dir).
  EXPECT_EQ(short_hash(json::object()), short_hash(json::parse("{}")));
  EXPECT_EQ(short_hash(json{{"a", 1}}), "5hrcfpp76g");
}

TEST(PodTemplateHash, FewCollisionsOverManyTemplates) {
  std::set<std::string> seen;
  for (int i = 0; i < 20000; ++i) seen.insert(pod_template_hash(tmpl("img:" + std::to_string(i)), 0));
  EXPECT_EQ(seen.size(), 20000u);
}

TEST(ScaledIntOrPercent, Table) {
  struct Case {
    json v;
    std::int64_t total;
    bool up;
    std::int64_t want;
  };
  for (const auto& c : std::vector<Case>{{json("25%"), 10, true, 3},
                                         {json("25%"), 10, false, 2},
                                         {json("25%"), 8, true, 2},
                                         {json("100%"), 7, false, 7},
                                         {json("0%"), 7, true, 0},
                                         {json(3), 10, true, 3},
                                         {json("1%"), 1, true, 1},
                                         {json("1%"), 1, false, 0},
                                         {json(nullptr), 5, true, 0}}) {
    auto r = scaled_int_or_percent(c.v, c.total, c.up);
    ASSERT_TRUE(r) << c.v.dump();
    EXPECT_EQ(*r, c.want) << c.v.dump() << " of " << c.total << (c.up ? " up" : " down");
  }
  for (const json& bad : {json("25"), json("x%"), json(true), json("%")}) {
    EXPECT_FALSE(scaled_int_or_percent(bad, 10, true)) << bad.dump();
  }
}

TEST(ResolveFenceposts, Table) {
  struct Case {
    json surge, unavailable;
    std::int64_t replicas, want_surge, want_unavailable;
  };
  for (const auto& c : std::vector<Case>{
           {"25%", "25%", 10, 3, 2},  // surge rounds up, unavailable down
           {"25%", "25%", 1, 1, 0},
           {0, 0, 5, 0, 1},  // both zero: one may be unavailable so the rollout progresses
           {"0%", "0%", 3, 0, 1},
           {2, "50%", 3, 2, 1},
           {"100%", 0, 4, 4, 0},
       }) {
    auto r = resolve_fenceposts(c.surge, c.unavailable, c.replicas);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->max_surge, c.want_surge) << c.surge.dump() << "/" << c.replicas;
    EXPECT_EQ(r->max_unavailable, c.want_unavailable) << c.unavailable.dump() << "/" << c.replicas;
  }
  auto bad = resolve_fenceposts("x", 1, 3);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().path, "spec.strategy.rollingUpdate.maxSurge");
}

TEST(RollingNewReplicas, Table) {
  struct Case {
    std::int64_t replicas, surge, all, new_rs, want;
  };
  for (const auto& c : std::vector<Case>{
           {3, 1, 3, 0, 1},  // new RS may add one pod above the 3 old ones
           {3, 1, 4, 1, 1},  // at replicas+surge: wait
           {3, 1, 3, 1, 2},  // an old pod went away: grow again
           {10, 3, 10, 0, 3},
           {3, 0, 2, 1, 2},  // maxSurge 0: only replaces what old sets gave up
           {3, 5, 0, 0, 3},  // never above replicas
           {0, 1, 0, 0, 0},
       }) {
    EXPECT_EQ(rolling_new_replicas(c.replicas, c.surge, c.all, c.new_rs), c.want)
        << c.replicas << "/" << c.surge << "/" << c.all << "/" << c.new_rs;
  }
}

RsView rs(std::string name, std::int64_t replicas, std::int64_t available, int age_s = 0) {
  return {std::move(name), replicas, available, -1, common::TimePoint{std::chrono::seconds(1000 - age_s)}};
}

TEST(RollingScaleDownOld, Table) {
  struct Case {
    const char* what;
    std::int64_t replicas, max_unavailable;
    RsView new_rs;
    std::vector<RsView> old;
    std::vector<std::int64_t> want;
  };
  for (const auto& c : std::vector<Case>{
           {"surge pod not available yet: keep all old", 3, 0, rs("new", 1, 0), {rs("old", 3, 3)}, {3}},
           {"surge pod available: drop one old", 3, 0, rs("new", 1, 1), {rs("old", 3, 3)}, {2}},
           {"maxUnavailable 1 allows one below", 3, 1, rs("new", 1, 0), {rs("old", 3, 3)}, {2}},
           {"unhealthy old pods go first", 3, 1, rs("new", 1, 1), {rs("old", 3, 1)}, {1}},
           {"maxUnavailable 0 waits for the surge pod", 3, 0, rs("new", 1, 0), {rs("old", 3, 1)}, {3}},
           {"oldest set shrinks first",
            4,
            2,
            rs("new", 0, 0),
            {rs("a", 2, 2, 10), rs("b", 2, 2, 20)},
            {2, 0}},
           {"nothing old", 3, 1, rs("new", 3, 3), {rs("old", 0, 0)}, {0}},
           {"all available, full rollout step", 4, 1, rs("new", 4, 4), {rs("old", 1, 1)}, {0}},
       }) {
    EXPECT_EQ(rolling_scale_down_old(c.replicas, c.max_unavailable, c.new_rs, c.old), c.want) << c.what;
  }
}

TEST(ProportionalSizes, Table) {
  // Mid-rollout 10 replicas (surge 3) as new 6 + old 7 = 13; scaling to 20 (surge 5) adds 12 in proportion.
  auto a = rs("new", 6, 0, 0);
  a.max_replicas = 13;
  auto b = rs("old", 7, 7, 10);
  b.max_replicas = 13;
  auto sizes = proportional_sizes(20, 5, 13, {a, b});
  EXPECT_EQ(sizes[0] + sizes[1], 25);
  EXPECT_EQ(sizes, (std::vector<std::int64_t>{12, 13}));
  // Scaling to zero empties every set.
  EXPECT_EQ(proportional_sizes(0, 0, 13, {a, b}), (std::vector<std::int64_t>{0, 0}));
  // Scaling down 13 -> 5 (+1 surge) keeps the proportion, leftovers to the largest.
  sizes = proportional_sizes(5, 1, 13, {a, b});
  EXPECT_EQ(sizes[0] + sizes[1], 6);
  EXPECT_GE(sizes[1], sizes[0]);
  // Without annotations the deployment's status.replicas stands in.
  auto c = rs("x", 2, 2, 0), d = rs("y", 2, 2, 5);
  EXPECT_EQ(proportional_sizes(8, 0, 4, {c, d}), (std::vector<std::int64_t>{4, 4}));
}

}  // namespace
}  // namespace kubex::sim::cluster
