#include "common/hash.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <climits>
#include <cstdio>
#include <cstdlib>

namespace kubex::common {
namespace {

constexpr std::string_view kHexDigits = "0123456789abcdef";
constexpr std::string_view kSuffixAlphabet = "bcdfghjklmnpqrstvwxz2456789";

[[noreturn]] void die(const char* what) {
  char buf[256];
  ERR_error_string_n(ERR_get_error(), buf, sizeof buf);
  std::fprintf(stderr, "kubex: fatal: %s: %s\n", what, buf);
  std::abort();
}

void fill_random(unsigned char* out, std::size_t n) {
  while (n > 0) {
    int chunk = n > static_cast<std::size_t>(INT_MAX) ? INT_MAX : static_cast<int>(n);
    if (RAND_bytes(out, chunk) != 1) die("RAND_bytes failed");
    out += chunk;
    n -= static_cast<std::size_t>(chunk);
  }
}

std::string to_hex(const unsigned char* data, std::size_t n) {
  std::string out;
  out.reserve(n * 2);
  for (std::size_t i = 0; i < n; ++i) {
    out += kHexDigits[data[i] >> 4];
    out += kHexDigits[data[i] & 0xf];
  }
  return out;
}

}  // namespace

std::string sha256_hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &len, EVP_sha256(), nullptr) != 1) die("SHA-256 failed");
  return to_hex(digest, len);
}

std::string random_bytes(std::size_t n) {
  std::string out(n, '\0');
  fill_random(reinterpret_cast<unsigned char*>(out.data()), n);
  return out;
}

std::string random_hex(std::size_t bytes) {
  std::string raw = random_bytes(bytes);
  return to_hex(reinterpret_cast<const unsigned char*>(raw.data()), raw.size());
}

std::string random_alnum(std::size_t n) {
  // Rejection sampling keeps the choice uniform: 243 = 9 * 27 is the largest multiple of 27 below 256.
  constexpr unsigned kLimit = 256 / kSuffixAlphabet.size() * kSuffixAlphabet.size();
  std::string out;
  out.reserve(n);
  unsigned char buf[64];
  while (out.size() < n) {
    fill_random(buf, sizeof buf);
    for (unsigned char b : buf) {
      if (out.size() == n) break;
      if (b < kLimit) out += kSuffixAlphabet[b % kSuffixAlphabet.size()];
    }
  }
  return out;
}

std::string random_uuid() {
  unsigned char b[16];
  fill_random(b, sizeof b);
  b[6] = static_cast<unsigned char>((b[6] & 0x0f) | 0x40);  // version 4
  b[8] = static_cast<unsigned char>((b[8] & 0x3f) | 0x80);  // RFC 4122 variant
  std::string hex = to_hex(b, sizeof b);
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" + hex.substr(16, 4) + "-" +
         hex.substr(20);
}

}  // namespace kubex::common
