#include "common/x509.h"

#include <arpa/inet.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include <chrono>
#include <climits>
#include <cstdint>
#include <ctime>

namespace kubex::common {
namespace {

template <auto F>
struct Free {
  template <class T>
  void operator()(T* p) const {
    F(p);
  }
};
using BioPtr = std::unique_ptr<BIO, Free<BIO_free_all>>;
using PkeyCtxPtr = std::unique_ptr<EVP_PKEY_CTX, Free<EVP_PKEY_CTX_free>>;
using StoreCtxPtr = std::unique_ptr<X509_STORE_CTX, Free<X509_STORE_CTX_free>>;
using ExtensionPtr = std::unique_ptr<X509_EXTENSION, Free<X509_EXTENSION_free>>;
using GeneralNamesPtr = std::unique_ptr<GENERAL_NAMES, Free<GENERAL_NAMES_free>>;
using GeneralNamePtr = std::unique_ptr<GENERAL_NAME, Free<GENERAL_NAME_free>>;
using Ia5StringPtr = std::unique_ptr<ASN1_IA5STRING, Free<ASN1_IA5STRING_free>>;
using OctetStringPtr = std::unique_ptr<ASN1_OCTET_STRING, Free<ASN1_OCTET_STRING_free>>;
using BignumPtr = std::unique_ptr<BIGNUM, Free<BN_free>>;
using Asn1IntegerPtr = std::unique_ptr<ASN1_INTEGER, Free<ASN1_INTEGER_free>>;

struct X509StackFree {
  void operator()(STACK_OF(X509) * s) const { sk_X509_pop_free(s, X509_free); }
};
using X509StackPtr = std::unique_ptr<STACK_OF(X509), X509StackFree>;
struct NameStackFree {
  void operator()(STACK_OF(X509_NAME) * s) const { sk_X509_NAME_pop_free(s, X509_NAME_free); }
};
using NameStackPtr = std::unique_ptr<STACK_OF(X509_NAME), NameStackFree>;

struct OpensslFree {
  void operator()(void* p) const { OPENSSL_free(p); }
};

constexpr auto kBackdate = std::chrono::minutes(5);

// Drains this thread's OpenSSL error queue into one line.
std::string openssl_errors() {
  std::string out;
  char buf[256];
  while (unsigned long e = ERR_get_error()) {
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? "no OpenSSL error detail" : out;
}

std::unexpected<Error> fail_ssl(const std::string& what) {
  return fail(what + ": " + openssl_errors());
}

std::unexpected<Error> prefixed(const std::string& what, const Error& e) {
  return fail(what + ": " + e.str());
}

// Never prompt on a terminal for the passphrase of an encrypted key.
int no_password(char*, int, int, void*) {
  return -1;
}

Result<BioPtr> memory_bio(const std::string& data) {
  if (data.size() > static_cast<std::size_t>(INT_MAX)) return fail("PEM input too large");
  BioPtr bio(BIO_new_mem_buf(data.data(), static_cast<int>(data.size())));
  if (!bio) return fail_ssl("BIO_new_mem_buf failed");
  return bio;
}

Result<std::vector<X509Ptr>> load_all_certificates(const std::string& pem) {
  auto bio = memory_bio(pem);
  if (!bio) return std::unexpected(bio.error());
  std::vector<X509Ptr> certs;
  for (;;) {
    X509Ptr cert(PEM_read_bio_X509(bio->get(), nullptr, no_password, nullptr));
    if (cert) {
      certs.push_back(std::move(cert));
      continue;
    }
    unsigned long e = ERR_peek_last_error();
    bool at_end = ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE;
    if (at_end && !certs.empty()) {
      ERR_clear_error();
      return certs;
    }
    if (at_end) {
      ERR_clear_error();
      return fail("no PEM certificate found");
    }
    return fail_ssl("invalid PEM certificate");
  }
}

std::time_t to_time_t(TimePoint t) {
  return std::chrono::system_clock::to_time_t(t);
}

Result<TimePoint> from_asn1_time(const ASN1_TIME* t) {
  std::tm tm{};
  if (ASN1_TIME_to_tm(t, &tm) != 1) return fail_ssl("invalid certificate time");
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

Result<EvpKeyPtr> new_p256_key() {
  PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr));
  if (!ctx) return fail_ssl("EVP_PKEY_CTX_new_from_name(EC) failed");
  if (EVP_PKEY_keygen_init(ctx.get()) != 1) return fail_ssl("EVP_PKEY_keygen_init failed");
  if (EVP_PKEY_CTX_set_group_name(ctx.get(), "P-256") != 1) return fail_ssl("setting curve P-256 failed");
  EVP_PKEY* raw = nullptr;
  if (EVP_PKEY_generate(ctx.get(), &raw) != 1) return fail_ssl("generating a P-256 key failed");
  return EvpKeyPtr(raw);
}

// A random positive serial: 16 bytes with the top bit clear (127 random bits, never zero).
Result<void> set_random_serial(X509* cert) {
  unsigned char bytes[16];
  do {
    if (RAND_bytes(bytes, sizeof bytes) != 1) return fail_ssl("RAND_bytes failed");
    bytes[0] &= 0x7f;
  } while (bytes[0] == 0 && bytes[1] == 0);
  BignumPtr bn(BN_bin2bn(bytes, sizeof bytes, nullptr));
  if (!bn) return fail_ssl("BN_bin2bn failed");
  Asn1IntegerPtr serial(BN_to_ASN1_INTEGER(bn.get(), nullptr));
  if (!serial) return fail_ssl("BN_to_ASN1_INTEGER failed");
  if (X509_set_serialNumber(cert, serial.get()) != 1) return fail_ssl("X509_set_serialNumber failed");
  return {};
}

Result<void> add_name_entry(X509_NAME* name, int nid, const std::string& value) {
  if (value.size() > static_cast<std::size_t>(INT_MAX)) return fail("name too long");
  if (X509_NAME_add_entry_by_NID(name, nid, MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>(value.data()),
                                 static_cast<int>(value.size()), -1, 0) != 1) {
    return fail_ssl("invalid subject name entry \"" + value + "\"");
  }
  return {};
}

// Subject "O=org1, O=org2, CN=cn" (the order Kubernetes tooling writes).
Result<void> set_subject(X509* cert, const std::string& common_name, const std::vector<std::string>& orgs) {
  X509_NAME* name = X509_get_subject_name(cert);
  for (const auto& org : orgs) {
    if (auto r = add_name_entry(name, NID_organizationName, org); !r) return r;
  }
  return add_name_entry(name, NID_commonName, common_name);
}

// Adds an extension given in openssl.cnf syntax (fixed strings only; never user input).
Result<void> add_conf_extension(X509* cert, X509V3_CTX* ctx, int nid, const char* value) {
  ExtensionPtr ext(X509V3_EXT_nconf_nid(nullptr, ctx, nid, value));
  if (!ext) return fail_ssl(std::string("building extension ") + OBJ_nid2sn(nid) + "=" + value + " failed");
  if (X509_add_ext(cert, ext.get(), -1) != 1) return fail_ssl("X509_add_ext failed");
  return {};
}

bool valid_dns_name(const std::string& s) {
  if (s.empty() || s.size() > 253) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
              c == '.' || c == '*' || c == '_';
    if (!ok) return false;
  }
  return true;
}

Result<void> add_subject_alt_names(X509* cert, const CertSpec& spec) {
  if (spec.dns_names.empty() && spec.ip_addresses.empty()) return {};
  GeneralNamesPtr names(sk_GENERAL_NAME_new_null());
  if (!names) return fail_ssl("sk_GENERAL_NAME_new_null failed");
  for (const auto& dns : spec.dns_names) {
    if (!valid_dns_name(dns)) return fail("invalid DNS name \"" + dns + "\"");
    Ia5StringPtr str(ASN1_IA5STRING_new());
    if (!str || ASN1_STRING_set(str.get(), dns.data(), static_cast<int>(dns.size())) != 1) {
      return fail_ssl("ASN1_STRING_set failed");
    }
    GeneralNamePtr gn(GENERAL_NAME_new());
    if (!gn) return fail_ssl("GENERAL_NAME_new failed");
    GENERAL_NAME_set0_value(gn.get(), GEN_DNS, str.release());
    if (sk_GENERAL_NAME_push(names.get(), gn.get()) == 0) return fail_ssl("sk_GENERAL_NAME_push failed");
    gn.release();
  }
  for (const auto& ip : spec.ip_addresses) {
    OctetStringPtr bytes(a2i_IPADDRESS(ip.c_str()));
    if (!bytes || ip.find('\0') != std::string::npos) {
      ERR_clear_error();
      return fail("invalid IP address \"" + ip + "\"");
    }
    GeneralNamePtr gn(GENERAL_NAME_new());
    if (!gn) return fail_ssl("GENERAL_NAME_new failed");
    GENERAL_NAME_set0_value(gn.get(), GEN_IPADD, bytes.release());
    if (sk_GENERAL_NAME_push(names.get(), gn.get()) == 0) return fail_ssl("sk_GENERAL_NAME_push failed");
    gn.release();
  }
  if (X509_add1_ext_i2d(cert, NID_subject_alt_name, names.get(), 0, X509V3_ADD_DEFAULT) != 1) {
    return fail_ssl("adding subjectAltName failed");
  }
  return {};
}

struct Window {
  TimePoint not_before;
  TimePoint not_after;
};

Result<Window> resolve_window(const CertSpec& spec, TimePoint now) {
  Window w;
  w.not_before = spec.not_before.value_or(now - kBackdate);
  if (spec.not_after) {
    w.not_after = *spec.not_after;
  } else {
    if (spec.valid_days <= 0)
      return fail("valid_days must be positive, got " + std::to_string(spec.valid_days));
    w.not_after = now + std::chrono::days(spec.valid_days);
  }
  // Certificates hold whole seconds.
  if (to_time_t(w.not_after) <= to_time_t(w.not_before))
    return fail("not_after must be later than not_before");
  return w;
}

// A version-3 certificate with a random serial, the given subject, window and public key.
Result<X509Ptr> new_certificate(const std::string& common_name, const std::vector<std::string>& orgs,
                                const Window& window, EVP_PKEY* key) {
  if (common_name.empty()) return fail("common name must not be empty");
  X509Ptr cert(X509_new());
  if (!cert) return fail_ssl("X509_new failed");
  if (X509_set_version(cert.get(), X509_VERSION_3) != 1) return fail_ssl("X509_set_version failed");
  if (auto r = set_random_serial(cert.get()); !r) return std::unexpected(r.error());
  if (!ASN1_TIME_set(X509_getm_notBefore(cert.get()), to_time_t(window.not_before)) ||
      !ASN1_TIME_set(X509_getm_notAfter(cert.get()), to_time_t(window.not_after))) {
    return fail_ssl("setting the validity window failed");
  }
  if (auto r = set_subject(cert.get(), common_name, orgs); !r) return std::unexpected(r.error());
  if (X509_set_pubkey(cert.get(), key) != 1) return fail_ssl("X509_set_pubkey failed");
  return cert;
}

Result<std::string> bio_contents(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  if (n < 0 || (n > 0 && !data)) return fail_ssl("BIO_get_mem_data failed");
  return std::string(data, static_cast<std::size_t>(n));
}

Result<PemPair> to_pem(X509* cert, EVP_PKEY* key) {
  BioPtr cert_bio(BIO_new(BIO_s_mem()));
  BioPtr key_bio(BIO_new(BIO_s_mem()));
  if (!cert_bio || !key_bio) return fail_ssl("BIO_new failed");
  if (PEM_write_bio_X509(cert_bio.get(), cert) != 1) return fail_ssl("PEM_write_bio_X509 failed");
  // PKCS#8 "PRIVATE KEY", unencrypted.
  if (PEM_write_bio_PrivateKey(key_bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return fail_ssl("PEM_write_bio_PrivateKey failed");
  }
  auto cert_pem = bio_contents(cert_bio.get());
  if (!cert_pem) return std::unexpected(cert_pem.error());
  auto key_pem = bio_contents(key_bio.get());
  if (!key_pem) return std::unexpected(key_pem.error());
  return PemPair{std::move(*cert_pem), std::move(*key_pem)};
}

std::string asn1_to_utf8(const ASN1_STRING* s) {
  unsigned char* out = nullptr;
  int n = ASN1_STRING_to_UTF8(&out, s);
  if (n < 0) {
    ERR_clear_error();
    return {};
  }
  std::unique_ptr<unsigned char, OpensslFree> owned(out);
  return std::string(reinterpret_cast<const char*>(out), static_cast<std::size_t>(n));
}

std::vector<std::string> name_entries(const X509_NAME* name, int nid) {
  std::vector<std::string> out;
  for (int i = X509_NAME_get_index_by_NID(name, nid, -1); i >= 0;
       i = X509_NAME_get_index_by_NID(name, nid, i)) {
    out.push_back(asn1_to_utf8(X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i))));
  }
  return out;
}

