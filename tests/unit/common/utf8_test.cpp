// UTF-8 decoding as Go does it (used by the YAML reader, the sim's messages and CEL string functions).
#include "common/utf8.h"

#include <gtest/gtest.h>

#include <string>

using namespace kubex::common;

TEST(Utf8, DecodesValidSequences) {
  EXPECT_EQ(utf8_decode("a", 0).cp, U'a');
  EXPECT_EQ(utf8_decode("\xC3\xA9", 0).len, 2u);
  EXPECT_EQ(utf8_decode("\xE2\x82\xAC", 0).cp, U'\u20AC');
  EXPECT_EQ(utf8_decode("\xF0\x9F\x98\x80", 0).cp, U'\U0001F600');
}

TEST(Utf8, RejectsWhatGoRejects) {
  EXPECT_EQ(utf8_decode("\xC0\x80", 0).len, 0u);          // overlong
  EXPECT_EQ(utf8_decode("\xED\xA0\x80", 0).len, 0u);      // surrogate
  EXPECT_EQ(utf8_decode("\xF4\x90\x80\x80", 0).len, 0u);  // beyond U+10FFFF
  EXPECT_EQ(utf8_decode("\xE2\x82", 0).len, 0u);          // truncated
  EXPECT_EQ(utf8_decode("\x80", 0).len, 0u);              // lone continuation byte
}

TEST(Utf8, NextCountValidAppend) {
  std::string s = "a\xffz\xC3\xA9";
  std::size_t i = 0;
  EXPECT_EQ(utf8_next(s, i), U'a');
  EXPECT_EQ(utf8_next(s, i), U'\uFFFD');
  EXPECT_EQ(i, 2u);  // an invalid byte is one error on its own
  EXPECT_EQ(utf8_count(s), 4u);
  EXPECT_FALSE(utf8_valid(s));
  EXPECT_TRUE(utf8_valid("caf\xC3\xA9"));
  std::string out;
  for (char32_t c : {U'a', U'\u00E9', U'\u20AC', U'\U0001F600'}) utf8_append(out, c);
  EXPECT_EQ(out, "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
}
