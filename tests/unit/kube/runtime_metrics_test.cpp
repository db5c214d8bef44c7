// Metrics registry (OBS-5): every runtime family is exposed, the text is well-formed Prometheus exposition,
// and process metrics come from /proc. The e2e test runs the real `promtool check metrics` on the engine.
#include <gtest/gtest.h>
#include <httplib.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "kube/runtime/http_endpoints.h"
#include "kube/runtime/metrics.h"

namespace kubex::kube {
namespace {

// A small exposition-format checker: HELP and TYPE precede a family's samples, every sample line is
// `name{label="value",...} number`, and every sample belongs to a declared family.
std::vector<std::string> format_problems(const std::string& text, std::map<std::string, std::string>& types) {
  std::vector<std::string> problems;
  static const std::regex help(R"(^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) .+$)");
  static const std::regex type(
      R"(^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$)");
  static const std::regex sample(
      R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? (-?[0-9.eE+-]+|\+Inf|-Inf|NaN)$)");
  std::set<std::string> helped;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (line.empty()) continue;
    if (std::regex_match(line, m, help)) {
      helped.insert(m[1]);
    } else if (std::regex_match(line, m, type)) {
      if (!helped.count(m[1])) problems.push_back("TYPE before HELP: " + line);
      if (types.count(m[1])) problems.push_back("family twice: " + line);
      types[m[1]] = m[2];
    } else if (std::regex_match(line, m, sample)) {
      std::string name = m[1];
      std::string family = name;
      for (const char* suffix : {"_bucket", "_sum", "_count"}) {
        std::string s = suffix;
        if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0 &&
            types.count(name.substr(0, name.size() - s.size())) &&
            types[name.substr(0, name.size() - s.size())] == "histogram") {
          family = name.substr(0, name.size() - s.size());
        }
      }
      if (!types.count(family)) problems.push_back("sample without TYPE: " + line);
    } else {
      problems.push_back("malformed: " + line);
    }
  }
  return problems;
}

TEST(Metrics, RendersEveryRuntimeFamilyWellFormed) {
  Metrics m;
  auto q = m.queue_metrics("widgets");
  q->added();
  q->retried();
  q->depth(3);
  m.controller_metrics("widgets")->reconciled("success", 0.02);
  m.observe_request("GET", "200");
  m.request_observer()("PUT", "409");
  m.observe_request("GET", "error");
  m.set_leader_status("kubex-automation-engine-leader", true);
  std::string text = m.render();
  std::map<std::string, std::string> types;
  auto problems = format_problems(text, types);
  EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems) << "\n" << text;
  std::map<std::string, std::string> want = {
      {"workqueue_depth", "gauge"},
      {"workqueue_adds_total", "counter"},
      {"workqueue_retries_total", "counter"},
      {"controller_runtime_reconcile_total", "counter"},
      {"controller_runtime_reconcile_time_seconds", "histogram"},
      {"rest_client_requests_total", "counter"},
      {"leader_election_master_status", "gauge"},
      {"process_cpu_seconds_total", "counter"},
      {"process_resident_memory_bytes", "gauge"},
      {"process_virtual_memory_bytes", "gauge"},
      {"process_open_fds", "gauge"},
      {"process_max_fds", "gauge"},
      {"process_start_time_seconds", "gauge"},
  };
  for (const auto& [name, type] : want) EXPECT_EQ(types[name], type) << name;
  for (const char* line :
       {R"(workqueue_depth{name="widgets"} 3)", R"(workqueue_adds_total{name="widgets"} 1)",
        R"(workqueue_retries_total{name="widgets"} 1)",
        R"(rest_client_requests_total{code="200",method="GET"} 1)",
        R"(rest_client_requests_total{code="409",method="PUT"} 1)",
        R"(rest_client_requests_total{code="error",method="GET"} 1)",
        R"(leader_election_master_status{name="kubex-automation-engine-leader"} 1)",
        R"(controller_runtime_reconcile_time_seconds_bucket{controller="widgets",le="0.025"} 1)"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
}

TEST(Metrics, FamiliesWithoutSeriesAreStillListed) {
  Metrics m;  // no queue, controller or request yet
  std::map<std::string, std::string> types;
  auto problems = format_problems(m.render(), types);
  EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems);
  EXPECT_EQ(types["workqueue_depth"], "gauge");
  EXPECT_EQ(types["controller_runtime_reconcile_time_seconds"], "histogram");
  EXPECT_EQ(types["rest_client_requests_total"], "counter");
}

