// The webhook server's serving certificate (ENG-3): either `--cert-dir DIR` with tls.crt/tls.key, re-read
// when the files change (every TLS handshake checks the files and uses the current pair, so a rotated pair
// is served without a restart; a broken new pair keeps the old one and logs an error), or a CA and serving
// certificate generated in memory for `--self-signed-webhook`.
#pragma once

#include <openssl/ssl.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/log.h"
#include "common/result.h"
#include "common/x509.h"
#include "webhook/ca_bundle_source.h"

namespace kubex::webhook {

inline constexpr const char* kCertFile = "tls.crt";
inline constexpr const char* kKeyFile = "tls.key";
inline constexpr const char* kCaFile = "ca.crt";  // optional in a cert dir (cert-manager writes it)
// The Service Helm renders in front of the engine's webhook port (HLM-1: "<fullname>-webhook-service").
inline constexpr const char* kDefaultWebhookService = "kubex-automation-engine-webhook-service";

// One loaded certificate/key pair, ready for OpenSSL.
struct LoadedPair {
  common::PemPair pem;
  common::X509Ptr cert;
  std::vector<common::X509Ptr> chain;  // certificates after the first in tls.crt
  common::EvpKeyPtr key;
  common::CertInfo info;
};
// Parses and checks a pair (the key must match the certificate).
common::Result<std::shared_ptr<const LoadedPair>> load_pair(const common::PemPair& pem);

class ServingCertificate final : public CaBundleSource {
 public:
  // Loads DIR/tls.crt and DIR/tls.key now; an error names the file and the problem.
  static common::Result<std::shared_ptr<ServingCertificate>> from_dir(const std::string& dir);
  // A fixed pair (self-signed mode, tests).
  static common::Result<std::shared_ptr<ServingCertificate>> from_pem(const common::PemPair& pem);

  // The pair to serve now. For a cert dir, first re-reads the files if their identity (inode, size,
  // modification time) changed since the last look; a pair that does not load is logged (once per change)
  // and the previous pair stays.
  std::shared_ptr<const LoadedPair> current();
  // Re-checks the cert dir at once; true when a new pair was taken. Always false for a fixed pair.
  bool reload_if_changed();
  // DIR/ca.crt when present (cert dir only), for the caBundle of registered webhooks.
  std::optional<std::string> ca_bundle_pem() const override;
  const std::string& dir() const { return dir_; }

  // Sets up a server SSL_CTX: TLS 1.2 minimum, the current pair, and a certificate callback that picks
  // current() on every handshake. The context must not outlive this object.
  common::Result<void> install(SSL_CTX* ctx);

 private:
  struct FileId {
    unsigned long long dev = 0, ino = 0;
    long long size = -1, mtime_ns = 0;
    bool operator==(const FileId&) const = default;
  };
  struct DirId {
    FileId cert, key;
    bool operator==(const DirId&) const = default;
  };
  ServingCertificate() = default;
  static DirId identify(const std::string& dir);
  static common::Result<std::shared_ptr<const LoadedPair>> read_dir(const std::string& dir);
  static int cert_callback(SSL* ssl, void* arg);

  std::string dir_;  // empty for a fixed pair
  std::mutex mu_;
  std::shared_ptr<const LoadedPair> pair_;
  DirId loaded_id_;
  std::optional<DirId> failed_id_;
  common::Logger log_{"webhook.certs"};
};

// `--self-signed-webhook`: a CA and a serving certificate made in memory.
struct SelfSignedOptions {
  std::string service = kDefaultWebhookService;
  std::string ns = "kubex";
  std::vector<std::string> extra_hosts;  // e.g. the bind host: IPs become IP SANs, names DNS SANs
  int valid_days = 3650;
};
struct SelfSigned {
  common::PemPair ca;
  common::PemPair serving;
};
// SANs: IP 127.0.0.1 and ::1, DNS localhost, <service>.<ns>.svc and <service>.<ns>.svc.cluster.local,
// plus extra_hosts (wildcard addresses such as 0.0.0.0 are skipped).
common::Result<SelfSigned> generate_self_signed(const SelfSignedOptions& options);

}  // namespace kubex::webhook
