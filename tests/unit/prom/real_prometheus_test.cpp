// The real Prometheus (2.42, /usr/bin/prometheus and /usr/bin/promtool) accepts every query the REA-3
// and PRO-2 builders produce, and the client reads its responses as VAL-8 says: a vector is data, a scalar or a
// string is an error, a syntax error is Prometheus's bad_data, NaN and Inf samples count as missing.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "prom/client.h"
#include "prom/history_queries.h"
#include "prom/promql.h"
#include "test_support.h"

extern char** environ;

namespace kubex::prom {
namespace {

using namespace std::chrono_literals;
using testing_support::TempDir;
using testing_support::url_of;
using testing_support::write_file;

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every query the builders produce for a representative set of selectors and pods: gauge and counter,
// compute and memory, sum and avg, names that need regex escaping, and a 1001-pod split.
std::vector<std::string> builder_outputs() {
  const SignalSelector selectors[] = {
      {"DCGM_FI_DEV_GPU_UTIL", "namespace", "pod", "container", Aggregation::kSum},
      {"DCGM_FI_DEV_FB_USED", "exported_namespace", "exported_pod", "exported_container", Aggregation::kAvg},
      {"kubex_gpu_container_sm_utilization_percent_seconds_total", "namespace", "pod", "container",
       Aggregation::kSum},
      {"kubex_gpu_container_memory_bytes_seconds_total", "namespace", "pod", "container", Aggregation::kAvg},
  };
  std::vector<PodName> few = {{"team-a", "web-0"}, {"ns.x", "a.b"}, {"ns.x", "c+d"}, {"b", "x(1)|[y]{2}^$*?\\"}};
  std::vector<PodName> many;
  for (int i = 0; i < 1001; ++i) many.push_back({"ns-" + std::to_string(i % 7), "pod-" + std::to_string(i)});
  std::vector<std::string> out;
  for (const auto& s : selectors) {
    for (auto r : {Reduction::kQuantile95, Reduction::kMax}) {
      for (auto w : {120s, 600s}) {
        for (auto& q : signal_queries(s, r, few, w)) out.push_back(std::move(q));
      }
      for (auto& q : signal_queries(s, r, many, 600s)) out.push_back(std::move(q));
    }
  }
  // PRO-2's history queries: every signal, every kind's pod pattern, KAI and whole-GPU memory, names to escape.
  std::vector<HistoryWorkload> history = {{"Deployment", "ml", "infer", true}, {"Deployment", "a.b", "x+y", false},
                                          {"StatefulSet", "db", "pg", true},  {"CronJob", "db", "nightly", false},
                                          {"Model", "ml", "opt", false},      {"Job", "ml", "etl", true}};
  for (const auto& batch : history_batches(history)) {
    for (auto sig : {HistorySignal::kCompute, HistorySignal::kMemory, HistorySignal::kComputeSpan,
                     HistorySignal::kMemorySpan}) {
      out.push_back(history_query(sig, batch, 345600s));
    }
  }
  return out;
}

// REA-3: `promtool check rules` parses each builder output as a rule expression.
TEST(RealPromtool, AcceptsEveryBuilderOutput) {
  TempDir dir;
  std::string rules = "groups:\n  - name: kubex-rea3\n    rules:\n";
  auto queries = builder_outputs();
  for (std::size_t i = 0; i < queries.size(); ++i) {
    rules += "      - record: kubex:rea3_query_" + std::to_string(i) + "\n        expr: |\n          " + queries[i] +
             "\n";
  }
  write_file(dir.file("rules.yml"), rules);
  std::string log = dir.file("promtool.log");
  int rc = std::system(("/usr/bin/promtool check rules " + dir.file("rules.yml") + " >" + log + " 2>&1").c_str());
  EXPECT_EQ(rc, 0) << read_all(log);
  EXPECT_NE(read_all(log).find("SUCCESS: " + std::to_string(queries.size()) + " rules found"), std::string::npos)
      << read_all(log);
}

// A Prometheus server with no scrape targets on a free loopback port, for the whole suite.
class PrometheusProcess {
 public:
  PrometheusProcess() {
    write_file(dir_.file("prometheus.yml"), "global:\n  scrape_interval: 1m\nscrape_configs: []\n");
    for (int attempt = 0; attempt < 3 && !ready_; ++attempt) start();
  }
  ~PrometheusProcess() { stop(); }
  bool ready() const { return ready_; }
  int port() const { return port_; }
  std::string url() const { return url_of(port_); }
  std::string log() const { return read_all(dir_.file("prometheus.log")); }

  // net_conntrack_listener_conn_accepted_total of the web listener: connections Prometheus accepted.
  long accepted_connections() const {
    httplib::Client c("127.0.0.1", port_);
    auto res = c.Get("/metrics");
    if (!res || res->status != 200) return -1;
    const std::string key = "net_conntrack_listener_conn_accepted_total{listener_name=\"http\"} ";
    auto at = res->body.find("\n" + key);
    if (at == std::string::npos) return -1;
    return std::atol(res->body.c_str() + at + 1 + key.size());
  }