TEST(Metrics, OtherComponentsAddFamilies) {
  Metrics m;
  auto& f = m.counter_family("kubex_admission_requests_total", "Admission requests.");
  EXPECT_EQ(&f, &m.counter_family("kubex_admission_requests_total", "Admission requests."));
  f.Add({{"webhook", "late"}, {"result", "patched"}}).Increment(2);
  std::string text = m.render();
  EXPECT_NE(text.find(R"(kubex_admission_requests_total{result="patched",webhook="late"} 2)"),
            std::string::npos)
      << text;
}

TEST(ProcessStats, ReadFromProc) {
  ProcessStats s = read_process_stats();
  EXPECT_GT(s.resident_bytes, 0);
  EXPECT_GE(s.virtual_bytes, s.resident_bytes);
  EXPECT_GT(s.open_fds, 0);
  EXPECT_GE(s.max_fds, s.open_fds);
  EXPECT_GT(s.start_time_seconds, 1.6e9);  // after 2020
  EXPECT_GE(s.cpu_seconds, 0);
}

TEST(BindAddress, Parses) {
  auto a = parse_bind_address(":8080");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "0.0.0.0");
  EXPECT_EQ(a->port, 8080);
  a = parse_bind_address("127.0.0.1:0");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 0);
  a = parse_bind_address("[::1]:9");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "::1");
  EXPECT_TRUE(parse_bind_address("0")->disabled);
  EXPECT_FALSE(parse_bind_address("8080"));
  EXPECT_FALSE(parse_bind_address(":http"));
  EXPECT_FALSE(parse_bind_address(":70000"));
}

TEST(RunChecks, ListsFailingChecksByName) {
  std::vector<std::pair<std::string, Check>> checks = {
      {"informers", [] { return std::string("caches not synced: pods"); }},
      {"leader-election", [] { return std::string(); }},
      {"throws", []() -> std::string { throw std::runtime_error("x"); }}};
  auto r = run_checks(checks, "readyz");
  EXPECT_EQ(r.status, 500);
  EXPECT_NE(r.body.find("[-]informers failed: caches not synced: pods"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("[+]leader-election ok"), std::string::npos);
  EXPECT_NE(r.body.find("[-]throws failed"), std::string::npos);
  checks.erase(checks.begin());
  checks.pop_back();
  r = run_checks(checks, "readyz");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ok");
}

TEST(HttpEndpoints, ServeMetricsAndProbesOnPortZero) {
  HttpEndpoints::Options o;
  o.metrics_bind = "127.0.0.1:0";
  o.health_bind = "127.0.0.1:0";
  o.render_metrics = [] { return std::string("# HELP x y\n# TYPE x gauge\nx 1\n"); };
  auto ep = HttpEndpoints::start(std::move(o));
  ASSERT_TRUE(ep) << ep.error().str();
  ASSERT_GT((*ep)->metrics_port(), 0);
  ASSERT_GT((*ep)->health_port(), 0);
  std::atomic<bool> ready{false};
  (*ep)->add_readiness_check("informers", [&] { return ready ? std::string() : std::string("not synced"); });
  httplib::Client health("127.0.0.1", (*ep)->health_port());
  auto r = health.Get("/readyz");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 500);
  EXPECT_NE(r->body.find("[-]informers failed: not synced"), std::string::npos);
  ready = true;
  r = health.Get("/readyz");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  r = health.Get("/healthz");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  httplib::Client metrics("127.0.0.1", (*ep)->metrics_port());
  r = metrics.Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "# HELP x y\n# TYPE x gauge\nx 1\n");
  EXPECT_EQ(r->get_header_value("Content-Type").rfind("text/plain; version=0.0.4", 0), 0u);
  (*ep)->stop();
}

TEST(HttpEndpoints, BusyPortIsAClearError) {
  HttpEndpoints::Options o;
  o.metrics_bind = "127.0.0.1:0";
  o.health_bind = "0";
  auto first = HttpEndpoints::start(o);
  ASSERT_TRUE(first);
  EXPECT_EQ((*first)->health_port(), 0);
  o.metrics_bind = "127.0.0.1:" + std::to_string((*first)->metrics_port());
  auto second = HttpEndpoints::start(o);
  ASSERT_FALSE(second);
  EXPECT_NE(second.error().str().find("--metrics-bind-address"), std::string::npos) << second.error().str();
}

}  // namespace
}  // namespace kubex::kube
