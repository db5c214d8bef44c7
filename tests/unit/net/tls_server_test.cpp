// The engine's HTTP/1.1 server (net/tls_server.h) on its own, with httplib and raw sockets as clients:
// requests answered over TLS on kept-alive connections, 500 for a handler that throws or does not answer,
// OpenSSL's reason for a failed handshake (on_tls_failure), a handler waiting in a common::BlockingScope lent
// another worker (ADM-2: the webhook's requests behind it are not held up), and plain HTTP (the metrics and
// health endpoints, ENG-1): keep-alive, pipelining, HEAD, the keep-alive limit, idle timeout, 400s, a busy
// port. Waits use deadlines, never bare sleeps.
#include "net/tls_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "common/blocking.h"
#include "common/x509.h"

namespace kubex::net {
namespace {

using namespace std::chrono_literals;

struct Pki {
  common::PemPair ca, serving;
};

Pki make_pki() {
  Pki p;
  auto ca = common::generate_ca("kubex-net-test-ca", 1);
  EXPECT_TRUE(ca.has_value());
  p.ca = *ca;
  common::CertSpec spec;
  spec.common_name = "kubex-net-test";
  spec.ip_addresses = {"127.0.0.1"};
  spec.server_auth = true;
  auto serving = common::issue_certificate(p.ca, spec);
  EXPECT_TRUE(serving.has_value());
  p.serving = *serving;
  return p;
}

// A TLS handshake by a client that verifies the server against `ca_pem` during the handshake (like Go's
// client, and unlike httplib, which checks after it), so an untrusted certificate ends it with an alert.
bool handshake(int port, const std::string& ca_pem) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  bool ok = false;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_cert_store(ctx, common::make_store(ca_pem)->release());
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    SSL* ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    ok = SSL_connect(ssl) == 1;
    SSL_free(ssl);
    SSL_CTX_free(ctx);
  }
  close(fd);
  return ok;
}

// Answers "METHOD PATH BODY" with 200, except /throw (throws) and /silent (returns without an answer).
void echo(http1::Request& request, const std::shared_ptr<Reply>& reply) {
  if (request.path == "/throw") throw std::runtime_error("boom");
  if (request.path == "/silent") return;
  reply->send(200, "text/plain", request.method + " " + request.path + " " + request.body);
}

struct TlsServing : ::testing::Test {
  Pki pki = make_pki();
  std::unique_ptr<TlsServer> server;

  void start(TlsServerOptions options, RequestHandler handler = echo) {
    server = std::make_unique<TlsServer>(
        std::move(options),
        [this](ssl_ctx_st* ctx) { return common::configure_server_ctx(ctx, pki.serving); },
        std::move(handler));
    auto bound = server->bind("127.0.0.1", 0);
    ASSERT_TRUE(bound.has_value()) << bound.error().str();
    ASSERT_GT(server->port(), 0);
    server->start();
  }
  std::unique_ptr<httplib::SSLClient> client(const std::string& ca_pem) {
    auto c = std::make_unique<httplib::SSLClient>("127.0.0.1", server->port());
    c->set_ca_cert_store(common::make_store(ca_pem)->release());
    c->enable_server_certificate_verification(true);
    c->set_keep_alive(true);
    c->set_read_timeout(5, 0);
    return c;
  }
  void TearDown() override {
    if (server) server->stop(2000ms);
  }
};

TEST_F(TlsServing, AnswersRequestsOnAKeptAliveConnection) {
  start({});
  auto c = client(pki.ca.cert_pem);
  for (int i = 0; i < 3; ++i) {
    auto r = c->Post("/p" + std::to_string(i), "body" + std::to_string(i), "text/plain");
    ASSERT_TRUE(r) << i;
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, "POST /p" + std::to_string(i) + " body" + std::to_string(i));
    EXPECT_EQ(r->get_header_value("Connection"), "keep-alive");
  }
  auto q = c->Get("/with?query=1");
  ASSERT_TRUE(q);
  EXPECT_EQ(q->body, "GET /with ");  // the path without its query
}

