// Base64 (RFC 4648) for Secret data, `caBundle` and the JSONPatch of an AdmissionReview response, plus the
// URL-safe unpadded form for random tokens.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace kubex::common {

// Standard alphabet with '=' padding (Go's base64.StdEncoding, what Kubernetes uses for []byte fields).
std::string base64_encode(std::string_view data);
// Inverse of base64_encode. Strict about the text: only the standard alphabet, length a multiple of 4, at
// most two '=' and only at the end; whitespace and newlines (also a trailing newline) are errors. Like Go's
// non-strict decoder, unused low bits of the last character are ignored. The error names the first bad input
// byte: "illegal base64 data at input byte 3".
Result<std::string> base64_decode(std::string_view text);

// URL-safe alphabet ('-' and '_') without padding (Go's base64.RawURLEncoding).
std::string base64url_encode(std::string_view data);
// Inverse of base64url_encode; '=' padding and the standard alphabet's '+' and '/' are errors.
Result<std::string> base64url_decode(std::string_view text);

}  // namespace kubex::common
