#include "webhook/certs.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <sys/stat.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/file_io.h"

namespace kubex::webhook {

using common::fail;
using common::Result;

namespace {

struct X509StackFree {
  void operator()(STACK_OF(X509) * s) const { sk_X509_free(s); }  // the certificates are not owned
};

bool is_ip(const std::string& host) {
  unsigned char buf[16];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

// PEM blocks of certificates in `pem`, in order.
std::vector<std::string> pem_certificates(const std::string& pem) {
  static const std::string kBegin = "-----BEGIN CERTIFICATE-----", kEnd = "-----END CERTIFICATE-----";
  std::vector<std::string> out;
  std::size_t pos = 0;
  while ((pos = pem.find(kBegin, pos)) != std::string::npos) {
    auto end = pem.find(kEnd, pos);
    if (end == std::string::npos) break;
    out.push_back(pem.substr(pos, end + kEnd.size() - pos) + "\n");
    pos = end + kEnd.size();
  }
  return out;
}

}  // namespace

Result<std::shared_ptr<const LoadedPair>> load_pair(const common::PemPair& pem) {
  auto out = std::make_shared<LoadedPair>();
  out->pem = pem;
  auto blocks = pem_certificates(pem.cert_pem);
  if (blocks.empty()) return fail("no PEM certificate found");
  auto cert = common::load_certificate(blocks.front());
  if (!cert) return std::unexpected(cert.error());
  out->cert = std::move(*cert);
  for (std::size_t i = 1; i < blocks.size(); ++i) {
    auto c = common::load_certificate(blocks[i]);
    if (!c) return fail("chain certificate " + std::to_string(i) + ": " + c.error().str());
    out->chain.push_back(std::move(*c));
  }
  auto key = common::load_private_key(pem.key_pem);
  if (!key) return std::unexpected(key.error());
  out->key = std::move(*key);
  if (X509_check_private_key(out->cert.get(), out->key.get()) != 1) {
    ERR_clear_error();
    return fail("the private key does not match the certificate");
  }
  auto info = common::certificate_info(out->cert.get());
  if (!info) return std::unexpected(info.error());
  out->info = std::move(*info);
  return std::shared_ptr<const LoadedPair>(std::move(out));
}

Result<std::shared_ptr<ServingCertificate>> ServingCertificate::from_pem(const common::PemPair& pem) {
  auto pair = load_pair(pem);
  if (!pair) return fail("serving certificate: " + pair.error().str());
  std::shared_ptr<ServingCertificate> s(new ServingCertificate());
  s->pair_ = std::move(*pair);
  return s;
}

Result<std::shared_ptr<ServingCertificate>> ServingCertificate::from_dir(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return fail("--cert-dir " + dir + " is not a readable directory");
  }
  auto id = identify(dir);
  auto pair = read_dir(dir);
  if (!pair) return fail("--cert-dir " + dir + ": " + pair.error().str());
  std::shared_ptr<ServingCertificate> s(new ServingCertificate());
  s->dir_ = dir;
  s->pair_ = std::move(*pair);
  s->loaded_id_ = id;
  return s;
}

ServingCertificate::DirId ServingCertificate::identify(const std::string& dir) {
  auto one = [](const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return FileId{};  // missing: size -1
    return FileId{static_cast<unsigned long long>(st.st_dev), static_cast<unsigned long long>(st.st_ino),
                  static_cast<long long>(st.st_size),
                  static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec};
  };
  return DirId{one(dir + "/" + kCertFile), one(dir + "/" + kKeyFile)};
}

Result<std::shared_ptr<const LoadedPair>> ServingCertificate::read_dir(const std::string& dir) {
  auto cert = common::read_file(dir + "/" + kCertFile);
  if (!cert) return std::unexpected(cert.error());
  auto key = common::read_file(dir + "/" + kKeyFile);
  if (!key) return std::unexpected(key.error());
  auto pair = load_pair({*cert, *key});
  if (!pair) return fail(std::string(kCertFile) + "/" + kKeyFile + ": " + pair.error().str());
  return pair;
}

bool ServingCertificate::reload_if_changed() {
  if (dir_.empty()) return false;
  auto id = identify(dir_);
  {
    std::lock_guard lk(mu_);
    if (id == loaded_id_ || id == failed_id_) return false;
  }
  // Read outside the lock: handshakes keep the current pair meanwhile.
  auto pair = read_dir(dir_);
  std::lock_guard lk(mu_);
  if (!pair) {
    if (failed_id_ != id) {
      log_.error("cannot reload the serving certificate, keeping the previous one",
                 {{"certDir", dir_}, {"error", pair.error().str()}, {"serial", pair_->info.serial_hex}});
    }
    failed_id_ = id;
    return false;
  }
  pair_ = std::move(*pair);
  loaded_id_ = id;
  failed_id_.reset();
  log_.info("reloaded the serving certificate", {{"certDir", dir_},
                                                 {"serial", pair_->info.serial_hex},
                                                 {"dnsNames", pair_->info.dns_names},
                                                 {"ipAddresses", pair_->info.ip_addresses}});
  return true;
}

std::shared_ptr<const LoadedPair> ServingCertificate::current() {
  reload_if_changed();
  std::lock_guard lk(mu_);
  return pair_;
}

std::optional<std::string> ServingCertificate::ca_bundle_pem() const {
  if (dir_.empty()) return std::nullopt;
  auto ca = common::read_file(dir_ + "/" + kCaFile);
  if (!ca || ca->find("-----BEGIN CERTIFICATE-----") == std::string::npos) return std::nullopt;
  return *ca;
}

int ServingCertificate::cert_callback(SSL* ssl, void* arg) {
  auto* self = static_cast<ServingCertificate*>(arg);
  std::shared_ptr<const LoadedPair> pair;
  try {
    pair = self->current();
  } catch (...) {
    return 0;
  }
  if (!pair) return 0;
  std::unique_ptr<STACK_OF(X509), X509StackFree> chain(sk_X509_new_null());
  if (!chain) return 0;
  for (const auto& c : pair->chain) sk_X509_push(chain.get(), c.get());
  // Up-references the certificate, key and chain; replaces what the context set.
  if (SSL_use_cert_and_key(ssl, pair->cert.get(), pair->key.get(), chain.get(), 1) != 1) {
    ERR_clear_error();
    return 0;
  }
  return 1;
}

Result<void> ServingCertificate::install(SSL_CTX* ctx) {
  auto pair = current();
  auto r = common::configure_server_ctx(ctx, pair->pem);
  if (!r) return r;
  SSL_CTX_set_cert_cb(ctx, &ServingCertificate::cert_callback, this);
  return {};
}

Result<SelfSigned> generate_self_signed(const SelfSignedOptions& o) {
  SelfSigned out;
  auto ca = common::generate_ca("kubex-webhook-ca", o.valid_days);
  if (!ca) return fail("cannot generate the webhook CA: " + ca.error().str());
  out.ca = std::move(*ca);
  common::CertSpec spec;
  spec.common_name = o.service + "." + o.ns + ".svc";
  spec.dns_names = {"localhost", o.service + "." + o.ns + ".svc",
                    o.service + "." + o.ns + ".svc.cluster.local"};
  spec.ip_addresses = {"127.0.0.1", "::1"};
  for (const auto& h : o.extra_hosts) {
    if (h.empty() || h == "0.0.0.0" || h == "::") continue;
    auto& list = is_ip(h) ? spec.ip_addresses : spec.dns_names;
    if (std::find(list.begin(), list.end(), h) == list.end()) list.push_back(h);
  }
  spec.valid_days = o.valid_days;
  spec.server_auth = true;
  auto serving = common::issue_certificate(out.ca, spec);
  if (!serving) return fail("cannot issue the webhook serving certificate: " + serving.error().str());
  out.serving = std::move(*serving);
  return out;
}

}  // namespace kubex::webhook
