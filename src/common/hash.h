// Digests and randomness (OpenSSL): content hashes, random tokens and generateName suffixes.
// These cannot fail in practice. Should OpenSSL's SHA-256 or random generator ever fail, the process aborts
// with the OpenSSL error on stderr rather than return a wrong digest or predictable "random" output.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kubex::common {

// Lowercase hex SHA-256 of `data` (64 characters).
std::string sha256_hex(std::string_view data);

// `n` cryptographically random bytes (RAND_bytes); e.g. base64url_encode(random_bytes(32)) for a bearer
// token.
std::string random_bytes(std::size_t n);
// Lowercase hex of `bytes` random bytes (2 * bytes characters).
std::string random_hex(std::size_t bytes);
// `n` random characters, uniformly from Kubernetes' generateName suffix alphabet
// "bcdfghjklmnpqrstvwxz2456789" (no vowels, so no words; no 0/1/3 lookalikes).
std::string random_alnum(std::size_t n);
// A random (version 4) UUID in its canonical 36-character form, as Kubernetes uses for metadata.uid.
std::string random_uuid();

}  // namespace kubex::common