std::string ip_to_string(const ASN1_OCTET_STRING* ip) {
  const unsigned char* data = ASN1_STRING_get0_data(ip);
  int len = ASN1_STRING_length(ip);
  char buf[INET6_ADDRSTRLEN] = {};
  if (len == 4 && inet_ntop(AF_INET, data, buf, sizeof buf)) return buf;
  if (len == 16 && inet_ntop(AF_INET6, data, buf, sizeof buf)) return buf;
  return {};
}

std::string describe_subject(const X509* cert) {
  if (!cert) return "";
  auto cns = name_entries(X509_get_subject_name(cert), NID_commonName);
  return cns.empty() ? "" : ", CN=" + cns.front();
}

}  // namespace

Result<PemPair> generate_ca(const std::string& common_name, int valid_days) {
  if (valid_days <= 0) return fail("valid_days must be positive, got " + std::to_string(valid_days));
  TimePoint now = RealClock::instance().now();
  Window window{now - kBackdate, now + std::chrono::days(valid_days)};
  auto key = new_p256_key();
  if (!key) return std::unexpected(key.error());
  auto cert = new_certificate(common_name, {}, window, key->get());
  if (!cert) return std::unexpected(cert.error());
  X509* x = cert->get();
  if (X509_set_issuer_name(x, X509_get_subject_name(x)) != 1) return fail_ssl("X509_set_issuer_name failed");
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, x, x, nullptr, nullptr, 0);
  for (auto [nid, value] : {std::pair{NID_basic_constraints, "critical,CA:TRUE"},
                            std::pair{NID_key_usage, "critical,digitalSignature,keyCertSign,cRLSign"},
                            std::pair{NID_subject_key_identifier, "hash"}}) {
    if (auto r = add_conf_extension(x, &ctx, nid, value); !r) return std::unexpected(r.error());
  }
  if (X509_sign(x, key->get(), EVP_sha256()) <= 0) return fail_ssl("signing the CA certificate failed");
  return to_pem(x, key->get());
}

