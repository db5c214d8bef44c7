// The webhook server over its own HTTPS listener (net/tls_server.h) seen from a raw TLS client: an
// overrunning handler is answered at its deadline while other connections go on being served (ADM-2),
// pipelining and the keep-alive limit, 100-continue with a chunked body, idle connections closed, bad
// requests answered 400, many connections on one thread, a handler waiting in a BlockingScope lent another
// thread, and more open keep-alive connections than kept threads all answered.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "common/blocking.h"
#include "common/x509.h"
#include "webhook/certs.h"
#include "webhook/server.h"

namespace kubex::webhook {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

std::string review(const std::string& uid) {
  return json{
      {"apiVersion", "admission.k8s.io/v1"},
      {"kind", "AdmissionReview"},
      {"request", {{"uid", uid}, {"operation", "CREATE"}, {"object", {{"metadata", {{"name", "p"}}}}}}}}
      .dump();
}

std::string post(const std::string& path, const std::string& body, const std::string& extra = "") {
  return "POST " + path + " HTTP/1.1\r\nHost: kubex\r\nContent-Type: application/json\r\n" + extra +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

struct Response {
  int status = 0;
  std::string head, body;
  bool closes() const { return head.find("Connection: close") != std::string::npos; }
};

// A blocking TLS client on one connection that verifies the server against the test CA.
class RawTls {
 public:
  RawTls(int port, const std::string& ca_pem) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval tv{5, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return;
    ctx_ = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_cert_store(ctx_, common::make_store(ca_pem)->release());
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
    ssl_ = SSL_new(ctx_);
    SSL_set_fd(ssl_, fd_);
    SSL_set1_host(ssl_, "127.0.0.1");
    ok_ = SSL_connect(ssl_) == 1;
  }
  ~RawTls() {
    if (ssl_ != nullptr) SSL_free(ssl_);
    if (ctx_ != nullptr) SSL_CTX_free(ctx_);
    if (fd_ >= 0) close(fd_);
  }
  bool ok() const { return ok_; }
  void send(const std::string& s) {
    ASSERT_EQ(SSL_write(ssl_, s.data(), static_cast<int>(s.size())), static_cast<int>(s.size()));
  }

  // One response (status line, headers, Content-Length body); nullopt on EOF or a 5 s timeout.
  std::optional<Response> read_response() {
    while (true) {
      auto end = buf_.find("\r\n\r\n");
      if (end != std::string::npos) {
        Response r;
        r.head = buf_.substr(0, end);
        r.status = std::stoi(r.head.substr(9, 3));
        std::size_t length = 0;
        if (auto cl = r.head.find("Content-Length: "); cl != std::string::npos) {
          length = std::stoul(r.head.substr(cl + 16));
        }
        if (buf_.size() >= end + 4 + length) {
          r.body = buf_.substr(end + 4, length);
          buf_.erase(0, end + 4 + length);
          return r;
        }
      }
      if (!fill()) return std::nullopt;
    }
  }
  // True when the server ended the connection (rather than a 5 s timeout with the connection open).
  bool sees_end() {
    char c;
    int n = SSL_read(ssl_, &c, 1);
    if (n > 0) return false;
    int e = SSL_get_error(ssl_, n);
    return e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && errno != EAGAIN && errno != EWOULDBLOCK);
  }

 private:
  bool fill() {
    char tmp[16384];
    int n = SSL_read(ssl_, tmp, sizeof tmp);
    if (n <= 0) return false;
    buf_.append(tmp, static_cast<std::size_t>(n));
    return true;
  }
  int fd_ = -1;
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  bool ok_ = false;
  std::string buf_;
};

struct Listener : ::testing::Test {
  SelfSigned certs;
  std::unique_ptr<Server> server;
  void start(ServerOptions so) {
    auto generated = generate_self_signed({});
    ASSERT_TRUE(generated.has_value());
    certs = *generated;
    auto cert = ServingCertificate::from_pem(certs.serving);
    ASSERT_TRUE(cert.has_value());
    so.bind_address = "127.0.0.1:0";
    server = std::make_unique<Server>(so, *cert);
    server->handle("/allow", [](const AdmissionRequest&) { return AdmissionResponse::allow(); });
  }
  void listen() {
    auto started = server->start();
    ASSERT_TRUE(started.has_value()) << started.error().str();
  }
  std::unique_ptr<RawTls> connect() {
    auto c = std::make_unique<RawTls>(server->port(), certs.ca.cert_pem);
    EXPECT_TRUE(c->ok());
    return c;
  }
  // Three requests on new connections are answered.
  void expect_others_served() {
    for (int i = 0; i < 3; ++i) {
      auto other = connect();
      other->send(post("/allow", review("other-" + std::to_string(i))));
      auto r = other->read_response();
      ASSERT_TRUE(r) << i;
      EXPECT_EQ(json::parse(r->body)["response"]["uid"], "other-" + std::to_string(i));
    }
  }
};

// ADM-2 over TLS: with a single serving thread, a handler stuck past its deadline is answered fail-open at
// the deadline (and its connection closed after the answer), and other connections are still served.
TEST_F(Listener, OverrunIsAnsweredAtTheDeadlineAndOthersAreServed) {
  ServerOptions so;
  so.threads = 1;
  start(so);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  HandlerOptions ho;
  ho.deadline = 300ms;
  server->handle(
      "/slow",
      [released](const AdmissionRequest&) {
        released.wait();
        return AdmissionResponse::allow();
      },
      ho);
  listen();
  auto stuck = connect();
  auto t0 = std::chrono::steady_clock::now();
  stuck->send(post("/slow", review("late")));
  auto late = stuck->read_response();
  auto waited = std::chrono::steady_clock::now() - t0;
  ASSERT_TRUE(late);
  EXPECT_EQ(late->status, 200);
  EXPECT_EQ(json::parse(late->body)["response"], (json{{"uid", "late"}, {"allowed", true}}));
  EXPECT_GE(waited, 300ms);
  EXPECT_LT(waited, 3s);
  EXPECT_TRUE(late->closes());
  EXPECT_TRUE(stuck->sees_end());

  // The only configured thread is still inside the stuck handler: another one serves these.
  expect_others_served();
  release.set_value();
  server->stop();
}

// A handler that waits inside a common::BlockingScope (owner resolution asking the API server) is lent
// another thread at once: with one serving thread, other requests are answered while it waits, long
// before its deadline; after it returns the pool is back to one thread (requests still served).
TEST_F(Listener, AHandlerWaitingInABlockingScopeDoesNotHoldOthersUp) {
  ServerOptions so;
  so.threads = 1;
  start(so);
  std::promise<void> release, waiting;
  std::shared_future<void> released = release.get_future().share();
  server->handle("/waits", [released, &waiting](const AdmissionRequest&) {
    const common::BlockingScope scope;
    waiting.set_value();
    released.wait();
    return AdmissionResponse::allow();
  });
  listen();
  auto blocked = connect();
  blocked->send(post("/waits", review("waits")));
  waiting.get_future().wait();
  const auto t0 = std::chrono::steady_clock::now();
  expect_others_served();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 4s);  // not at the 8 s deadline
  release.set_value();
  auto r = blocked->read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(json::parse(r->body)["response"], (json{{"uid", "waits"}, {"allowed", true}}));
  EXPECT_FALSE(r->closes());  // answered by its own handler, not at a deadline
  for (int i = 0; i < 3; ++i) {
    blocked->send(post("/allow", review("after-" + std::to_string(i))));
    auto again = blocked->read_response();
    ASSERT_TRUE(again) << i;
    EXPECT_EQ(json::parse(again->body)["response"]["uid"], "after-" + std::to_string(i));
  }
  server->stop();
}

