// PodDisruptionBudget status and eviction admission, as kube-apiserver and the disruption controller keep them.
// The race here was seen in CI: a recount between an admitted eviction and the pod's deletion gave the spent
// disruption back, and a second eviction got through a budget of one.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "sim/apiserver/api_server.h"
#include "sim/apiserver/pdb.h"

using namespace kubex::sim;
using nlohmann::json;

namespace {

const std::string kNs = "/api/v1/namespaces/default";
const std::string kPdb = "/apis/policy/v1/namespaces/default/poddisruptionbudgets/guard";

void ready_pod(ApiServer& api, const std::string& name) {
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"labels", {{"app", "guarded"}}}}},
              {"spec", {{"containers", json::array({{{"name", "c"}, {"image", "busybox"}}})}}}};
  auto r = api.call("POST", kNs + "/pods", pod.dump(), "application/json");
  ASSERT_EQ(r.status, 201) << r.body;
  json status = {{"status",
                  {{"phase", "Running"},
                   {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
  r = api.call("PATCH", kNs + "/pods/" + name + "/status", status.dump(), "application/merge-patch+json");
  ASSERT_EQ(r.status, 200) << r.body;
}

json pdb_status(ApiServer& api) {
  auto r = api.call("GET", kPdb);
  EXPECT_EQ(r.status, 200) << r.body;
  return json::parse(r.body)["status"];
}

json pod(ApiServer& api, const std::string& name) {
  auto r = api.call("GET", kNs + "/pods/" + name);
  EXPECT_EQ(r.status, 200) << r.body;
  return json::parse(r.body);
}

}  // namespace

TEST(PdbTest, AnAdmittedEvictionStaysSpentUntilItsPodIsGone) {  // ACT-3 relies on it
  ApiServer api(ApiServerOptions{});
  api.bootstrap(false);
  json pdb = {{"apiVersion", "policy/v1"},
              {"kind", "PodDisruptionBudget"},
              {"metadata", {{"name", "guard"}}},
              {"spec", {{"minAvailable", 1}, {"selector", {{"matchLabels", {{"app", "guarded"}}}}}}}};
  auto r = api.call("POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets", pdb.dump(), "application/json");
  ASSERT_EQ(r.status, 201) << r.body;
  ready_pod(api, "g1");
  ready_pod(api, "g2");
  pdb::refresh_all(api);
  json st = pdb_status(api);
  ASSERT_EQ(st["currentHealthy"], 2);
  ASSERT_EQ(st["disruptionsAllowed"], 1);

  // The eviction of g1 is admitted; its pod is not deleted yet when the disruption controller recounts.
  ASSERT_TRUE(pdb::check_eviction(api, pod(api, "g1"), false).has_value());
  pdb::refresh_all(api);
  st = pdb_status(api);
  EXPECT_EQ(st["currentHealthy"], 1) << st.dump();
  EXPECT_EQ(st["disruptionsAllowed"], 0) << st.dump();
  EXPECT_TRUE(st["disruptedPods"].contains("g1")) << st.dump();
  auto second = pdb::check_eviction(api, pod(api, "g2"), false);
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.error().code, 429);

  // Once g1 is gone it leaves disruptedPods; the budget still has no room with one healthy pod of one.
  r = api.call("DELETE", kNs + "/pods/g1", "", "application/json", {{"gracePeriodSeconds", "0"}});
  ASSERT_LT(r.status, 300) << r.body;
  pdb::refresh_all(api);
  st = pdb_status(api);
  EXPECT_FALSE(st["disruptedPods"].contains("g1")) << st.dump();
  EXPECT_EQ(st["expectedPods"], 1) << st.dump();
  EXPECT_EQ(st["disruptionsAllowed"], 0) << st.dump();
  api.stop();
}
