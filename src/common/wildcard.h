// Shell-style `*` wildcards for scope and pool selectors (SEL-3, CON-1).
//
// `*` matches any run of characters, including an empty one. Every other character, `?` and `[` included,
// is literal, and matching is case-sensitive and byte-wise. Matching runs in O(|pattern| + |text|): the
// pattern is split at `*`, the first piece must be a prefix, the last a suffix, and the pieces in between
// are found left to right (leftmost match is always safe with only `*`), each with a KMP search.
#pragma once

#include <string_view>

namespace kubex::common {

// wildcard_match("gpu-*", "gpu-a100") == true; wildcard_match("*", "") == true;
// wildcard_match("a*b", "ab") == true; wildcard_match("prod", "production") == false.
bool wildcard_match(std::string_view pattern, std::string_view text);

// True when `pattern` contains a `*`, i.e. it is not just a literal.
inline bool has_wildcard(std::string_view pattern) {
  return pattern.find('*') != std::string_view::npos;
}

}  // namespace kubex::common