Result<PemPair> issue_certificate(const PemPair& ca, const CertSpec& spec) {
  auto ca_cert = load_certificate(ca.cert_pem);
  if (!ca_cert) return prefixed("CA certificate", ca_cert.error());
  auto ca_key = load_private_key(ca.key_pem);
  if (!ca_key) return prefixed("CA key", ca_key.error());
  if (X509_check_private_key(ca_cert->get(), ca_key->get()) != 1) {
    return fail_ssl("CA key does not match the CA certificate");
  }
  if ((X509_get_extension_flags(ca_cert->get()) & EXFLAG_CA) == 0) {
    ERR_clear_error();
    return fail("CA certificate" + describe_subject(ca_cert->get()) +
                " is not a CA (basicConstraints CA:TRUE)");
  }
  auto window = resolve_window(spec, RealClock::instance().now());
  if (!window) return std::unexpected(window.error());
  auto key = new_p256_key();
  if (!key) return std::unexpected(key.error());
  auto cert = new_certificate(spec.common_name, spec.organizations, *window, key->get());
  if (!cert) return std::unexpected(cert.error());
  X509* x = cert->get();
  if (X509_set_issuer_name(x, X509_get_subject_name(ca_cert->get())) != 1) {
    return fail_ssl("X509_set_issuer_name failed");
  }
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, ca_cert->get(), x, nullptr, nullptr, 0);
  const char* eku = spec.server_auth && spec.client_auth ? "serverAuth,clientAuth"
                    : spec.server_auth                   ? "serverAuth"
                    : spec.client_auth                   ? "clientAuth"
                                                         : nullptr;
  for (auto [nid, value] : {std::pair{NID_basic_constraints, "critical,CA:FALSE"},
                            std::pair{NID_key_usage, "critical,digitalSignature"},
                            std::pair{NID_ext_key_usage, eku}, std::pair{NID_subject_key_identifier, "hash"},
                            std::pair{NID_authority_key_identifier, "keyid:always"}}) {
    if (!value) continue;
    if (auto r = add_conf_extension(x, &ctx, nid, value); !r) return std::unexpected(r.error());
  }
  if (auto r = add_subject_alt_names(x, spec); !r) return std::unexpected(r.error());
  if (X509_sign(x, ca_key->get(), EVP_sha256()) <= 0) return fail_ssl("signing the certificate failed");
  return to_pem(x, key->get());
}

