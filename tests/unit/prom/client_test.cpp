// The Prometheus client's transport against small local servers: each failure is an error value naming the
// URL (REA-10), the deadline is the whole request's, kept-alive connections that the server closed are never
// an error, and https with a CA file and a rotating bearer token works.
#include <gtest/gtest.h>
#include <httplib.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "prom/client.h"
#include "test_support.h"

namespace kubex::prom {
namespace {

using namespace std::chrono_literals;
using testing_support::BoundPort;
using testing_support::TempDir;
using testing_support::url_of;
using testing_support::write_file;

constexpr const char* kOneSample =
    R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"pod":"p"},"value":[1,"1"]}]}})";

std::unique_ptr<Querier> client(Options o) {
  auto c = connect(o);
  EXPECT_TRUE(c.has_value()) << c.error().str();
  return c ? std::move(*c) : nullptr;
}

std::unique_ptr<Querier> client(const std::string& url, std::chrono::milliseconds timeout = 5000ms) {
  Options o;
  o.url = url;
  o.timeout = timeout;
  return client(o);
}

std::string error_of(Querier& q, const std::string& promql = "vector(1)") {
  auto r = q.instant(promql);
  EXPECT_FALSE(r.has_value());
  return r ? std::string("(no error)") : r.error().message;
}

// An httplib server on a loopback port, run on its own thread.
template <class Server>
class Running {
 public:
  template <class... Args>
  explicit Running(Args&&... args) : server_(std::forward<Args>(args)...) {}
  ~Running() { stop(); }
  Server& operator*() { return server_; }
  Server* operator->() { return &server_; }
  int start() {
    port_ = server_.bind_to_any_port("127.0.0.1");
    EXPECT_GT(port_, 0);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(1ms);
    return port_;
  }
  void stop() {
    if (!thread_.joinable()) return;
    server_.stop();
    thread_.join();
  }

 private:
  Server server_;
  int port_ = 0;
  std::thread thread_;
};

// REA-10: nothing listens on the port.
TEST(PromClient, ConnectionRefused) {
  BoundPort nothing(false);
  auto q = client(url_of(nothing.port()));
  EXPECT_EQ(error_of(*q), "Prometheus query to " + url_of(nothing.port()) + "/api/v1/query failed: connection refused");
}

// A server that accepts connections and never answers (until the test ends).
class SilentServer {
 public:
  SilentServer() : port_(true) {
    thread_ = std::thread([this] {
      std::vector<int> held;
      while (!stop_) {
        pollfd p{port_.fd(), POLLIN, 0};
        if (::poll(&p, 1, 20) > 0) {
          int c = ::accept(port_.fd(), nullptr, nullptr);
          if (c >= 0) held.push_back(c);
        }
      }
      for (int c : held) ::close(c);
    });
  }
  ~SilentServer() {
    stop_ = true;
    thread_.join();
  }
  int port() const { return port_.port(); }

 private:
  BoundPort port_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// REA-10: "On an error or timeout": the query gives up at requestTimeout (300ms here is an input).
TEST(PromClient, TimeoutWhenTheServerNeverAnswers) {
  SilentServer server;
  auto q = client(url_of(server.port()), 300ms);
  EXPECT_EQ(error_of(*q), "Prometheus query to " + url_of(server.port()) + "/api/v1/query timed out after 300ms");
}

// A server that sends a valid response one byte every 50 ms (about 10 s in all): no single read waits long,
// so only a deadline on the whole request stops the client; without one the query would succeed late.
TEST(PromClient, TimeoutIsForTheWholeRequest) {
  BoundPort port(true);
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    pollfd p{port.fd(), POLLIN, 0};
    if (::poll(&p, 1, 10000) <= 0) return;
    int c = ::accept(port.fd(), nullptr, nullptr);
    std::string res = "HTTP/1.1 200 OK\r\nX-Slow: " + std::string(200, 'x') +
                      "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(std::strlen(kOneSample)) +
                      "\r\n\r\n" + kOneSample;
    for (std::size_t i = 0; i < res.size() && !stop; ++i) {
      if (::send(c, &res[i], 1, MSG_NOSIGNAL) != 1) break;
      std::this_thread::sleep_for(50ms);
    }
    ::close(c);
  });
  auto q = client(url_of(port.port()), 300ms);
  EXPECT_EQ(error_of(*q), "Prometheus query to " + url_of(port.port()) + "/api/v1/query timed out after 300ms");
  stop = true;
  trickle.join();
}

