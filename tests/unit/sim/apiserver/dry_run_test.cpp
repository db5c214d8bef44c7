// dryRun query values through the API server's request handler, as kube-apiserver answers them (found by the
// differential check of tests/conformance/test_differential.py against a real kube-apiserver).
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "sim/apiserver/api_server.h"

using namespace kubex::sim;
using nlohmann::json;

TEST(DryRunTest, UnsupportedValueIsInvalidOnTheOptionsKind) {
  ApiServer api(ApiServerOptions{});
  api.bootstrap(false);
  json cm = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "a"}}}};
  std::multimap<std::string, std::string> some = {{"dryRun", "Some"}};
  auto r = api.call("POST", "/api/v1/namespaces/default/configmaps", cm.dump(), "application/json", some);
  EXPECT_EQ(r.status, 422) << r.body;
  json st = json::parse(r.body);
  EXPECT_EQ(st["reason"], "Invalid");
  EXPECT_EQ(st["message"], "CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: [\"Some\"]: "
                           "supported values: \"All\"");
  EXPECT_EQ(st["details"]["kind"], "CreateOptions");
  EXPECT_EQ(st["details"]["group"], "meta.k8s.io");
  EXPECT_EQ(st["details"]["causes"][0]["field"], "dryRun");
  EXPECT_EQ(st["details"]["causes"][0]["reason"], "FieldValueNotSupported");
  EXPECT_EQ(st["details"]["causes"][0]["message"], "Unsupported value: [\"Some\"]: supported values: \"All\"");

  std::multimap<std::string, std::string> all = {{"dryRun", "All"}};
  r = api.call("POST", "/api/v1/namespaces/default/configmaps", cm.dump(), "application/json", all);
  EXPECT_EQ(r.status, 201) << r.body;
  r = api.call("PATCH", "/api/v1/namespaces/default/configmaps/a", "{}", "application/merge-patch+json", some);
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_EQ(json::parse(r.body)["details"]["kind"], "PatchOptions");
  api.stop();
}