Result<CertInfo> certificate_info(const X509* cert) {
  if (!cert) return fail("no certificate");
  // X509_get_extension_flags and X509_get_extended_key_usage only fill a (locked) cache: logically const.
  X509* mutable_cert = const_cast<X509*>(cert);
  CertInfo info;
  const X509_NAME* subject = X509_get_subject_name(cert);
  auto cns = name_entries(subject, NID_commonName);
  if (!cns.empty()) info.common_name = cns.front();
  info.organizations = name_entries(subject, NID_organizationName);
  GeneralNamesPtr names(
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr)));
  if (names) {
    for (int i = 0; i < sk_GENERAL_NAME_num(names.get()); ++i) {
      const GENERAL_NAME* gn = sk_GENERAL_NAME_value(names.get(), i);
      if (gn->type == GEN_DNS) {
        const ASN1_IA5STRING* s = gn->d.dNSName;
        info.dns_names.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                                    static_cast<std::size_t>(ASN1_STRING_length(s)));
      } else if (gn->type == GEN_IPADD) {
        if (auto ip = ip_to_string(gn->d.iPAddress); !ip.empty()) info.ip_addresses.push_back(std::move(ip));
      }
    }
  }
  auto nb = from_asn1_time(X509_get0_notBefore(cert));
  if (!nb) return std::unexpected(nb.error());
  auto na = from_asn1_time(X509_get0_notAfter(cert));
  if (!na) return std::unexpected(na.error());
  info.not_before = *nb;
  info.not_after = *na;
  uint32_t flags = X509_get_extension_flags(mutable_cert);
  if (flags & EXFLAG_INVALID) {
    ERR_clear_error();
    return fail("certificate" + describe_subject(cert) + " has invalid extensions");
  }
  info.is_ca = (flags & EXFLAG_CA) != 0;
  uint32_t xku = X509_get_extended_key_usage(mutable_cert);
  info.server_auth = (xku & XKU_SSL_SERVER) != 0;
  info.client_auth = (xku & XKU_SSL_CLIENT) != 0;
  BignumPtr serial(ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr));
  if (!serial) return fail_ssl("reading the serial number failed");
  std::unique_ptr<char, OpensslFree> hex(BN_bn2hex(serial.get()));
  if (!hex) return fail_ssl("BN_bn2hex failed");
  info.serial_hex = hex.get();
  return info;
}