// VAL-8 / REA-10: a non-2xx status with a plain body, and a 200 that is not JSON.
TEST(PromClient, HttpErrorAndNonJsonBodies) {
  Running<httplib::Server> server;
  server->Post("/api/v1/query", [](const httplib::Request&, httplib::Response& res) {
    res.status = 503;
    res.set_content("upstream down\n", "text/plain");
  });
  server->Post("/html/api/v1/query", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("<html><body>login</body></html>", "text/html");
  });
  int port = server.start();
  auto q = client(url_of(port));
  EXPECT_EQ(error_of(*q), "Prometheus query to " + url_of(port) + "/api/v1/query returned HTTP 503: upstream down");
  auto html = client(url_of(port, "http", "/html"));
  EXPECT_EQ(error_of(*html),
            "Prometheus query to " + url_of(port) + "/html/api/v1/query returned a response that is not JSON");
}

// REA-3: POST <url>/api/v1/query with the form body query=<promql>, under the URL's path prefix.
TEST(PromClient, PostsTheQueryAsAForm) {
  Running<httplib::Server> server;
  std::mutex mu;
  std::string method, content_type, query;
  server->Post("/prefix/api/v1/query", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lk(mu);
    method = req.method;
    content_type = req.get_header_value("Content-Type");
    query = req.get_param_value("query");
    res.set_content(kOneSample, "application/json");
  });
  int port = server.start();
  auto q = client(url_of(port, "http", "/prefix/"));
  std::string promql = R"(sum by (namespace,pod) (m{namespace=~"a|b",pod=~"x\\.y+z"}[600s]) & 100%)";
  auto r = q->instant(promql);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->samples.size(), 1u);
  EXPECT_EQ(r->samples[0].labels.at("pod"), "p");
  std::lock_guard lk(mu);
  EXPECT_EQ(method, "POST");
  EXPECT_EQ(content_type, "application/x-www-form-urlencoded");
  EXPECT_EQ(query, promql);
}

// Issue 36 (`kubex plan sizing`): POST <url>/api/v1/query_range with query, start, end (unix seconds to the
// millisecond) and step (whole seconds) as a form; the matrix comes back (VAL-8), errors name the range URL.
TEST(PromClient, RangeQueryPostsStartEndAndStepAsAForm) {
  Running<httplib::Server> server;
  std::mutex mu;
  std::string query, start, end, step;
  server->Post("/prefix/api/v1/query_range", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lk(mu);
    query = req.get_param_value("query");
    start = req.get_param_value("start");
    end = req.get_param_value("end");
    step = req.get_param_value("step");
    res.set_content(R"({"status":"success","data":{"resultType":"matrix","result":[)"
                    R"({"metric":{"pod":"p"},"values":[[1700000000.5,"1"],[1700000060.5,"NaN"]]}]}})",
                    "application/json");
  });
  int port = server.start();
  auto q = client(url_of(port, "http", "/prefix/"));
  const common::TimePoint from{std::chrono::milliseconds(1700000000500)}, to{std::chrono::milliseconds(1700003600007)};
  auto r = q->range("max_over_time(m[60s])", from, to, std::chrono::seconds(60));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->series.size(), 1u);
  ASSERT_EQ(r->series[0].points.size(), 1u);
  EXPECT_EQ(r->series[0].points[0].at, from);
  EXPECT_EQ(r->non_finite, 1u);
  {
    std::lock_guard lk(mu);
    EXPECT_EQ(query, "max_over_time(m[60s])");
    EXPECT_EQ(start, "1700000000.500");
    EXPECT_EQ(end, "1700003600.007");
    EXPECT_EQ(step, "60");
  }
  // A refused connection names the range URL.
  BoundPort nothing(false);
  auto err = client(url_of(nothing.port()))->range("m", from, to, std::chrono::seconds(60));
  ASSERT_FALSE(err.has_value());
  EXPECT_EQ(err.error().message,
            "Prometheus range query to " + url_of(nothing.port()) + "/api/v1/query_range failed: connection refused");
}

