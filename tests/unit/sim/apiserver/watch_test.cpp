// WATCH through the API server's request handler (DESIGN §5: WATCH with bookmarks and 410 Gone for too-old
// versions; issue 12 item 11: a fresh server's watch window begins at the version its cache started from).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/apiserver/api_server.h"

using namespace kubex::sim;
using nlohmann::json;

namespace {

class WatchTest : public ::testing::Test {
 protected:
  WatchTest() : api_(ApiServerOptions{}) { api_.bootstrap(false); }
  ~WatchTest() override { api_.stop(); }

  // Creates a ConfigMap in `default`; returns its resourceVersion.
  std::string create_configmap(const std::string& name) {
    json cm = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", name}}},
               {"data", {{"k", "v"}}}};
    auto r = api_.call("POST", "/api/v1/namespaces/default/configmaps", cm.dump());
    EXPECT_EQ(r.status, 201) << r.body;
    return json::parse(r.body)["metadata"]["resourceVersion"].get<std::string>();
  }

  // Opens a watch of configmaps and returns its status and first event (the stream ends after one line).
  std::pair<int, json> first_event(const std::string& rv) {
    // timeoutSeconds bounds a stream that (wrongly) has nothing to send.
    std::multimap<std::string, std::string> query = {{"watch", "true"}, {"timeoutSeconds", "2"}};
    if (rv != "<none>") query.emplace("resourceVersion", rv);
    auto res = api_.call("GET", "/api/v1/namespaces/default/configmaps", "", "application/json", query);
    if (!res.stream) return {res.status, json::parse(res.body, nullptr, false)};
    json first;
    res.stream([&](const std::string& line) {
      if (line.empty()) return true;
      first = json::parse(line);
      return false;
    });
    return {res.status, first};
  }

  ApiServer api_;
};

}  // namespace

TEST_F(WatchTest, TooOldResourceVersionOnAFreshServerIsExpired) {
  create_configmap("a");
  auto [status, ev] = first_event("1");
  EXPECT_EQ(status, 200);  // like the watch cache: the stream opens, then one ERROR event
  ASSERT_EQ(ev.value("type", ""), "ERROR") << ev.dump();
  const json& st = ev["object"];
  EXPECT_EQ(st["kind"], "Status");
  EXPECT_EQ(st["apiVersion"], "v1");
  EXPECT_EQ(st["status"], "Failure");
  EXPECT_EQ(st["code"], 410);
  EXPECT_EQ(st["reason"], "Expired");
  EXPECT_EQ(st["message"].get<std::string>().rfind("too old resource version: 1 (", 0), 0u) << st.dump();
}

TEST_F(WatchTest, VersionsInsideTheWindowAndZeroStreamNormally) {
  std::string rv_a = create_configmap("a");
  create_configmap("b");
  auto [s1, from_a] = first_event(rv_a);  // events after a: b
  EXPECT_EQ(s1, 200);
  EXPECT_EQ(from_a["type"], "ADDED");
  EXPECT_EQ(from_a["object"]["metadata"]["name"], "b");
  for (const char* rv : {"0", "", "<none>"}) {  // the current state first, as ADDED events
    auto [s, ev] = first_event(rv);
    EXPECT_EQ(s, 200) << rv;
    EXPECT_EQ(ev["type"], "ADDED") << rv;
    EXPECT_EQ(ev["object"]["metadata"]["name"], "a") << rv;
  }
}
