// UTF-8 as Go reads it: a code point is valid when it is in range, not a surrogate and not overlong; an
// invalid byte is one error of its own (it decodes as U+FFFD and the next byte starts afresh).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kubex::common {

struct Utf8Rune {
  char32_t cp = 0;
  std::size_t len = 0;  // 0 when the bytes at the position are not valid UTF-8
};

// Decodes the code point that starts at s[i] (i < s.size()).
Utf8Rune utf8_decode(std::string_view s, std::size_t i);

// Decodes the code point at s[i] and advances i past it; invalid bytes decode as U+FFFD and advance by one
// (Go's `for _, r := range s`).
char32_t utf8_next(std::string_view s, std::size_t& i);

// Appends the UTF-8 encoding of `c`.
void utf8_append(std::string& out, char32_t c);

// utf8.RuneCountInString: invalid bytes count one each.
std::size_t utf8_count(std::string_view s);

// utf8.ValidString.
bool utf8_valid(std::string_view s);

}  // namespace kubex::common