 private:
  void start() {
    port_ = testing_support::free_port();
    std::vector<std::string> args = {"/usr/bin/prometheus",
                                     "--config.file=" + dir_.file("prometheus.yml"),
                                     "--storage.tsdb.path=" + dir_.file("data"),
                                     "--web.listen-address=127.0.0.1:" + std::to_string(port_),
                                     "--log.level=warn"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    std::string log = dir_.file("prometheus.log");
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    int rc = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
      pid_ = -1;
      return;
    }
    httplib::Client c("127.0.0.1", port_);
    c.set_connection_timeout(1s);
    for (int i = 0; i < 400; ++i) {  // a bound on waiting for startup (~0.2 s here), not a timing assertion
      if (auto res = c.Get("/-/ready"); res && res->status == 200) {
        ready_ = true;
        return;
      }
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {  // exited (e.g. the port was taken meanwhile)
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(25ms);
    }
    stop();
  }
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }

  TempDir dir_;
  pid_t pid_ = -1;
  int port_ = 0;
  bool ready_ = false;
};

class RealPrometheus : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { prometheus_ = new PrometheusProcess(); }
  static void TearDownTestSuite() {
    delete prometheus_;
    prometheus_ = nullptr;
  }
  void SetUp() override {
    ASSERT_TRUE(prometheus_->ready()) << "prometheus did not start:\n" << prometheus_->log();
    Options o;
    o.url = prometheus_->url();
    o.timeout = 10s;
    auto c = connect(o);
    ASSERT_TRUE(c.has_value()) << c.error().str();
    client_ = std::move(*c);
  }
  std::string query_url() const { return prometheus_->url() + "/api/v1/query"; }
  std::string error_of(const std::string& promql) {
    auto r = client_->instant(promql);
    EXPECT_FALSE(r.has_value()) << promql;
    return r ? std::string("(no error)") : r.error().message;
  }

  static PrometheusProcess* prometheus_;
  std::unique_ptr<Querier> client_;
};

PrometheusProcess* RealPrometheus::prometheus_ = nullptr;

// REA-3: Prometheus evaluates every builder output; with no series stored, each is an empty vector.
TEST_F(RealPrometheus, EvaluatesEveryBuilderOutput) {
  for (const auto& q : builder_outputs()) {
    auto r = client_->instant(q);
    ASSERT_TRUE(r.has_value()) << q << "\n" << r.error().message;
    EXPECT_TRUE(r->samples.empty()) << q;
    EXPECT_EQ(r->non_finite, 0u) << q;
  }
}

TEST_F(RealPrometheus, VectorIsData) {
  auto r = client_->instant("vector(1)");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->samples.size(), 1u);
  EXPECT_TRUE(r->samples[0].labels.empty());
  EXPECT_DOUBLE_EQ(r->samples[0].value, 1);

  r = client_->instant(R"(label_replace(vector(0.25), "pod", "a.b", "", ""))");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->samples.size(), 1u);
  EXPECT_EQ(r->samples[0].labels, (std::map<std::string, std::string>{{"pod", "a.b"}}));
  EXPECT_DOUBLE_EQ(r->samples[0].value, 0.25);
}

// VAL-8: anything but a vector result is an error.
TEST_F(RealPrometheus, ScalarStringAndMatrixAreErrors) {
  EXPECT_EQ(error_of("scalar(vector(1))"), "Prometheus query to " + query_url() + R"( returned a "scalar" result, not a vector)");
  EXPECT_EQ(error_of("1"), "Prometheus query to " + query_url() + R"( returned a "scalar" result, not a vector)");
  EXPECT_EQ(error_of(R"("text")"), "Prometheus query to " + query_url() + R"( returned a "string" result, not a vector)");
  EXPECT_EQ(error_of("up[5m]"), "Prometheus query to " + query_url() + R"( returned a "matrix" result, not a vector)");
}

// VAL-8: Prometheus's own error (HTTP 400, errorType bad_data) is reported by its type and text.
TEST_F(RealPrometheus, SyntaxErrorIsBadData) {
  std::string e = error_of("sum(");
  EXPECT_TRUE(e.starts_with("Prometheus query to " + query_url() + R"( returned status "error": bad_data: )")) << e;
  EXPECT_NE(e.find("parse error"), std::string::npos) << e;
}

// VAL-8: "NaN and Inf samples count as missing".
TEST_F(RealPrometheus, NonFiniteSamplesCountAsMissing) {
  for (const char* q : {"vector(NaN)", "vector(+Inf)", "vector(-Inf)"}) {
    auto r = client_->instant(q);
    ASSERT_TRUE(r.has_value()) << q << ": " << r.error().message;
    EXPECT_TRUE(r->samples.empty()) << q;
    EXPECT_EQ(r->non_finite, 1u) << q;
  }
}

// Keep-alive: queries separated by an idle second share one connection (Prometheus counts the connections
// it accepts; reading that count takes one connection itself).
TEST_F(RealPrometheus, ReusesTheConnectionAcrossAnIdleGap) {
  long before = prometheus_->accepted_connections();
  ASSERT_GE(before, 0) << "no net_conntrack_listener_conn_accepted_total in /metrics";
  ASSERT_TRUE(client_->instant("vector(1)").has_value());
  std::this_thread::sleep_for(1s);
  auto r = client_->instant("vector(1)");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_TRUE(client_->instant("vector(1)").has_value());
  EXPECT_EQ(prometheus_->accepted_connections() - before, 2);  // the queries' one connection + this read's
}

}  // namespace
}  // namespace kubex::prom
