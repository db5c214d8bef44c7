// Certificates for kubex-sim (CA, serving and client certificates) and the engine's --self-signed-webhook
// (ENG-3).
#include "common/x509.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <thread>

#include "common/file_io.h"

namespace kubex::common {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

TimePoint now() {
  return std::chrono::system_clock::now();
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// One CA and its certificates are shared by the tests: key generation is cheap, but not free.
struct Pki {
  PemPair ca;
  PemPair server;
  PemPair admin;  // client certificate: CN kubernetes-admin, O system:masters
  PemPair other_ca;
  PemPair other_admin;  // same subject, issued by other_ca
};

const Pki& pki() {
  static const Pki p = [] {
    Pki p;
    auto ca = generate_ca("kubex-sim-ca", 365);
    EXPECT_TRUE(ca) << ca.error().str();
    p.ca = *ca;
    CertSpec server{.common_name = "kubex-sim",
                    .dns_names = {"localhost"},
                    .ip_addresses = {"127.0.0.1", "::1"},
                    .server_auth = true};
    auto s = issue_certificate(p.ca, server);
    EXPECT_TRUE(s) << s.error().str();
    p.server = *s;
    CertSpec admin{
        .common_name = "kubernetes-admin", .organizations = {"system:masters"}, .client_auth = true};
    auto a = issue_certificate(p.ca, admin);
    EXPECT_TRUE(a) << a.error().str();
    p.admin = *a;
    auto other = generate_ca("other-ca", 365);
    EXPECT_TRUE(other) << other.error().str();
    p.other_ca = *other;
    auto oa = issue_certificate(p.other_ca, admin);
    EXPECT_TRUE(oa) << oa.error().str();
    p.other_admin = *oa;
    return p;
  }();
  return p;
}

TEST(X509, CaIsSelfSignedCaWithP256Pkcs8Key) {
  const auto& ca = pki().ca;
  EXPECT_TRUE(ca.cert_pem.starts_with("-----BEGIN CERTIFICATE-----\n")) << ca.cert_pem;
  EXPECT_TRUE(ca.key_pem.starts_with("-----BEGIN PRIVATE KEY-----\n")) << ca.key_pem;
  auto info = inspect_certificate(ca.cert_pem);
  ASSERT_TRUE(info) << info.error().str();
  EXPECT_EQ(info->common_name, "kubex-sim-ca");
  EXPECT_TRUE(info->is_ca);
  EXPECT_LE(info->not_before, now());
  EXPECT_GT(info->not_after, now() + std::chrono::days(364));
  EXPECT_LT(info->not_after, now() + std::chrono::days(366));
  // Self-signed: verifies against itself.
  EXPECT_TRUE(verify_certificate(ca.cert_pem, ca.cert_pem, now()));

  auto key = load_private_key(ca.key_pem);
  ASSERT_TRUE(key) << key.error().str();
  EXPECT_EQ(EVP_PKEY_get_base_id(key->get()), EVP_PKEY_EC);
  EXPECT_EQ(EVP_PKEY_get_bits(key->get()), 256);
  char group[64] = {};
  ASSERT_EQ(EVP_PKEY_get_group_name(key->get(), group, sizeof group, nullptr), 1);
  EXPECT_STREQ(group, "prime256v1");
}

TEST(X509, ServerCertificateVerifiesAgainstItsCa) {
  auto r = verify_certificate(pki().server.cert_pem, pki().ca.cert_pem, now());
  EXPECT_TRUE(r) << r.error().str();
  EXPECT_TRUE(verify_certificate(pki().admin.cert_pem, pki().ca.cert_pem, now()));
}

TEST(X509, CertificateFromAnotherCaFailsVerification) {
  auto r = verify_certificate(pki().other_admin.cert_pem, pki().ca.cert_pem, now());
  ASSERT_FALSE(r);
  EXPECT_TRUE(contains(r.error().message, "unable to get local issuer certificate")) << r.error().str();
  EXPECT_TRUE(contains(r.error().message, "CN=kubernetes-admin")) << r.error().str();
  EXPECT_FALSE(verify_certificate(pki().server.cert_pem, pki().other_ca.cert_pem, now()));
  // A CA is not trusted by another CA's bundle either.
  EXPECT_FALSE(verify_certificate(pki().ca.cert_pem, pki().other_ca.cert_pem, now()));
}

TEST(X509, BundleWithSeveralCasTrustsEach) {
  std::string bundle = pki().other_ca.cert_pem + "\n" + pki().ca.cert_pem;
  EXPECT_TRUE(verify_certificate(pki().server.cert_pem, bundle, now()));
  EXPECT_TRUE(verify_certificate(pki().other_admin.cert_pem, bundle, now()));
}

TEST(X509, ExpiredAndNotYetValidCertificatesFail) {
  CertSpec spec{.common_name = "old",
                .not_before = now() - std::chrono::days(30),
                .not_after = now() - 24h,
                .client_auth = true};
  auto old = issue_certificate(pki().ca, spec);
  ASSERT_TRUE(old) << old.error().str();
  auto r = verify_certificate(old->cert_pem, pki().ca.cert_pem, now());
  ASSERT_FALSE(r);
  EXPECT_TRUE(contains(r.error().message, "certificate has expired")) << r.error().str();
  // `now` is honoured: a certificate valid for another hour verifies now and is expired in two hours.
  CertSpec short_lived{.common_name = "short", .not_after = now() + 1h, .client_auth = true};
  auto fresh = issue_certificate(pki().ca, short_lived);
  ASSERT_TRUE(fresh) << fresh.error().str();
  EXPECT_TRUE(verify_certificate(fresh->cert_pem, pki().ca.cert_pem, now()));
  auto later = verify_certificate(fresh->cert_pem, pki().ca.cert_pem, now() + 2h);
  ASSERT_FALSE(later);
  EXPECT_TRUE(contains(later.error().message, "certificate has expired (depth 0, CN=short)"))
      << later.error().str();

  auto future = verify_certificate(pki().server.cert_pem, pki().ca.cert_pem, now() + std::chrono::days(400));
  ASSERT_FALSE(future);
  EXPECT_TRUE(contains(future.error().message, "has expired")) << future.error().str();
  auto past = verify_certificate(pki().server.cert_pem, pki().ca.cert_pem, now() - 1h);
  ASSERT_FALSE(past);
  EXPECT_TRUE(contains(past.error().message, "not yet valid")) << past.error().str();
}

TEST(X509, InspectReturnsSubjectSansAndUsages) {
  auto server = inspect_certificate(pki().server.cert_pem);
  ASSERT_TRUE(server) << server.error().str();
  EXPECT_EQ(server->common_name, "kubex-sim");
  EXPECT_TRUE(server->organizations.empty());
  EXPECT_EQ(server->dns_names, std::vector<std::string>{"localhost"});
  EXPECT_EQ(server->ip_addresses, (std::vector<std::string>{"127.0.0.1", "::1"}));
  EXPECT_FALSE(server->is_ca);
  EXPECT_TRUE(server->server_auth);
  EXPECT_FALSE(server->client_auth);

  auto admin = inspect_certificate(pki().admin.cert_pem);
  ASSERT_TRUE(admin) << admin.error().str();
  EXPECT_EQ(admin->common_name, "kubernetes-admin");
  EXPECT_EQ(admin->organizations, std::vector<std::string>{"system:masters"});
  EXPECT_TRUE(admin->dns_names.empty());
  EXPECT_TRUE(admin->ip_addresses.empty());
  EXPECT_FALSE(admin->server_auth);
  EXPECT_TRUE(admin->client_auth);

  CertSpec spec{.common_name = "jane",
                .organizations = {"dev", "system:authenticated"},
                .dns_names = {"kubex-webhook.kubex.svc", "*.example.com"},
                .valid_days = 10,
                .server_auth = true,
                .client_auth = true};
  auto both = issue_certificate(pki().ca, spec);
  ASSERT_TRUE(both) << both.error().str();
  auto info = inspect_certificate(both->cert_pem);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->organizations, (std::vector<std::string>{"dev", "system:authenticated"}));
  EXPECT_EQ(info->dns_names, (std::vector<std::string>{"kubex-webhook.kubex.svc", "*.example.com"}));
  EXPECT_TRUE(info->server_auth && info->client_auth);
  EXPECT_GT(info->not_after, now() + std::chrono::days(9));
  EXPECT_LT(info->not_after, now() + std::chrono::days(11));
}

TEST(X509, SerialsAreRandomAndPositive) {
  auto a = inspect_certificate(pki().server.cert_pem);
  auto b = inspect_certificate(pki().admin.cert_pem);
  ASSERT_TRUE(a && b);
  EXPECT_NE(a->serial_hex, b->serial_hex);
  EXPECT_GE(a->serial_hex.size(), 28u);  // ~128 random bits
  EXPECT_LE(a->serial_hex.size(), 32u);
  EXPECT_EQ(a->serial_hex.find('-'), std::string::npos);
}

TEST(X509, BadInputsAreErrorsWithOpensslDetail) {
  auto garbage = load_certificate("not a certificate");
  ASSERT_FALSE(garbage);
  EXPECT_EQ(garbage.error().message, "no PEM certificate found");
  auto truncated = load_certificate(pki().ca.cert_pem.substr(0, 200));
  ASSERT_FALSE(truncated);
  EXPECT_TRUE(contains(truncated.error().message, "error:"))
      << truncated.error().str();  // ERR_error_string text
  EXPECT_FALSE(inspect_certificate(""));
  EXPECT_FALSE(make_store(""));
  EXPECT_FALSE(load_private_key(pki().ca.cert_pem));
  auto bad_key = load_private_key("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n");
  ASSERT_FALSE(bad_key);
  EXPECT_TRUE(contains(bad_key.error().message, "error:")) << bad_key.error().str();
  EXPECT_FALSE(verify_certificate("x", pki().ca.cert_pem, now()));
  EXPECT_FALSE(verify_certificate(pki().server.cert_pem, "x", now()));

  CertSpec ok{.common_name = "x"};
  // A leaf is not a CA; a key must match its certificate.
  auto not_ca = issue_certificate(pki().server, ok);
  ASSERT_FALSE(not_ca);
  EXPECT_TRUE(contains(not_ca.error().message, "is not a CA")) << not_ca.error().str();
  auto mismatch = issue_certificate(PemPair{pki().ca.cert_pem, pki().other_ca.key_pem}, ok);
  ASSERT_FALSE(mismatch);
  EXPECT_TRUE(contains(mismatch.error().message, "does not match")) << mismatch.error().str();

  EXPECT_FALSE(issue_certificate(pki().ca, CertSpec{.common_name = ""}));
  EXPECT_FALSE(issue_certificate(pki().ca, CertSpec{.common_name = "x", .ip_addresses = {"127.0.0.256"}}));
  EXPECT_FALSE(issue_certificate(pki().ca, CertSpec{.common_name = "x", .ip_addresses = {"localhost"}}));
  EXPECT_FALSE(issue_certificate(pki().ca, CertSpec{.common_name = "x", .dns_names = {"a b"}}));
  EXPECT_FALSE(issue_certificate(pki().ca, CertSpec{.common_name = "x", .dns_names = {""}}));
  EXPECT_FALSE(issue_certificate(pki().ca, CertSpec{.common_name = "x", .valid_days = 0}));
  TimePoint t = now();
  EXPECT_FALSE(issue_certificate(pki().ca, CertSpec{.common_name = "x", .not_before = t, .not_after = t}));
  EXPECT_FALSE(
      issue_certificate(pki().ca, CertSpec{.common_name = "x", .not_before = t, .not_after = t - 1h}));
  EXPECT_FALSE(generate_ca("ca", 0));
  EXPECT_FALSE(generate_ca("", 1));
  // Failures leave this thread's OpenSSL error queue empty.
  EXPECT_EQ(ERR_peek_error(), 0u);
}

TEST(X509, EncryptedKeyIsAnErrorNotAPrompt) {
  auto key = load_private_key(pki().ca.key_pem);
  ASSERT_TRUE(key);
  BIO* bio = BIO_new(BIO_s_mem());
  ASSERT_EQ(PEM_write_bio_PKCS8PrivateKey(bio, key->get(), EVP_aes_256_cbc(), "secret", 6, nullptr, nullptr),
            1);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<std::size_t>(n));
  BIO_free(bio);
  ASSERT_TRUE(contains(pem, "ENCRYPTED PRIVATE KEY"));
  auto r = load_private_key(pem);
  ASSERT_FALSE(r);
  EXPECT_TRUE(contains(r.error().message, "invalid PEM private key")) << r.error().str();
}

