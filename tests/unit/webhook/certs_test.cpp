// Serving certificates (ENG-3): --cert-dir loading and hot reload (a rotated pair is served on the next
// handshake, a broken pair keeps the old one), and the --self-signed-webhook CA and serving certificate.
#include "webhook/certs.h"

#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/err.h>

#include <chrono>
#include <filesystem>

#include "common/clock.h"
#include "common/file_io.h"
#include "webhook/server.h"

namespace kubex::webhook {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           ("kubex-certs-" + std::to_string(::getpid()) + "-" +
            std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string str() const { return path.string(); }
};

common::PemPair ca() {
  static common::PemPair c = *common::generate_ca("test-ca", 2);
  return c;
}

common::PemPair leaf(const std::string& cn) {
  common::CertSpec s;
  s.common_name = cn;
  s.ip_addresses = {"127.0.0.1"};
  s.dns_names = {"localhost"};
  s.server_auth = true;
  s.valid_days = 2;
  auto r = common::issue_certificate(ca(), s);
  EXPECT_TRUE(r.has_value());
  return *r;
}

void write_pair(const TempDir& d, const common::PemPair& p) {
  ASSERT_TRUE(common::write_file_atomic(d.str() + "/tls.crt", p.cert_pem, 0644).has_value());
  ASSERT_TRUE(common::write_file_atomic(d.str() + "/tls.key", p.key_pem, 0600).has_value());
}

std::string serial_of(const common::PemPair& p) {
  return common::inspect_certificate(p.cert_pem)->serial_hex;
}

// The certificate a fresh TLS handshake with 127.0.0.1:port presents (CN).
std::string served_common_name(int port) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  BIO* bio = BIO_new_ssl_connect(ctx);
  std::string target = "127.0.0.1:" + std::to_string(port);
  BIO_set_conn_hostname(bio, target.c_str());
  std::string cn;
  if (BIO_do_connect(bio) == 1) {
    SSL* ssl = nullptr;
    BIO_get_ssl(bio, &ssl);
    X509* peer = ssl ? SSL_get1_peer_certificate(ssl) : nullptr;
    if (peer) {
      auto info = common::certificate_info(peer);
      if (info) cn = info->common_name;
      X509_free(peer);
    }
  }
  BIO_free_all(bio);
  SSL_CTX_free(ctx);
  ERR_clear_error();
  return cn;
}

TEST(CertDir, MissingOrBrokenDirIsAnError) {  // ENG-3: a bad cert dir is fatal
  auto r = ServingCertificate::from_dir("/nonexistent/kubex-cert-dir");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().str().find("--cert-dir /nonexistent/kubex-cert-dir"), std::string::npos);
  TempDir d;
  r = ServingCertificate::from_dir(d.str());
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().str().find("tls.crt"), std::string::npos) << r.error().str();
  auto a = leaf("a"), b = leaf("b");
  write_pair(d, {a.cert_pem, b.key_pem});
  r = ServingCertificate::from_dir(d.str());
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().str().find("does not match"), std::string::npos) << r.error().str();
  write_pair(d, {"garbage", a.key_pem});
  EXPECT_FALSE(ServingCertificate::from_dir(d.str()).has_value());
}

TEST(CertDir, ReloadsChangedFilesAndKeepsOldPairOnBrokenOnes) {  // ENG-3 reloaded on change
  TempDir d;
  auto a = leaf("pair-a"), b = leaf("pair-b");
  write_pair(d, a);
  auto cert = ServingCertificate::from_dir(d.str());
  ASSERT_TRUE(cert.has_value()) << cert.error().str();
  EXPECT_EQ((*cert)->current()->info.serial_hex, serial_of(a));
  EXPECT_FALSE((*cert)->reload_if_changed());
  write_pair(d, b);
  EXPECT_EQ((*cert)->current()->info.serial_hex, serial_of(b));
  // A broken pair (key of another certificate) keeps b.
  write_pair(d, {a.cert_pem, b.key_pem});
  EXPECT_FALSE((*cert)->reload_if_changed());
  EXPECT_EQ((*cert)->current()->info.serial_hex, serial_of(b));
  // Deleted files keep b too.
  fs::remove(d.path / "tls.key");
  EXPECT_EQ((*cert)->current()->info.serial_hex, serial_of(b));
  write_pair(d, a);
  EXPECT_EQ((*cert)->current()->info.serial_hex, serial_of(a));
}

