// The Kubernetes client and kept-alive connections that the server closed (issue 12, item 1): the engine
// must not lose a request because an idle connection in its pool was closed by the API server, at the
// client's default settings. The peer here is a minimal HTTP/1.1 server on loopback whose keep-alive
// behaviour each test sets, over TLS like every API server; the client is exactly what `kubex engine` runs.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "common/x509.h"
#include "kube/client/client.h"

namespace kubex::kube {
namespace {

using namespace std::chrono_literals;

// How the test server treats a kept-alive connection after its first answer.
enum class Peer {
  kClosesIdle,            // closes a connection that stays idle for 300 ms (a keep-alive timeout), with a
                          // TLS close_notify first (as cpp-httplib servers such as kubex-sim's do)
  kDropsIdle,             // the same without close_notify (the socket is just closed)
  kClosesOnNextRequest,   // closes a connection when its second request arrives, unanswered (the same
                          // timeout firing just as the request arrives)
};

class KeepAliveServer {
 public:
  explicit KeepAliveServer(Peer peer) : peer_(peer) {
    auto ca = common::generate_ca("test-ca", 1);
    EXPECT_TRUE(ca.has_value());
    ca_pem_ = ca->cert_pem;
    common::CertSpec spec;
    spec.common_name = "127.0.0.1";
    spec.ip_addresses = {"127.0.0.1"};
    spec.server_auth = true;
    auto serving = common::issue_certificate(*ca, spec);
    EXPECT_TRUE(serving.has_value());
    ctx_ = SSL_CTX_new(TLS_server_method());
    EXPECT_TRUE(common::configure_server_ctx(ctx_, *serving).has_value());
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd_, 16);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    accept_thread_ = std::thread([this] { accept_loop(); });
  }
  ~KeepAliveServer() {
    stop_ = true;
    accept_thread_.join();
    for (auto& t : conn_threads_) t.join();
    ::close(fd_);
    SSL_CTX_free(ctx_);
  }
  const std::string& ca_pem() const { return ca_pem_; }
  int port() const { return port_; }
  int connections() const { return connections_; }
  int answered() const { return answered_; }

 private:
  void accept_loop() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) continue;
      ++connections_;
      conn_threads_.emplace_back([this, c] { serve(c); });
    }
  }

  // One request: headers up to the blank line, then Content-Length bytes. False when the peer is gone.
  static bool read_request(SSL* ssl, int c, std::string& buf) {
    char tmp[4096];
    for (;;) {
      auto end = buf.find("\r\n\r\n");
      if (end != std::string::npos) {
        std::size_t body = 0;
        auto cl = buf.find("Content-Length: ");
        if (cl != std::string::npos && cl < end) body = std::stoul(buf.substr(cl + 16));
        if (buf.size() >= end + 4 + body) {
          buf.erase(0, end + 4 + body);
          return true;
        }
      }
      pollfd p{c, POLLIN, 0};
      if (SSL_pending(ssl) == 0 && ::poll(&p, 1, 5000) <= 0) return false;
      int n = SSL_read(ssl, tmp, sizeof tmp);
      if (n <= 0) return false;
      buf.append(tmp, static_cast<std::size_t>(n));
    }
  }

  void serve(int c) {
    SSL* ssl = SSL_new(ctx_);
    SSL_set_fd(ssl, c);
    std::string buf;
    bool graceful = peer_ != Peer::kDropsIdle;
    if (SSL_accept(ssl) == 1) {
      for (int served = 0; !stop_; ++served) {
        if (served > 0 && peer_ != Peer::kClosesOnNextRequest) {
          pollfd p{c, POLLIN, 0};
          if (SSL_pending(ssl) == 0 && ::poll(&p, 1, 300) == 0) break;  // idle for 300 ms: close
        }
        if (!read_request(ssl, c, buf)) break;
        if (served > 0 && peer_ == Peer::kClosesOnNextRequest) break;
        std::string body = R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default"}})";
        std::string res =
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: keep-alive\r\nContent-Length: " +
            std::to_string(body.size()) + "\r\n\r\n" + body;
        if (SSL_write(ssl, res.data(), static_cast<int>(res.size())) != static_cast<int>(res.size())) break;
        ++answered_;
      }
      if (graceful) SSL_shutdown(ssl);
    }
    SSL_free(ssl);
    ::close(c);
  }

  Peer peer_;
  SSL_CTX* ctx_ = nullptr;
  std::string ca_pem_;
  int fd_ = -1, port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0}, answered_{0};
  std::thread accept_thread_;
  std::vector<std::thread> conn_threads_;
};

