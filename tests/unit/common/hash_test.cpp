#include "common/hash.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

namespace kubex::common {
namespace {

TEST(Hash, Sha256KnownVectors) {
  // FIPS 180-2 examples.
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string_view("a\0b", 3)), sha256_hex(std::string("a\0b", 3)));
  EXPECT_NE(sha256_hex(std::string_view("a\0b", 3)), sha256_hex("a"));
}

TEST(Hash, RandomHexHasTheRequestedLengthAndAlphabet) {
  EXPECT_EQ(random_hex(0), "");
  std::string h = random_hex(16);
  ASSERT_EQ(h.size(), 32u);
  EXPECT_EQ(h.find_first_not_of("0123456789abcdef"), std::string::npos) << h;
  EXPECT_NE(random_hex(16), random_hex(16));
  EXPECT_EQ(random_bytes(33).size(), 33u);
  EXPECT_NE(random_bytes(16), random_bytes(16));
}

TEST(Hash, RandomAlnumUsesTheGenerateNameAlphabetUniformly) {
  const std::string alphabet = "bcdfghjklmnpqrstvwxz2456789";
  EXPECT_EQ(random_alnum(0), "");
  EXPECT_EQ(random_alnum(5).size(), 5u);
  std::string s = random_alnum(27000);
  ASSERT_EQ(s.size(), 27000u);
  std::map<char, int> counts;
  for (char c : s) {
    ASSERT_NE(alphabet.find(c), std::string::npos) << c;
    ++counts[c];
  }
  // Every character appears; expected 1000 each, a 6-sigma band is ~810..1190.
  ASSERT_EQ(counts.size(), alphabet.size());
  for (auto [c, n] : counts) {
    EXPECT_GT(n, 800) << c;
    EXPECT_LT(n, 1200) << c;
  }
  std::set<std::string> suffixes;
  for (int i = 0; i < 100; ++i) suffixes.insert(random_alnum(5));
  EXPECT_GT(suffixes.size(), 95u);
}

}  // namespace
}  // namespace kubex::common

TEST(Hash, RandomUuidIsVersion4AndUnique) {
  std::string a = kubex::common::random_uuid(), b = kubex::common::random_uuid();
  ASSERT_EQ(a.size(), 36u);
  EXPECT_EQ(a[8], '-');
  EXPECT_EQ(a[14], '4');
  EXPECT_TRUE(a[19] == '8' || a[19] == '9' || a[19] == 'a' || a[19] == 'b');
  EXPECT_NE(a, b);
}