TEST_F(TlsServing, AHandlerThatThrowsOrDoesNotAnswerGets500) {
  start({});
  auto c = client(pki.ca.cert_pem);
  auto thrown = c->Get("/throw");
  ASSERT_TRUE(thrown);
  EXPECT_EQ(thrown->status, 500);
  EXPECT_EQ(thrown->body, "internal error");
  auto silent = client(pki.ca.cert_pem)->Get("/silent");
  ASSERT_TRUE(silent);
  EXPECT_EQ(silent->status, 500);
  EXPECT_EQ(silent->body, "internal error: the request was not answered");
}

// A client that does not trust the certificate aborts the handshake with an alert: on_tls_failure gets
// OpenSSL's reason (the webhook's probe failures name it).
TEST_F(TlsServing, AFailedHandshakeIsReportedWithOpenSslsReason) {
  auto failed = std::make_shared<std::promise<std::string>>();
  auto reported = failed->get_future();
  TlsServerOptions o;
  o.on_tls_failure = [failed, once = std::make_shared<std::once_flag>()](const std::string& why) {
    std::call_once(*once, [&] { failed->set_value(why); });
  };
  start(o);
  Pki other = make_pki();
  EXPECT_FALSE(handshake(server->port(), other.ca.cert_pem));
  ASSERT_EQ(reported.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(reported.get(), "tlsv1 alert unknown ca");
}

// With one worker, a handler waiting in a BlockingScope is lent another worker at once: other requests are
// answered while it waits, and it still answers its own request when it is back.
TEST_F(TlsServing, AHandlerWaitingInABlockingScopeIsLentAWorker) {
  std::promise<void> release, waiting;
  std::shared_future<void> released = release.get_future().share();
  TlsServerOptions o;
  o.workers = 1;
  start(o, [released, &waiting](http1::Request& request, const std::shared_ptr<Reply>& reply) {
    if (request.path == "/waits") {
      const common::BlockingScope scope;
      waiting.set_value();
      released.wait();
    }
    reply->send(200, "text/plain", request.path);
  });
  auto blocked = std::async(std::launch::async, [&] {
    auto r = client(pki.ca.cert_pem)->Get("/waits");
    return r ? r->body : std::string("no answer");
  });
  ASSERT_EQ(waiting.get_future().wait_for(5s), std::future_status::ready);
  for (int i = 0; i < 3; ++i) {
    auto r = client(pki.ca.cert_pem)->Get("/other");
    ASSERT_TRUE(r) << i;
    EXPECT_EQ(r->body, "/other");
  }
  release.set_value();
  ASSERT_EQ(blocked.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(blocked.get(), "/waits");
}

// A plain TCP client on one connection (the metrics and health endpoints' clients: Prometheus, kubelet).
class RawTcp {
 public:
  explicit RawTcp(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval tv{5, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ok_ = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~RawTcp() { close(fd_); }
  bool ok() const { return ok_; }
  bool send(const std::string& s) {
    return ::send(fd_, s.data(), s.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(s.size());
  }
  // The head of the next response, and `body_bytes` bytes after it; nullopt on EOF or a 5 s timeout.
  std::optional<std::pair<std::string, std::string>> read(std::size_t body_bytes) {
    while (true) {
      auto end = buf_.find("\r\n\r\n");
      if (end != std::string::npos && buf_.size() >= end + 4 + body_bytes) {
        std::pair<std::string, std::string> r{buf_.substr(0, end), buf_.substr(end + 4, body_bytes)};
        buf_.erase(0, end + 4 + body_bytes);
        return r;
      }
      char tmp[4096];
      ssize_t n = recv(fd_, tmp, sizeof tmp, 0);
      if (n <= 0) return std::nullopt;
      buf_.append(tmp, static_cast<std::size_t>(n));
    }
  }
  // True when the server ended the connection (rather than a 5 s timeout with it open).
  bool sees_end() {
    char c;
    ssize_t n = recv(fd_, &c, 1, 0);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
  }
  const std::string& unread() const { return buf_; }

 private:
  int fd_ = -1;
  bool ok_ = false;
  std::string buf_;
};

struct PlainServing : ::testing::Test {
  std::unique_ptr<TlsServer> server;
  void start(TlsServerOptions options, RequestHandler handler = echo) {
    server = std::make_unique<TlsServer>(std::move(options), std::move(handler));
    auto bound = server->bind("127.0.0.1", 0);
    ASSERT_TRUE(bound.has_value()) << bound.error().str();
    ASSERT_GT(server->port(), 0);
    server->start();
  }
  void TearDown() override {
    if (server) server->stop(2000ms);
  }
};

// Plain HTTP (the metrics and health endpoints): the same requests and answers as over TLS.
TEST_F(PlainServing, AnswersRequestsOnAKeptAliveConnection) {
  start({});
  httplib::Client c("127.0.0.1", server->port());
  c.set_keep_alive(true);
  c.set_read_timeout(5, 0);
  for (int i = 0; i < 3; ++i) {
    auto r = c.Post("/p" + std::to_string(i), "body" + std::to_string(i), "text/plain");
    ASSERT_TRUE(r) << i;
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, "POST /p" + std::to_string(i) + " body" + std::to_string(i));
    EXPECT_EQ(r->get_header_value("Content-Type"), "text/plain");
  }
  auto thrown = c.Get("/throw");
  ASSERT_TRUE(thrown);
  EXPECT_EQ(thrown->status, 500);
}

// Pipelined requests in one write are answered in order; HEAD gets GET's headers without the body; the
// last request the keep-alive limit allows is answered `Connection: close` and the connection ends.
TEST_F(PlainServing, PipeliningHeadAndTheKeepAliveLimit) {
  TlsServerOptions o;
  o.max_requests_per_connection = 3;
  start(o);
  RawTcp c(server->port());
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(c.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\nHEAD /b HTTP/1.1\r\nHost: x\r\n\r\n"));
  auto a = c.read(7);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->first,
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 7\r\nConnection: keep-alive");
  EXPECT_EQ(a->second, "GET /a ");
  auto b = c.read(0);
  ASSERT_TRUE(b);
  EXPECT_NE(b->first.find("Content-Length: 8"), std::string::npos) << b->first;  // "HEAD /b "
  ASSERT_TRUE(c.send("GET /c HTTP/1.1\r\nHost: x\r\n\r\n"));
  auto last = c.read(7);
  ASSERT_TRUE(last);
  EXPECT_EQ(last->second, "GET /c ");  // so nothing of the HEAD answer's body came before it
  EXPECT_NE(last->first.find("Connection: close"), std::string::npos) << last->first;
  EXPECT_TRUE(c.sees_end());
  EXPECT_EQ(c.unread(), "");
}

TEST_F(PlainServing, IdleConnectionsAreClosedAfterTheTimeoutAndBadRequestsAnswered400) {
  TlsServerOptions o;
  o.idle_timeout_seconds = 1;
  start(o);
  RawTcp idle(server->port());
  ASSERT_TRUE(idle.send("GET /x HTTP/1.1\r\nHost: x\r\n\r\n"));
  ASSERT_TRUE(idle.read(7));
  EXPECT_TRUE(idle.sees_end());  // within the 5 s receive timeout
  RawTcp bad(server->port());
  ASSERT_TRUE(bad.send("HELLO\r\n\r\n"));
  auto r = bad.read(22);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->first.substr(0, 15), "HTTP/1.1 400 Ba");
  EXPECT_EQ(r->second, "malformed request line");
  EXPECT_TRUE(bad.sees_end());
}

TEST_F(PlainServing, ABusyPortIsABindError) {
  start({});
  TlsServer second(TlsServerOptions{}, echo);
  EXPECT_FALSE(second.bind("127.0.0.1", server->port()));
}

// Without a serving thread's hook (any other thread), a BlockingScope does nothing.
TEST(BlockingScope, DoesNothingWithoutAHookAndCountsNestedScopesOnce) {
  { const common::BlockingScope nothing; }
  struct Count : common::BlockingHook {
    int begins = 0, ends = 0;
    void begin() override { ++begins; }
    void end() override { ++ends; }
  } count;
  common::set_thread_blocking_hook(&count);
  {
    const common::BlockingScope outer;
    const common::BlockingScope inner;
    EXPECT_EQ(count.begins, 1);
  }
  EXPECT_EQ(count.ends, 1);
  common::set_thread_blocking_hook(nullptr);
}

}  // namespace
}  // namespace kubex::net
