// ENG-4's retry rules of the Kubernetes client, against a local HTTP server that answers each request from a script:
// a 429, or a 5xx with Retry-After, is sent again after that delay whatever the verb, at most
// max_retry_after_retries times; any other 5xx only for idempotent verbs; 501 never; and the eviction client's
// setting where a bare 429 (a PodDisruptionBudget's refusal) goes straight back.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "kube/client/client.h"
#include "kube/client/kubeconfig.h"

namespace kubex::kube {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

struct Answer {
  int status = 200;
  int retry_after = 0;  // seconds; 0 = no header
  bool in_body = false;  // retryAfterSeconds in the Status body instead of the header
};

class ScriptedServer : public ::testing::Test {
 protected:
  void SetUp() override {
    auto handler = [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard lk(mu_);
      ++requests_;
      Answer a = script_.empty() ? Answer{} : script_.front();
      if (!script_.empty()) script_.pop_front();
      res.status = a.status;
      if (a.status < 300) {
        res.set_content(R"({"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x"}})", "application/json");
        return;
      }
      json s = {{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"}, {"code", a.status},
                {"message", "scripted"}};
      if (a.retry_after > 0 && a.in_body) s["details"] = {{"retryAfterSeconds", a.retry_after}};
      if (a.retry_after > 0 && !a.in_body) res.set_header("Retry-After", std::to_string(a.retry_after));
      res.set_content(s.dump(), "application/json");
    };
    server_.Get(".*", handler);
    server_.Post(".*", handler);
    server_.Put(".*", handler);
    server_.Patch(".*", handler);
    server_.Delete(".*", handler);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(1ms);
  }
  void TearDown() override {
    server_.stop();
    thread_.join();
  }
  std::shared_ptr<Client> client(ClientOptions opts = {}) {
    ConnectionConfig cfg;
    cfg.server = "http://127.0.0.1:" + std::to_string(port_);
    opts.backoff_base = 1ms;  // back-off itself is not under test here
    opts.backoff_cap = 5ms;
    return *Client::create(cfg, opts);
  }
  void script(std::deque<Answer> answers) {
    std::lock_guard lk(mu_);
    script_ = std::move(answers);
    requests_ = 0;
  }
  int requests() {
    std::lock_guard lk(mu_);
    return requests_;
  }

  static constexpr const char* kPath = "/api/v1/namespaces/ml/configmaps/x";
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  std::deque<Answer> script_;
  int requests_ = 0;
};

TEST(ClientRetryDefaults, TenRetryAftersFiveBackOffs) {  // ENG-4: "at most 10 times"
  ClientOptions o;
  EXPECT_EQ(o.max_retry_after_retries, 10);
  EXPECT_EQ(o.max_retries, 5);
  EXPECT_TRUE(o.retry_bare_429);
}

// ENG-4: a 429 with Retry-After is waited out (never less than the delay it names), for every verb.
TEST_F(ScriptedServer, TooManyRequestsWithRetryAfterIsWaitedOut) {
  auto c = client();
  script({{429, 1}, {200}});
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(c->create("/api/v1/namespaces/ml/configmaps", json{{"metadata", {{"name", "x"}}}}).has_value());
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 1s);  // the server's delay, not the 1 ms back-off
  EXPECT_EQ(requests(), 2);
  script({{503, 1, true}, {200}});  // retryAfterSeconds in the Status body counts the same
  ASSERT_TRUE(c->get(kPath).has_value());
  EXPECT_EQ(requests(), 2);
}

// ENG-4: at most max_retry_after_retries times, then the caller gets the answer.
TEST_F(ScriptedServer, RetryAftersStopAtTheLimit) {
  ClientOptions o;
  o.max_retry_after_retries = 2;
  o.max_retries = 0;
  auto c = client(o);
  script({{429, 1}, {429, 1}, {429, 1}, {200}});
  auto r = c->get(kPath);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, 429);
  EXPECT_EQ(requests(), 3);  // the first try and two retries
}

// ENG-4: a 5xx without Retry-After is sent again only for idempotent verbs.
TEST_F(ScriptedServer, PlainServerErrorsRetryOnlyIdempotentVerbs) {
  auto c = client();
  script({{503}, {500}, {200}});
  EXPECT_TRUE(c->get(kPath).has_value());
  EXPECT_EQ(requests(), 3);
  script({{500}, {200}});
  EXPECT_TRUE(c->update(kPath, json{{"metadata", {{"name", "x"}}}}).has_value());  // PUT
  EXPECT_EQ(requests(), 2);
  script({{500}, {200}});
  auto created = c->create("/api/v1/namespaces/ml/configmaps", json{{"metadata", {{"name", "x"}}}});  // POST
  ASSERT_FALSE(created.has_value());
  EXPECT_EQ(created.error().code, 500);
  EXPECT_EQ(requests(), 1);  // it may have been applied: the caller decides
  script({{503}, {200}});
  auto patched = c->patch(kPath, PatchKind::kMerge, json{{"data", {{"a", "b"}}}});
  ASSERT_FALSE(patched.has_value());
  EXPECT_EQ(requests(), 1);
  script({{501}, {200}});  // Not Implemented is an answer, not a failure
  EXPECT_FALSE(c->get(kPath).has_value());
  EXPECT_EQ(requests(), 1);
  script({{500, 1}, {200}});  // a 5xx that says when to come back was not processed: any verb waits
  EXPECT_TRUE(c->create("/api/v1/namespaces/ml/configmaps", json{{"metadata", {{"name", "x"}}}}).has_value());
  EXPECT_EQ(requests(), 2);
}

// The eviction client's setting: a bare 429 is a PDB's refusal and comes straight back; with no retries at all,
// nothing is sent twice (act/evictor.cpp tells throttling from a refusal).
TEST_F(ScriptedServer, BareTooManyRequestsCanGoStraightBack) {
  ClientOptions o;
  o.retry_bare_429 = false;
  auto c = client(o);
  script({{429}, {200}});
  auto r = c->create("/api/v1/namespaces/ml/pods/p/eviction", json{{"kind", "Eviction"}});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, 429);
  EXPECT_EQ(requests(), 1);
  script({{429}, {200}});
  EXPECT_FALSE(c->get(kPath).has_value());  // not even for a GET
  EXPECT_EQ(requests(), 1);
  o.max_retries = 0;
  o.max_retry_after_retries = 0;
  auto none = client(o);
  script({{429, 1}, {200}});
  EXPECT_FALSE(none->get(kPath).has_value());
  EXPECT_EQ(requests(), 1);
}

}  // namespace
}  // namespace kubex::kube
