#include "common/base64.h"

#include <gtest/gtest.h>

#include <string>

namespace kubex::common {
namespace {

struct Vector {
  const char* plain;
  const char* encoded;
};

// RFC 4648 §10.
constexpr Vector kRfc4648[] = {{"", ""},
                               {"f", "Zg=="},
                               {"fo", "Zm8="},
                               {"foo", "Zm9v"},
                               {"foob", "Zm9vYg=="},
                               {"fooba", "Zm9vYmE="},
                               {"foobar", "Zm9vYmFy"}};

TEST(Base64, Rfc4648TestVectors) {
  for (const auto& v : kRfc4648) {
    EXPECT_EQ(base64_encode(v.plain), v.encoded) << v.plain;
    auto decoded = base64_decode(v.encoded);
    ASSERT_TRUE(decoded) << v.encoded << ": " << decoded.error().str();
    EXPECT_EQ(*decoded, v.plain);
  }
}

TEST(Base64, UrlVariantHasNoPadding) {
  const char* expected[] = {"", "Zg", "Zm8", "Zm9v", "Zm9vYg", "Zm9vYmE", "Zm9vYmFy"};
  for (std::size_t i = 0; i < std::size(kRfc4648); ++i) {
    EXPECT_EQ(base64url_encode(kRfc4648[i].plain), expected[i]);
    auto decoded = base64url_decode(expected[i]);
    ASSERT_TRUE(decoded) << expected[i];
    EXPECT_EQ(*decoded, kRfc4648[i].plain);
  }
}

TEST(Base64, AlphabetsDifferOnlyInTheLastTwoCharacters) {
  const std::string data("\xfb\xff\xbf", 3);
  EXPECT_EQ(base64_encode(data), "+/+/");
  EXPECT_EQ(base64url_encode(data), "-_-_");
  EXPECT_FALSE(base64_decode("-_-_"));
  EXPECT_FALSE(base64url_decode("+/+/"));
}

TEST(Base64, RoundTripsEveryByteValueAndEveryLength) {
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  for (std::size_t len = 0; len <= all.size(); ++len) {
    std::string data = all.substr(256 - len) + all.substr(0, len % 7);
    auto std_round = base64_decode(base64_encode(data));
    ASSERT_TRUE(std_round) << len;
    EXPECT_EQ(*std_round, data);
    auto url_round = base64url_decode(base64url_encode(data));
    ASSERT_TRUE(url_round) << len;
    EXPECT_EQ(*url_round, data);
  }
}

TEST(Base64, EncodedLengthAndPadding) {
  EXPECT_EQ(base64_encode(std::string(100, '\0')).size(), 136u);
  EXPECT_EQ(base64url_encode(std::string(32, '\x7f')).size(), 43u);
}

TEST(Base64, DecodeRejectsGarbageWithTheOffendingOffset) {
  struct Bad {
    const char* text;
    std::size_t byte;
  };
  const Bad bad[] = {
      {"Zm9v!mFy", 4},     // not in the alphabet
      {"Zm9vYmFy\n", 8},   // trailing newline
      {"Zm9v\nYmFy", 4},   // embedded newline
      {" Zm9v", 0},        // whitespace
      {"Zm9vY", 4},        // truncated: 5 characters
      {"Zg=", 2},          // padding incomplete
      {"Zg", 2},           // padding missing
      {"Zm9v\xff", 4},     // high byte
      {"Z===", 1},         // too much padding
      {"====", 0},         // only padding
      {"Zg==Zg==", 2},     // padding in the middle
      {"Zm9=v", 3},        // '=' then data
      {"Zm=v", 2},         // '=' then data
      {"Zm9vYg=\xff", 6},  // '=' before the end
  };
  for (const auto& b : bad) {
    auto r = base64_decode(b.text);
    ASSERT_FALSE(r) << b.text;
    EXPECT_EQ(r.error().message, "illegal base64 data at input byte " + std::to_string(b.byte)) << b.text;
  }
  EXPECT_FALSE(base64_decode(std::string_view("Zm9v\0\0\0\0", 8)));
}

TEST(Base64, UrlDecodeRejectsPaddingAndImpossibleLengths) {
  EXPECT_FALSE(base64url_decode("Zg=="));
  EXPECT_FALSE(base64url_decode("Zm8="));
  EXPECT_FALSE(base64url_decode("Z"));      // 6 bits cannot make a byte
  EXPECT_FALSE(base64url_decode("Zm9vY"));  // same in the last quantum
  EXPECT_FALSE(base64url_decode("Zm9v\n"));
}

TEST(Base64, IgnoresUnusedTrailingBitsLikeGo) {
  // "Zh==" has non-zero bits after the byte 'f'; Go's StdEncoding (non-strict) decodes it to "f".
  auto r = base64_decode("Zh==");
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, "f");
}

}  // namespace
}  // namespace kubex::common