// Keep-alive: back-to-back queries share one connection; after an idle gap longer than the server's
// keep-alive timeout (1 s here, 2 s gap) the closed connection is not reused and the query succeeds.
TEST(PromClient, ReusesConnectionsAndRecoversFromIdleClose) {
  Running<httplib::Server> server;
  server->set_keep_alive_timeout(1);
  std::mutex mu;
  std::vector<int> ports;
  server->Post("/api/v1/query", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lk(mu);
    ports.push_back(req.remote_port);
    res.set_content(kOneSample, "application/json");
  });
  int port = server.start();
  auto q = client(url_of(port));
  ASSERT_TRUE(q->instant("vector(1)").has_value());
  ASSERT_TRUE(q->instant("vector(1)").has_value());
  std::this_thread::sleep_for(2s);  // the server closes the idle connection after 1 s
  auto r = q->instant("vector(1)");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  std::lock_guard lk(mu);
  ASSERT_EQ(ports.size(), 3u);
  EXPECT_EQ(ports[0], ports[1]);  // reused
  EXPECT_NE(ports[1], ports[2]);  // a fresh connection after the server closed the idle one
}

// A plain-HTTP server that answers the first request of each connection and closes a connection when its
// second request arrives, unanswered: the keep-alive timeout firing just as the next query goes out.
class ClosesOnNextRequestServer {
 public:
  ClosesOnNextRequestServer() : port_(true) {
    thread_ = std::thread([this] {
      while (!stop_) {
        pollfd p{port_.fd(), POLLIN, 0};
        if (::poll(&p, 1, 20) <= 0) continue;
        int c = ::accept(port_.fd(), nullptr, nullptr);
        if (c < 0) continue;
        ++connections_;
        std::string buf;
        for (int served = 0; read_request(c, buf); ++served) {
          if (served > 0) break;
          std::string res = std::string("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ") +
                            std::to_string(std::strlen(kOneSample)) + "\r\n\r\n" + kOneSample;
          if (::send(c, res.data(), res.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(res.size())) break;
          ++answered_;
        }
        ::close(c);
      }
    });
  }
  ~ClosesOnNextRequestServer() {
    stop_ = true;
    thread_.join();
  }
  int port() const { return port_.port(); }
  int connections() const { return connections_; }
  int answered() const { return answered_; }

 private:
  // Headers up to the blank line, then Content-Length bytes; false when the peer is gone.
  static bool read_request(int c, std::string& buf) {
    char tmp[4096];
    for (;;) {
      auto end = buf.find("\r\n\r\n");
      if (end != std::string::npos) {
        std::size_t body = 0;
        std::string head = buf.substr(0, end);
        for (auto& ch : head) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        if (auto cl = head.find("content-length: "); cl != std::string::npos) body = std::stoul(head.substr(cl + 16));
        if (buf.size() >= end + 4 + body) {
          buf.erase(0, end + 4 + body);
          return true;
        }
      }
      pollfd p{c, POLLIN, 0};
      if (::poll(&p, 1, 5000) <= 0) return false;
      ssize_t n = ::recv(c, tmp, sizeof tmp, 0);
      if (n <= 0) return false;
      buf.append(tmp, static_cast<std::size_t>(n));
    }
  }

  BoundPort port_;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0}, answered_{0};
  std::thread thread_;
};