// Runs a command, returns its combined output and exit status.
std::pair<std::string, int> run(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return {"popen failed", -1};
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int status = ::pclose(p);
  return {out, status};
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "kubex-x509-XXXXXX").string();
    if (::mkdtemp(tmpl.data())) path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  bool ok() const { return !path_.empty(); }

 private:
  fs::path path_;
};

TEST(X509, OpensslCliAgrees) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  ASSERT_TRUE(write_file_atomic(dir.file("ca.crt"), pki().ca.cert_pem, 0644));
  ASSERT_TRUE(write_file_atomic(dir.file("tls.crt"), pki().server.cert_pem, 0644));
  ASSERT_TRUE(write_file_atomic(dir.file("tls.key"), pki().server.key_pem, 0600));
  ASSERT_TRUE(write_file_atomic(dir.file("admin.crt"), pki().admin.cert_pem, 0644));

  auto [text, status] = run("openssl x509 -noout -text -in " + dir.file("tls.crt"));
  ASSERT_EQ(status, 0) << text;
  EXPECT_TRUE(contains(text, "DNS:localhost")) << text;
  EXPECT_TRUE(contains(text, "IP Address:127.0.0.1")) << text;
  EXPECT_TRUE(contains(text, "IP Address:0:0:0:0:0:0:0:1")) << text;
  EXPECT_TRUE(contains(text, "X509v3 Key Usage: critical")) << text;
  EXPECT_TRUE(contains(text, "Digital Signature")) << text;
  EXPECT_TRUE(contains(text, "TLS Web Server Authentication")) << text;
  EXPECT_FALSE(contains(text, "TLS Web Client Authentication")) << text;
  EXPECT_TRUE(contains(text, "CA:FALSE")) << text;
  EXPECT_TRUE(contains(text, "NIST CURVE: P-256")) << text;
  EXPECT_TRUE(contains(text, "ecdsa-with-SHA256")) << text;
  EXPECT_TRUE(contains(text, "Subject: CN = kubex-sim")) << text;
  EXPECT_TRUE(contains(text, "Issuer: CN = kubex-sim-ca")) << text;
  EXPECT_TRUE(contains(text, "X509v3 Authority Key Identifier")) << text;

  auto [ca_text, ca_status] = run("openssl x509 -noout -text -in " + dir.file("ca.crt"));
  ASSERT_EQ(ca_status, 0) << ca_text;
  EXPECT_TRUE(contains(ca_text, "CA:TRUE")) << ca_text;
  EXPECT_TRUE(contains(ca_text, "Certificate Sign")) << ca_text;

  auto [admin_text, admin_status] =
      run("openssl x509 -noout -subject -ext extendedKeyUsage -in " + dir.file("admin.crt"));
  ASSERT_EQ(admin_status, 0) << admin_text;
  EXPECT_TRUE(contains(admin_text, "subject=O = system:masters, CN = kubernetes-admin")) << admin_text;
  EXPECT_TRUE(contains(admin_text, "TLS Web Client Authentication")) << admin_text;

  auto [verify, verify_status] = run("openssl verify -CAfile " + dir.file("ca.crt") + " " +
                                     dir.file("tls.crt") + " " + dir.file("admin.crt"));
  EXPECT_EQ(verify_status, 0) << verify;
  EXPECT_TRUE(contains(verify, dir.file("tls.crt") + ": OK")) << verify;

  // The key is an unencrypted PKCS#8 P-256 key that matches the certificate.
  auto [key_text, key_status] = run("openssl pkey -noout -text -in " + dir.file("tls.key"));
  ASSERT_EQ(key_status, 0) << key_text;
  EXPECT_TRUE(contains(key_text, "NIST CURVE: P-256")) << key_text;
  auto [pub1, s1] = run("openssl pkey -pubout -in " + dir.file("tls.key"));
  auto [pub2, s2] = run("openssl x509 -noout -pubkey -in " + dir.file("tls.crt"));
  EXPECT_EQ(s1, 0);
  EXPECT_EQ(pub1, pub2);
}