Result<CertInfo> inspect_certificate(const std::string& pem) {
  auto cert = load_certificate(pem);
  if (!cert) return std::unexpected(cert.error());
  return certificate_info(cert->get());
}

Result<void> verify_certificate(const std::string& cert_pem, const std::string& ca_bundle_pem,
                                TimePoint now) {
  auto chain = load_all_certificates(cert_pem);
  if (!chain) return prefixed("certificate", chain.error());
  auto store = make_store(ca_bundle_pem);
  if (!store) return std::unexpected(store.error());
  X509StackPtr untrusted(sk_X509_new_null());
  if (!untrusted) return fail_ssl("sk_X509_new_null failed");
  for (std::size_t i = 1; i < chain->size(); ++i) {
    if (sk_X509_push(untrusted.get(), (*chain)[i].get()) == 0) return fail_ssl("sk_X509_push failed");
    (*chain)[i].release();
  }
  StoreCtxPtr ctx(X509_STORE_CTX_new());
  if (!ctx) return fail_ssl("X509_STORE_CTX_new failed");
  if (X509_STORE_CTX_init(ctx.get(), store->get(), chain->front().get(), untrusted.get()) != 1) {
    return fail_ssl("X509_STORE_CTX_init failed");
  }
  X509_VERIFY_PARAM_set_time(X509_STORE_CTX_get0_param(ctx.get()), to_time_t(now));
  if (X509_verify_cert(ctx.get()) == 1) {
    ERR_clear_error();
    return {};
  }
  int err = X509_STORE_CTX_get_error(ctx.get());
  int depth = X509_STORE_CTX_get_error_depth(ctx.get());
  const X509* bad = X509_STORE_CTX_get_current_cert(ctx.get());
  ERR_clear_error();
  return fail("certificate verification failed: " + std::string(X509_verify_cert_error_string(err)) +
              " (depth " + std::to_string(depth) + describe_subject(bad) + ")");
}