// An instant query is read-only: one that failed on a reused connection is sent once more on a fresh one,
// and the caller never sees the failure (common/http_reuse.h).
TEST(PromClient, QueryIsResentOnAFreshConnectionWhenAReusedOneFails) {
  ClosesOnNextRequestServer server;
  auto q = client(url_of(server.port()));
  ASSERT_TRUE(q->instant("vector(1)").has_value());
  auto r = q->instant("vector(1)");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->samples.size(), 1u);
  EXPECT_EQ(server.connections(), 2);
  EXPECT_EQ(server.answered(), 2);
}

// Querier::instant is thread-safe: concurrent queries each get their own connection from the pool.
TEST(PromClient, ConcurrentQueries) {
  Running<httplib::Server> server;
  server->Post("/api/v1/query", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(kOneSample, "application/json");
  });
  int port = server.start();
  auto q = client(url_of(port));
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) ok += q->instant("vector(1)").has_value() ? 1 : 0;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok, 40);
}

// A CA and a serving certificate for 127.0.0.1 (IP SAN), made with the openssl CLI.
struct Pki {
  std::string ca_crt, srv_crt, srv_key;
};

Pki make_pki(const TempDir& dir, const std::string& prefix) {
  Pki p{dir.file(prefix + "ca.crt"), dir.file(prefix + "srv.crt"), dir.file(prefix + "srv.key")};
  std::string ca_key = dir.file(prefix + "ca.key"), csr = dir.file(prefix + "srv.csr"), ext = dir.file(prefix + "ext");
  write_file(ext, "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n");
  const std::string ec = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  std::string cmds[] = {
      "openssl req -x509" + ec + " -keyout " + ca_key + " -out " + p.ca_crt + " -days 1 -subj /CN=" + prefix + "ca",
      "openssl req" + ec + " -keyout " + p.srv_key + " -out " + csr + " -subj /CN=127.0.0.1",
      "openssl x509 -req -in " + csr + " -CA " + p.ca_crt + " -CAkey " + ca_key + " -set_serial 2 -days 1 -out " +
          p.srv_crt + " -extfile " + ext,
  };
  for (const auto& cmd : cmds) EXPECT_EQ(std::system((cmd + " >/dev/null 2>&1").c_str()), 0) << cmd;
  return p;
}

// https with a CA file, and a bearer token the server checks; the token file is read again when it changes.
class PromClientTls : public ::testing::Test {
 protected:
  void SetUp() override {
    pki_ = make_pki(dir_, "good-");
    server_ = std::make_unique<Running<httplib::SSLServer>>(pki_.srv_crt.c_str(), pki_.srv_key.c_str());
    (*server_)->Post("/prom/api/v1/query", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lk(mu_);
      seen_.push_back(req.get_header_value("Authorization"));
      if (seen_.back() != "Bearer " + expected_) {
        res.status = 401;
        res.set_content("unauthorized\n", "text/plain");
        return;
      }
      res.set_content(kOneSample, "application/json");
    });
    port_ = server_->start();
    options_.url = url_of(port_, "https", "/prom");
    options_.ca_file = pki_.ca_crt;
    options_.bearer_token_file = dir_.file("token");
  }
  void TearDown() override { server_.reset(); }
  void expect_token(const std::string& t) {
    std::lock_guard lk(mu_);
    expected_ = t;
  }
  std::string last_seen() {
    std::lock_guard lk(mu_);
    return seen_.empty() ? "" : seen_.back();
  }
  std::string query_url() const { return url_of(port_, "https", "/prom") + "/api/v1/query"; }

  TempDir dir_;
  Pki pki_;
  std::unique_ptr<Running<httplib::SSLServer>> server_;
  int port_ = 0;
  Options options_;
  std::mutex mu_;
  std::string expected_ = "token-one";
  std::vector<std::string> seen_;
};

TEST_F(PromClientTls, CaFileAndBearerToken) {
  write_file(dir_.file("token"), "  token-one\n");  // surrounding whitespace is not part of the token
  auto q = client(options_);
  auto r = q->instant("vector(1)");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->samples.size(), 1u);
  EXPECT_EQ(last_seen(), "Bearer token-one");
}