// --- TLS handshakes through cpp-httplib --------------------------------------------------------------

// An HTTPS server on 127.0.0.1 whose /whoami answers with the verified client certificate's subject.
class WhoamiServer {
 public:
  WhoamiServer(const PemPair& serving, const std::string& client_ca,
               ClientCertMode mode = ClientCertMode::kRequest)
      : server_([&](SSL_CTX& ctx) {
          auto r = configure_server_ctx(&ctx, serving, client_ca, mode);
          if (!r) setup_error_ = r.error().str();
          return r.has_value();
        }) {
    if (!server_.is_valid()) return;
    server_.Get("/whoami", [this](const httplib::Request& req, httplib::Response& res) {
      ++handled_;
      auto peer = verified_peer_certificate(req.ssl);
      std::string body = "none";
      if (peer) {
        body = "CN=" + peer->common_name;
        for (const auto& o : peer->organizations) body += ";O=" + o;
      }
      res.set_content(body, "text/plain");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    if (port_ <= 0) return;
    thread_ = std::thread([this] {
      server_.listen_after_bind();
      std::lock_guard lk(mu_);
      stopped_ = true;
      cv_.notify_all();
    });
    auto deadline = std::chrono::steady_clock::now() + 60s;  // bounds a hang only
    while (!server_.is_running() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  }

  ~WhoamiServer() {
    if (!thread_.joinable()) return;
    // stop() is a no-op until the accept loop runs; repeat it until listen_after_bind returns.
    std::unique_lock lk(mu_);
    auto deadline = std::chrono::steady_clock::now() + 60s;  // bounds a hang only
    while (!stopped_ && std::chrono::steady_clock::now() < deadline) {
      server_.stop();
      cv_.wait_for(lk, 10ms);
    }
    lk.unlock();
    if (stopped_) {
      thread_.join();
    } else {
      ADD_FAILURE() << "server did not stop";
      thread_.detach();
    }
  }

  bool running() const { return port_ > 0 && server_.is_running(); }
  int port() const { return port_; }
  int handled() const { return handled_; }
  const std::string& setup_error() const { return setup_error_; }

 private:
  std::string setup_error_;
  httplib::SSLServer server_;
  int port_ = -1;
  std::atomic<int> handled_{0};
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopped_ = false;
};

struct Response {
  bool ok = false;
  std::string body;
  std::string error;
  long verify_result = 0;
};

// GET /whoami, trusting `ca_pem` for the server and presenting `client` if given.
Response whoami(int port, const std::string& ca_pem, const PemPair* client) {
  Response out;
  X509Ptr cert;
  EvpKeyPtr key;
  if (client) {
    auto c = load_certificate(client->cert_pem);
    auto k = load_private_key(client->key_pem);
    if (!c || !k) {
      out.error = "cannot load client certificate";
      return out;
    }
    cert = std::move(*c);
    key = std::move(*k);
  }
  auto cli = client ? std::make_unique<httplib::SSLClient>("127.0.0.1", port, cert.get(), key.get())
                    : std::make_unique<httplib::SSLClient>("127.0.0.1", port);
  auto store = make_store(ca_pem);
  if (!store) {
    out.error = store.error().str();
    return out;
  }
  cli->set_ca_cert_store(store->release());  // httplib takes ownership
  cli->enable_server_certificate_verification(true);
  cli->set_connection_timeout(5s);
  cli->set_read_timeout(5s);
  cli->set_write_timeout(5s);
  auto res = cli->Get("/whoami");
  out.verify_result = cli->get_openssl_verify_result();
  if (!res) {
    out.error = httplib::to_string(res.error());
    return out;
  }
  out.ok = res->status == 200;
  out.body = res->body;
  return out;
}

TEST(X509Tls, ClientCertificateIsVerifiedAndItsSubjectVisible) {
  WhoamiServer server(pki().server, pki().ca.cert_pem);
  ASSERT_TRUE(server.running()) << server.setup_error();
  auto r = whoami(server.port(), pki().ca.cert_pem, &pki().admin);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.body, "CN=kubernetes-admin;O=system:masters");
}

TEST(X509Tls, NoClientCertificateStillConnects) {
  WhoamiServer server(pki().server, pki().ca.cert_pem);
  ASSERT_TRUE(server.running()) << server.setup_error();
  auto r = whoami(server.port(), pki().ca.cert_pem, nullptr);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.body, "none");
}

TEST(X509Tls, ClientCertificateFromAnotherCaFailsTheHandshake) {
  WhoamiServer server(pki().server, pki().ca.cert_pem);
  ASSERT_TRUE(server.running()) << server.setup_error();
  auto r = whoami(server.port(), pki().ca.cert_pem, &pki().other_admin);
  EXPECT_FALSE(r.ok) << r.body;
  EXPECT_FALSE(r.error.empty());  // no HTTP response at all: the connection was refused in the handshake
  EXPECT_EQ(server.handled(), 0);
  // The server keeps serving good clients.
  auto good = whoami(server.port(), pki().ca.cert_pem, &pki().admin);
  ASSERT_TRUE(good.ok) << good.error;
  EXPECT_EQ(server.handled(), 1);
}

TEST(X509Tls, RequireModeRejectsClientsWithoutCertificate) {
  WhoamiServer server(pki().server, pki().ca.cert_pem, ClientCertMode::kRequire);
  ASSERT_TRUE(server.running()) << server.setup_error();
  EXPECT_FALSE(whoami(server.port(), pki().ca.cert_pem, nullptr).ok);
  auto r = whoami(server.port(), pki().ca.cert_pem, &pki().admin);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.body, "CN=kubernetes-admin;O=system:masters");
}