Result<X509Ptr> load_certificate(const std::string& pem) {
  auto certs = load_all_certificates(pem);
  if (!certs) return std::unexpected(certs.error());
  return std::move(certs->front());
}

Result<EvpKeyPtr> load_private_key(const std::string& pem) {
  auto bio = memory_bio(pem);
  if (!bio) return std::unexpected(bio.error());
  EvpKeyPtr key(PEM_read_bio_PrivateKey(bio->get(), nullptr, no_password, nullptr));
  if (!key) return fail_ssl("invalid PEM private key");
  ERR_clear_error();
  return key;
}

Result<X509StorePtr> make_store(const std::string& ca_bundle_pem) {
  auto certs = load_all_certificates(ca_bundle_pem);
  if (!certs) return prefixed("CA bundle", certs.error());
  X509StorePtr store(X509_STORE_new());
  if (!store) return fail_ssl("X509_STORE_new failed");
  for (const auto& cert : *certs) {
    // Adding a duplicate is not an error in OpenSSL 3.
    if (X509_STORE_add_cert(store.get(), cert.get()) != 1) return fail_ssl("X509_STORE_add_cert failed");
  }
  return store;
}

Result<void> configure_server_ctx(SSL_CTX* ctx, const PemPair& serving, const std::string& client_ca_pem,
                                  ClientCertMode mode) {
  if (!ctx) return fail("no SSL_CTX");
  if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1)
    return fail_ssl("setting TLS 1.2 minimum failed");
  auto chain = load_all_certificates(serving.cert_pem);
  if (!chain) return prefixed("serving certificate", chain.error());
  auto key = load_private_key(serving.key_pem);
  if (!key) return prefixed("serving key", key.error());
  if (SSL_CTX_use_certificate(ctx, chain->front().get()) != 1)
    return fail_ssl("SSL_CTX_use_certificate failed");
  for (std::size_t i = 1; i < chain->size(); ++i) {
    if (SSL_CTX_add1_chain_cert(ctx, (*chain)[i].get()) != 1)
      return fail_ssl("SSL_CTX_add1_chain_cert failed");
  }
  if (SSL_CTX_use_PrivateKey(ctx, key->get()) != 1) return fail_ssl("SSL_CTX_use_PrivateKey failed");
  if (SSL_CTX_check_private_key(ctx) != 1)
    return fail_ssl("serving key does not match the serving certificate");

  if (client_ca_pem.empty()) {
    if (mode == ClientCertMode::kRequire)
      return fail("client certificates are required but no client CA is given");
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
    return {};
  }
  auto client_cas = load_all_certificates(client_ca_pem);
  if (!client_cas) return prefixed("client CA bundle", client_cas.error());
  auto store = make_store(client_ca_pem);
  if (!store) return std::unexpected(store.error());
  NameStackPtr names(sk_X509_NAME_new_null());
  if (!names) return fail_ssl("sk_X509_NAME_new_null failed");
  for (const auto& ca : *client_cas) {
    X509_NAME* name = X509_NAME_dup(X509_get_subject_name(ca.get()));
    if (!name) return fail_ssl("X509_NAME_dup failed");
    if (sk_X509_NAME_push(names.get(), name) == 0) {
      X509_NAME_free(name);
      return fail_ssl("sk_X509_NAME_push failed");
    }
  }
  // Session resumption with client verification needs a session id context.
  static constexpr unsigned char kSessionContext[] = "kubex";
  if (SSL_CTX_set_session_id_context(ctx, kSessionContext, sizeof kSessionContext - 1) != 1) {
    return fail_ssl("SSL_CTX_set_session_id_context failed");
  }
  SSL_CTX_set_client_CA_list(ctx, names.release());  // takes ownership
  SSL_CTX_set_cert_store(ctx, store->release());     // takes ownership
  int verify = SSL_VERIFY_PEER;
  if (mode == ClientCertMode::kRequire) verify |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
  SSL_CTX_set_verify(ctx, verify, nullptr);
  return {};
}

std::optional<CertInfo> verified_peer_certificate(const SSL* ssl) {
  if (!ssl) return std::nullopt;
  X509* peer = SSL_get0_peer_certificate(ssl);
  if (!peer || SSL_get_verify_result(ssl) != X509_V_OK) return std::nullopt;
  auto info = certificate_info(peer);
  if (!info) return std::nullopt;
  return std::move(*info);
}

}  // namespace kubex::common