TEST(CertDir, CaBundleFromCaCrt) {
  TempDir d;
  write_pair(d, leaf("x"));
  auto cert = ServingCertificate::from_dir(d.str());
  ASSERT_TRUE(cert.has_value());
  EXPECT_FALSE((*cert)->ca_bundle_pem().has_value());
  ASSERT_TRUE(common::write_file_atomic(d.str() + "/ca.crt", ca().cert_pem, 0644).has_value());
  EXPECT_EQ((*cert)->ca_bundle_pem(), ca().cert_pem);
}

// New TLS handshakes use the new pair without a restart.
TEST(CertDir, NextHandshakeServesRotatedCertificate) {
  TempDir d;
  write_pair(d, leaf("pair-a"));
  auto cert = ServingCertificate::from_dir(d.str());
  ASSERT_TRUE(cert.has_value());
  ServerOptions so;
  so.bind_address = "127.0.0.1:0";
  so.threads = 2;
  Server server(so, *cert);
  ASSERT_TRUE(server.start().has_value());
  EXPECT_EQ(served_common_name(server.port()), "pair-a");
  write_pair(d, leaf("pair-b"));
  EXPECT_EQ(served_common_name(server.port()), "pair-b");
  write_pair(d, {leaf("pair-c").cert_pem, leaf("pair-d").key_pem});  // broken
  EXPECT_EQ(served_common_name(server.port()), "pair-b");
  server.stop();
}

TEST(SelfSigned, CaAndServingCertificateWithServiceNames) {  // ENG-3 --self-signed-webhook
  SelfSignedOptions o;
  o.service = "kubex-automation-engine-webhook-service";
  o.ns = "kubex";
  o.extra_hosts = {"0.0.0.0", "127.0.0.2", "engine.local", "localhost"};
  auto s = generate_self_signed(o);
  ASSERT_TRUE(s.has_value()) << s.error().str();
  auto ca_info = common::inspect_certificate(s->ca.cert_pem);
  ASSERT_TRUE(ca_info.has_value());
  EXPECT_TRUE(ca_info->is_ca);
  auto info = common::inspect_certificate(s->serving.cert_pem);
  ASSERT_TRUE(info.has_value());
  EXPECT_FALSE(info->is_ca);
  EXPECT_TRUE(info->server_auth);
  EXPECT_EQ(info->dns_names,
            (std::vector<std::string>{"localhost", "kubex-automation-engine-webhook-service.kubex.svc",
                                      "kubex-automation-engine-webhook-service.kubex.svc.cluster.local",
                                      "engine.local"}));
  EXPECT_EQ(info->ip_addresses, (std::vector<std::string>{"127.0.0.1", "::1", "127.0.0.2"}));
  EXPECT_TRUE(
      common::verify_certificate(s->serving.cert_pem, s->ca.cert_pem, std::chrono::system_clock::now())
          .has_value());
  // A second generation is a different CA: the first CA does not verify it.
  auto other = generate_self_signed(o);
  ASSERT_TRUE(other.has_value());
  EXPECT_FALSE(
      common::verify_certificate(other->serving.cert_pem, s->ca.cert_pem, std::chrono::system_clock::now())
          .has_value());
  EXPECT_TRUE(ServingCertificate::from_pem(s->serving).has_value());
  EXPECT_FALSE(ServingCertificate::from_pem({s->serving.cert_pem, other->serving.key_pem}).has_value());
}

}  // namespace
}  // namespace kubex::webhook