TEST_F(Listener, PipelinedRequestsAndTheKeepAliveLimit) {
  ServerOptions so;
  so.keep_alive_max_count = 3;
  start(so);
  listen();
  auto c = connect();
  c->send(post("/allow", review("a")) + "GET /healthz HTTP/1.1\r\nHost: kubex\r\n\r\n");  // one write
  auto first = c->read_response();
  auto second = c->read_response();
  ASSERT_TRUE(first && second);
  EXPECT_EQ(json::parse(first->body)["response"]["uid"], "a");
  EXPECT_FALSE(first->closes());
  EXPECT_EQ(second->body, "ok");
  c->send(post("/allow", review("c")));
  auto third = c->read_response();
  ASSERT_TRUE(third);
  EXPECT_TRUE(third->closes());  // the third of at most 3
  EXPECT_TRUE(c->sees_end());
}

TEST_F(Listener, ExpectContinueThenAChunkedBody) {
  start({});
  listen();
  auto c = connect();
  c->send(
      "POST /allow?timeout=10s HTTP/1.1\r\nHost: kubex\r\nExpect: 100-continue\r\n"
      "Transfer-Encoding: chunked\r\n\r\n");
  auto interim = c->read_response();
  ASSERT_TRUE(interim);
  EXPECT_EQ(interim->status, 100);
  std::string body = review("chunky");
  std::string half = body.substr(0, body.size() / 2), rest = body.substr(body.size() / 2);
  auto hex = [](std::size_t n) {
    char b[32];
    std::snprintf(b, sizeof b, "%zx", n);
    return std::string(b);
  };
  c->send(hex(half.size()) + "\r\n" + half + "\r\n" + hex(rest.size()) + "\r\n" + rest + "\r\n0\r\n\r\n");
  auto r = c->read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(json::parse(r->body)["response"]["uid"], "chunky");
}

