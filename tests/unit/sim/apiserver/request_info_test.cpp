#include <gtest/gtest.h>

#include "sim/apiserver/api_server.h"
#include "sim/apiserver/table.h"

#include <nlohmann/json.hpp>

using namespace kubex::sim;

TEST(RequestInfo, ParsesResourcePathsLikeKubeApiserver) {
  std::multimap<std::string, std::string> none;
  auto r = parse_request_info("GET", "/api/v1/namespaces/ns1/pods/p1/status", none);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->verb, "get");
  EXPECT_EQ(r->ns, "ns1");
  EXPECT_EQ(r->resource, "pods");
  EXPECT_EQ(r->name, "p1");
  EXPECT_EQ(r->subresource, "status");

  auto ns = parse_request_info("DELETE", "/api/v1/namespaces/foo", none);
  ASSERT_TRUE(ns);
  EXPECT_EQ(ns->resource, "namespaces");
  EXPECT_EQ(ns->name, "foo");
  EXPECT_EQ(ns->ns, "");
  EXPECT_EQ(ns->verb, "delete");

  auto list = parse_request_info("GET", "/apis/apps/v1/deployments", none);
  ASSERT_TRUE(list);
  EXPECT_EQ(list->group, "apps");
  EXPECT_EQ(list->verb, "list");

  std::multimap<std::string, std::string> watch{{"watch", "True"}};  // the Python client's spelling
  EXPECT_EQ(parse_request_info("GET", "/api/v1/pods", watch)->verb, "watch");
  EXPECT_EQ(parse_request_info("DELETE", "/api/v1/namespaces/a/pods", none)->verb, "deletecollection");
  EXPECT_FALSE(parse_request_info("GET", "/apis/apps", none));
  EXPECT_FALSE(parse_request_info("GET", "/version", none));
}

TEST(Table, HumanDurationMatchesKubectl) {
  using namespace std::chrono;
  EXPECT_EQ(human_duration(seconds(45)), "45s");
  EXPECT_EQ(human_duration(seconds(119)), "119s");
  EXPECT_EQ(human_duration(seconds(192)), "3m12s");
  EXPECT_EQ(human_duration(minutes(42)), "42m");
  EXPECT_EQ(human_duration(hours(5) + minutes(3)), "5h3m");
  EXPECT_EQ(human_duration(hours(30)), "30h");
  EXPECT_EQ(human_duration(hours(24 * 3 + 4)), "3d4h");
  EXPECT_EQ(human_duration(hours(24 * 400)), "400d");
}

TEST(Table, JsonPathSupportsPrinterColumnForms) {
  auto o = nlohmann::json::parse(R"({"status":{"conditions":[{"type":"Valid","status":"False"},
      {"type":"Ready","status":"True"}]},"spec":{"items":[{"n":1},{"n":2}],"size":3}})");
  EXPECT_EQ(jsonpath_find(o, ".spec.size").at(0), 3);
  EXPECT_EQ(jsonpath_find(o, R"(.status.conditions[?(@.type=="Ready")].status)").at(0), "True");
  EXPECT_EQ(jsonpath_find(o, ".spec.items[1].n").at(0), 2);
  EXPECT_EQ(jsonpath_find(o, ".spec.items[*].n").size(), 2u);
  EXPECT_EQ(jsonpath_find(o, "{.spec.size}").at(0), 3);
  EXPECT_TRUE(jsonpath_find(o, ".spec.absent").empty());
  EXPECT_TRUE(jsonpath_find(o, ".spec.items[9]").empty());
}
