// X.509 certificates for kubex-sim (its CA, serving and client certificates, client-certificate
// authentication, webhook `caBundle` checks) and for the engine's `--self-signed-webhook` mode (ENG-3).
//
// Keys are ECDSA P-256 (named curve), certificates are signed with SHA-256, keys are written as PKCS#8 PEM
// ("-----BEGIN PRIVATE KEY-----"), which kubectl/client-go and the Python client accept. Every failure is a
// Result error whose message ends with the OpenSSL error text. The OpenSSL error queue of the calling thread
// is left empty.
#pragma once

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/result.h"

namespace kubex::common {

struct X509Free {
  void operator()(X509* p) const { X509_free(p); }
};
struct EvpKeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct X509StoreFree {
  void operator()(X509_STORE* p) const { X509_STORE_free(p); }
};
using X509Ptr = std::unique_ptr<X509, X509Free>;
using EvpKeyPtr = std::unique_ptr<EVP_PKEY, EvpKeyFree>;
using X509StorePtr = std::unique_ptr<X509_STORE, X509StoreFree>;

// A certificate and its private key, both PEM.
struct PemPair {
  std::string cert_pem{};
  std::string key_pem{};
};

// What issue_certificate puts into a leaf certificate.
struct CertSpec {
  // Subject CN, required (the Kubernetes user name of a client certificate).
  std::string common_name{};
  // Subject O entries, one each (the Kubernetes groups of a client certificate, e.g. "system:masters").
  std::vector<std::string> organizations{};
  // subjectAltName entries: DNS names ("localhost", "*.example.com") and IPv4/IPv6 text ("127.0.0.1", "::1").
  std::vector<std::string> dns_names{};
  std::vector<std::string> ip_addresses{};
  // Validity window. Unset: not_before = now - 5 minutes (clock skew), not_after = now + valid_days.
  // Set both in the past to make an expired certificate.
  int valid_days = 365;
  std::optional<TimePoint> not_before{};
  std::optional<TimePoint> not_after{};
  // extendedKeyUsage serverAuth / clientAuth (no extendedKeyUsage extension when both are false).
  bool server_auth = false;
  bool client_auth = false;
};

// What inspect_certificate reads back.
struct CertInfo {
  std::string common_name{};  // first Subject CN, "" if none
  std::vector<std::string> organizations{};
  std::vector<std::string> dns_names{};
  std::vector<std::string> ip_addresses{};  // canonical text form ("127.0.0.1", "::1")
  TimePoint not_before{};
  TimePoint not_after{};
  bool is_ca = false;        // basicConstraints CA:TRUE
  bool server_auth = false;  // extendedKeyUsage contains serverAuth (or there is no extendedKeyUsage)
  bool client_auth = false;  // extendedKeyUsage contains clientAuth (or there is no extendedKeyUsage)
  std::string serial_hex{};  // uppercase hex, no leading zeros
};

// A self-signed CA: basicConstraints critical CA:TRUE, keyUsage critical keyCertSign, cRLSign,
// digitalSignature, subjectKeyIdentifier, random 127-bit serial, valid from now - 5 minutes for valid_days
// days.
Result<PemPair> generate_ca(const std::string& common_name, int valid_days);

// A leaf certificate signed by `ca` (which must be a CA whose key matches its certificate): basicConstraints
// critical CA:FALSE, keyUsage critical digitalSignature, extendedKeyUsage per spec.server_auth/client_auth
// (omitted when both are false), subjectAltName from dns_names and ip_addresses, authorityKeyIdentifier,
// random 127-bit serial, fresh P-256 key.
Result<PemPair> issue_certificate(const PemPair& ca, const CertSpec& spec);

// Reads the first certificate in `pem`.
Result<CertInfo> inspect_certificate(const std::string& pem);
Result<CertInfo> certificate_info(const X509* cert);

// Verifies like `openssl verify -CAfile bundle` at time `now`: the first certificate of `cert_pem` is the
// leaf, any further certificates in it are untrusted intermediates; `ca_bundle_pem` holds one or more trusted
// PEM certificates. Checks signatures, the chain to a bundle certificate and the validity windows. The error
// names the reason, e.g. "certificate verification failed: certificate has expired (depth 0, CN=...)".
Result<void> verify_certificate(const std::string& cert_pem, const std::string& ca_bundle_pem, TimePoint now);

// Parse PEM into owned OpenSSL objects (first certificate / first key; any PEM private key format).
Result<X509Ptr> load_certificate(const std::string& pem);
Result<EvpKeyPtr> load_private_key(const std::string& pem);
// A trust store holding every certificate in `ca_bundle_pem` (at least one). For SSL_CTX_set_cert_store or
// httplib::SSLClient::set_ca_cert_store: both take ownership, so pass `store.release()`.
Result<X509StorePtr> make_store(const std::string& ca_bundle_pem);

enum class ClientCertMode {
  kRequest,  // ask for a client certificate; a connection without one succeeds, a presented one must verify
  kRequire,  // a connection without a verified client certificate fails the handshake
};

// Sets up a server SSL_CTX (e.g. in httplib::SSLServer's SSL_CTX callback): minimum TLS 1.2, the serving
// certificate (plus any chain certificates after it in serving.cert_pem) and key (checked to match). With a
// non-empty `client_ca_pem`, clients are asked for a certificate issued by one of its CAs (client CA list
// sent in the handshake) and a presented certificate is verified against them (SSL_VERIFY_PEER; with kRequest
// not SSL_VERIFY_FAIL_IF_NO_PEER_CERT), so a bad client certificate fails the handshake. With an empty
// `client_ca_pem` no client certificate is requested (and `mode` must be kRequest).
Result<void> configure_server_ctx(SSL_CTX* ctx, const PemPair& serving, const std::string& client_ca_pem = {},
                                  ClientCertMode mode = ClientCertMode::kRequest);

// The peer's certificate on an established connection (httplib: `req.ssl`), only if the peer presented one
// and it verified against the context's store; nullopt otherwise (null `ssl`, no certificate, not verified).
std::optional<CertInfo> verified_peer_certificate(const SSL* ssl);

}  // namespace kubex::common