// The server's 401 for a wrong or missing token surfaces as an HTTP error (REA-10).
TEST_F(PromClientTls, WrongOrMissingTokenIsTheServersHttpError) {
  write_file(dir_.file("token"), "not-the-token");
  auto q = client(options_);
  EXPECT_EQ(error_of(*q), "Prometheus query to " + query_url() + " returned HTTP 401: unauthorized");
  EXPECT_EQ(last_seen(), "Bearer not-the-token");

  Options none = options_;
  none.bearer_token_file.clear();
  auto anonymous = client(none);
  EXPECT_EQ(error_of(*anonymous), "Prometheus query to " + query_url() + " returned HTTP 401: unauthorized");
  EXPECT_EQ(last_seen(), "");
}

TEST_F(PromClientTls, UnreadableOrEmptyTokenFileIsAnError) {
  auto q = client(options_);  // the file does not exist yet
  EXPECT_EQ(error_of(*q), "Prometheus query to " + query_url() +
                              " failed: cannot read the bearer token file " + dir_.file("token") +
                              ": no such file or directory");
  write_file(dir_.file("token"), " \n");
  EXPECT_EQ(error_of(*q), "Prometheus query to " + query_url() + " failed: the bearer token file " +
                              dir_.file("token") + " is empty");
}

// Token rotation: the next query after the file changed sends the new token. Rewritten in place (another
// length), then replaced by a rename (same length, another inode), then swapped the way Kubernetes updates a
// projected volume (the file is a symlink through ..data, and ..data is re-pointed).
TEST_F(PromClientTls, RotatedTokenIsSentByTheNextQuery) {
  write_file(dir_.file("token"), "token-one");
  auto q = client(options_);
  ASSERT_TRUE(q->instant("vector(1)").has_value());
  EXPECT_EQ(last_seen(), "Bearer token-one");

  expect_token("token-two-longer");
  write_file(dir_.file("token"), "token-two-longer\n");
  auto r = q->instant("vector(1)");
  EXPECT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(last_seen(), "Bearer token-two-longer");

  expect_token("token-333-longer");
  write_file(dir_.file("token.new"), "token-333-longer\n");
  std::filesystem::rename(dir_.file("token.new"), dir_.file("token"));
  r = q->instant("vector(1)");
  EXPECT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(last_seen(), "Bearer token-333-longer");

  // Kubernetes layout: token -> ..data/token, ..data -> ..v1; rotation points ..data at ..v2.
  std::filesystem::create_directory(dir_.file("..v1"));
  std::filesystem::create_directory(dir_.file("..v2"));
  write_file(dir_.file("..v1/token"), "token-four-aaaa");
  write_file(dir_.file("..v2/token"), "token-five-bbbb");
  std::filesystem::create_directory_symlink("..v1", dir_.file("..data"));
  std::filesystem::remove(dir_.file("token"));
  std::filesystem::create_symlink("..data/token", dir_.file("token"));
  expect_token("token-four-aaaa");
  r = q->instant("vector(1)");
  EXPECT_TRUE(r.has_value()) << r.error().message;
  expect_token("token-five-bbbb");
  std::filesystem::create_directory_symlink("..v2", dir_.file("..data_tmp"));
  std::filesystem::rename(dir_.file("..data_tmp"), dir_.file("..data"));
  r = q->instant("vector(1)");
  EXPECT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(last_seen(), "Bearer token-five-bbbb");
}

// A certificate from another CA does not verify, and the message says so.
TEST_F(PromClientTls, ServerCertificateFromAnotherCaIsRejected) {
  write_file(dir_.file("token"), "token-one");
  Pki other = make_pki(dir_, "other-");
  Options o = options_;
  o.ca_file = other.ca_crt;
  auto q = client(o);
  std::string e = error_of(*q);
  EXPECT_TRUE(e.starts_with("Prometheus query to " + query_url() +
                            " failed: TLS: the server certificate did not verify: "))
      << e;
  EXPECT_NE(e.find("(CA file " + other.ca_crt + ")"), std::string::npos) << e;
}

}  // namespace
}  // namespace kubex::prom