// ENG-3: a webhook server with an in-memory self-signed CA; the API server side trusts only the caBundle.
TEST(X509Tls, ClientVerifiesServerAgainstCaBundle) {
  WhoamiServer server(pki().server, "");
  ASSERT_TRUE(server.running()) << server.setup_error();
  auto good = whoami(server.port(), pki().ca.cert_pem, nullptr);
  ASSERT_TRUE(good.ok) << good.error;
  EXPECT_EQ(good.body, "none");
  // Without a client CA no certificate is requested, so a presented one is not seen.
  auto unseen = whoami(server.port(), pki().ca.cert_pem, &pki().admin);
  ASSERT_TRUE(unseen.ok) << unseen.error;
  EXPECT_EQ(unseen.body, "none");

  auto wrong = whoami(server.port(), pki().other_ca.cert_pem, nullptr);
  EXPECT_FALSE(wrong.ok);
  EXPECT_NE(wrong.verify_result, X509_V_OK);
  EXPECT_EQ(server.handled(), 2);
}

TEST(X509Tls, ConfigureServerCtxRejectsBadInput) {
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_server_method()), SSL_CTX_free);
  ASSERT_TRUE(ctx);
  EXPECT_FALSE(configure_server_ctx(ctx.get(), PemPair{pki().server.cert_pem, pki().admin.key_pem}));
  EXPECT_FALSE(configure_server_ctx(ctx.get(), pki().server, "garbage"));
  EXPECT_FALSE(configure_server_ctx(ctx.get(), pki().server, "", ClientCertMode::kRequire));
  EXPECT_FALSE(configure_server_ctx(nullptr, pki().server));
  EXPECT_TRUE(configure_server_ctx(ctx.get(), pki().server, pki().ca.cert_pem + pki().other_ca.cert_pem));
  EXPECT_EQ(sk_X509_NAME_num(SSL_CTX_get_client_CA_list(ctx.get())), 2);
  EXPECT_EQ(SSL_CTX_get_verify_mode(ctx.get()), SSL_VERIFY_PEER);
  EXPECT_EQ(verified_peer_certificate(nullptr), std::nullopt);
}

}  // namespace
}  // namespace kubex::common