TEST_F(Listener, IdleConnectionsAreClosedAfterTheTimeout) {
  ServerOptions so;
  so.keep_alive_timeout_seconds = 1;
  start(so);
  listen();
  auto c = connect();
  c->send("GET /healthz HTTP/1.1\r\nHost: kubex\r\n\r\n");
  ASSERT_TRUE(c->read_response());
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(c->sees_end());  // within the 5 s read timeout
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 4s);
}

TEST_F(Listener, MalformedRequestsAreAnswered400AndClosed) {
  start({});
  listen();
  auto c = connect();
  c->send("HELLO\r\n\r\n");
  auto r = c->read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(r->body, "malformed request line");
  EXPECT_TRUE(c->sees_end());
  auto d = connect();
  d->send("GET /allow HTTP/1.1\r\nHost: kubex\r\n\r\n");
  auto wrong = d->read_response();
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 405);
  d->send("GET /elsewhere HTTP/1.1\r\nHost: kubex\r\n\r\n");
  auto missing = d->read_response();
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
}

// Connections are not bound to threads: 24 open keep-alive connections on one thread, served in turn.
TEST_F(Listener, ManyConnectionsOnOneThread) {
  ServerOptions so;
  so.threads = 1;
  start(so);
  listen();
  std::vector<std::unique_ptr<RawTls>> conns;
  for (int i = 0; i < 24; ++i) conns.push_back(connect());
  for (int round = 0; round < 3; ++round) {
    for (std::size_t i = 0; i < conns.size(); ++i) {
      conns[i]->send(post("/allow", review("c" + std::to_string(i) + "-" + std::to_string(round))));
    }
    for (std::size_t i = 0; i < conns.size(); ++i) {
      auto r = conns[i]->read_response();
      ASSERT_TRUE(r) << i;
      EXPECT_EQ(json::parse(r->body)["response"]["uid"],
                "c" + std::to_string(i) + "-" + std::to_string(round));
    }
  }
}

// ADM-2: more open keep-alive connections than kept threads are all answered at once; before, a connection
// beyond `threads` waited until another one closed (5 s keep-alive), longer than the API server waits.
TEST(ServerThreads, AnswersMoreKeepAliveConnectionsThanKeptThreads) {
  auto certs = generate_self_signed({});
  ASSERT_TRUE(certs.has_value());
  auto cert = ServingCertificate::from_pem(certs->serving);
  ASSERT_TRUE(cert.has_value());
  ServerOptions so;
  so.bind_address = "127.0.0.1:0";
  so.threads = 2;
  Server server(so, *cert);
  std::set<std::thread::id> handler_threads;
  std::mutex mu;
  server.handle("/mutate", [&](const AdmissionRequest&) {
    std::lock_guard lk(mu);
    handler_threads.insert(std::this_thread::get_id());
    return AdmissionResponse::allow();
  });
  ASSERT_TRUE(server.start().has_value());

  constexpr int kConnections = 6;
  std::vector<std::unique_ptr<httplib::SSLClient>> clients;
  for (int i = 0; i < kConnections; ++i) {
    auto c = std::make_unique<httplib::SSLClient>("127.0.0.1", server.port());
    c->set_ca_cert_store(common::make_store(certs->ca.cert_pem)->release());
    c->enable_server_certificate_verification(true);
    c->set_keep_alive(true);
    c->set_read_timeout(3, 0);  // well below the 5 s keep-alive a starved connection waited for
    clients.push_back(std::move(c));
  }
  // Every connection answers one request and stays open; then each answers again on the same connection.
  for (int round = 0; round < 2; ++round) {
    std::vector<std::future<int>> answers;
    for (int i = 0; i < kConnections; ++i) {
      answers.push_back(std::async(std::launch::async, [&, i] {
        auto res = clients[static_cast<std::size_t>(i)]->Post("/mutate", review("u" + std::to_string(i)),
                                                              "application/json");
        return res ? res->status : -1;
      }));
    }
    for (auto& a : answers) {
      ASSERT_EQ(a.wait_for(5s), std::future_status::ready);
      EXPECT_EQ(a.get(), 200);
    }
  }
  clients.clear();  // closes the connections, so that stop() does not wait for their keep-alive to end
  server.stop();
  EXPECT_GE(handler_threads.size(), 1u);
}

}  // namespace
}  // namespace kubex::webhook