std::shared_ptr<Client> client_for(const KeepAliveServer& s, std::vector<std::string>* codes) {
  ConnectionConfig cfg;
  cfg.server = "https://127.0.0.1:" + std::to_string(s.port());
  cfg.ca_pem = s.ca_pem();
  auto c = Client::create(cfg);  // default ClientOptions: what the engine runs
  EXPECT_TRUE(c.has_value());
  auto mu = std::make_shared<std::mutex>();
  (*c)->set_observer([codes, mu](const std::string& method, const std::string& code) {
    std::lock_guard lk(*mu);
    codes->push_back(method + " " + code);
  });
  return *c;
}

const nlohmann::json kConfigMap = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "a"}}}};

// A create (POST, not idempotent) after an idle gap longer than the server's keep-alive timeout: the
// client sees that the server closed the pooled connection and opens a new one instead of writing the
// request into the closed one. Before the fix the POST failed with a transport error ("Write").
class ClientReuseAfterIdle : public ::testing::TestWithParam<Peer> {};

TEST_P(ClientReuseAfterIdle, RequestAfterServerClosedIdleConnectionSucceeds) {
  KeepAliveServer server(GetParam());
  std::vector<std::string> codes;
  auto client = client_for(server, &codes);
  ASSERT_TRUE(client->get("/api/v1/namespaces/default/configmaps/a").has_value());
  std::this_thread::sleep_for(600ms);  // the idle gap: the server closes the connection after 300 ms
  auto created = client->create("/api/v1/namespaces/default/configmaps", kConfigMap);
  ASSERT_TRUE(created.has_value()) << created.error().str();
  EXPECT_EQ(server.connections(), 2);
  EXPECT_EQ(codes, (std::vector<std::string>{"GET 200", "POST 200"}));  // no failed request was seen
}

INSTANTIATE_TEST_SUITE_P(Peers, ClientReuseAfterIdle, ::testing::Values(Peer::kClosesIdle, Peer::kDropsIdle));

// The server closes the connection just as the next request arrives. A PUT (idempotent) is sent again on a
// new connection, once, and the caller never sees the failure; before the fix it failed with "Read".
TEST(ClientReuse, IdempotentRequestIsResentOnAFreshConnection) {
  KeepAliveServer server(Peer::kClosesOnNextRequest);
  std::vector<std::string> codes;
  auto client = client_for(server, &codes);
  ASSERT_TRUE(client->get("/api/v1/namespaces/default/configmaps/a").has_value());
  auto updated = client->update("/api/v1/namespaces/default/configmaps/a", kConfigMap);
  ASSERT_TRUE(updated.has_value()) << updated.error().str();
  EXPECT_EQ(server.connections(), 2);
  EXPECT_EQ(server.answered(), 2);
  EXPECT_EQ(codes, (std::vector<std::string>{"GET 200", "PUT 200"}));
}

// A POST that was completely written may have been acted on: it is not sent twice, and the caller gets a
// clear transport error (RFC 9110 §9.2.2; Go's Transport does the same).
TEST(ClientReuse, WrittenPostIsNotResent) {
  KeepAliveServer server(Peer::kClosesOnNextRequest);
  std::vector<std::string> codes;
  auto client = client_for(server, &codes);
  ASSERT_TRUE(client->get("/api/v1/namespaces/default/configmaps/a").has_value());
  auto created = client->create("/api/v1/namespaces/default/configmaps", kConfigMap);
  ASSERT_FALSE(created.has_value());
  EXPECT_TRUE(created.error().transport());
  EXPECT_NE(created.error().message.find("POST https://127.0.0.1:"), std::string::npos) << created.error().message;
  EXPECT_EQ(server.answered(), 1);
}

}  // namespace
}  // namespace kubex::kube
