#include "common/wildcard.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

using namespace kubex::common;

namespace {

// Straightforward dynamic-programming reference matcher, used to cross-check the fast one.
bool reference_match(std::string_view p, std::string_view t) {
  std::vector<std::vector<bool>> m(p.size() + 1, std::vector<bool>(t.size() + 1, false));
  m[0][0] = true;
  for (std::size_t i = 1; i <= p.size(); ++i) {
    for (std::size_t j = 0; j <= t.size(); ++j) {
      if (p[i - 1] == '*') {
        m[i][j] = m[i - 1][j] || (j > 0 && m[i][j - 1]);
      } else {
        m[i][j] = j > 0 && m[i - 1][j - 1] && p[i - 1] == t[j - 1];
      }
    }
  }
  return m[p.size()][t.size()];
}

}  // namespace

// SEL-3: `*` matches any run of characters, including an empty one.
TEST(Wildcard, StarMatchesAnyRunIncludingEmpty) {
  EXPECT_TRUE(wildcard_match("*", ""));          // SEL-3
  EXPECT_TRUE(wildcard_match("*", "anything"));  // SEL-3
  EXPECT_TRUE(wildcard_match("team-*", "team-"));
  EXPECT_TRUE(wildcard_match("team-*", "team-a"));
  EXPECT_TRUE(wildcard_match("*-prod", "payments-prod"));
  EXPECT_TRUE(wildcard_match("a*b", "ab"));
  EXPECT_TRUE(wildcard_match("a*b*c", "a-b-c"));
  EXPECT_TRUE(wildcard_match("**", "x"));
  EXPECT_TRUE(wildcard_match("gpu-*-a100", "gpu-pool-a100"));
  EXPECT_FALSE(wildcard_match("team-*", "team"));
  EXPECT_FALSE(wildcard_match("*-prod", "prod"));
  EXPECT_FALSE(wildcard_match("a*b*c", "acb"));
  EXPECT_FALSE(wildcard_match("aa*aa", "aaa"));  // prefix and suffix may not overlap
  EXPECT_TRUE(wildcard_match("aa*aa", "aaaa"));
}

// SEL-3: everything except `*` is literal.
TEST(Wildcard, EverythingElseIsLiteral) {
  EXPECT_TRUE(wildcard_match("prod", "prod"));
  EXPECT_FALSE(wildcard_match("prod", "production"));
  EXPECT_FALSE(wildcard_match("prod", "Prod"));
  EXPECT_FALSE(wildcard_match("p?od", "prod"));
  EXPECT_TRUE(wildcard_match("p?od", "p?od"));
  EXPECT_FALSE(wildcard_match("[a]", "a"));
  EXPECT_TRUE(wildcard_match("a.b", "a.b"));
  EXPECT_FALSE(wildcard_match("a.b", "axb"));
  EXPECT_TRUE(wildcard_match("", ""));
  EXPECT_FALSE(wildcard_match("", "a"));
  EXPECT_TRUE(has_wildcard("a*"));
  EXPECT_FALSE(has_wildcard("a?"));
}

TEST(Wildcard, AgreesWithReferenceMatcher) {
  std::mt19937 rng(42);
  for (int i = 0; i < 50000; ++i) {
    std::string p, t;
    std::size_t plen = rng() % 7, tlen = rng() % 9;
    for (std::size_t j = 0; j < plen; ++j) p += "ab*"[rng() % 3];
    for (std::size_t j = 0; j < tlen; ++j) t += "ab"[rng() % 2];
    ASSERT_EQ(wildcard_match(p, t), reference_match(p, t)) << "pattern=" << p << " text=" << t;
  }
}

// SEL-3: linear time, no backtracking blow-up. (Correctness is asserted; speed shows up as a test
// timeout if the matcher ever regresses to exponential or quadratic behaviour.)
TEST(Wildcard, PathologicalPatternsStayFast) {
  std::string text(1'000'000, 'a');
  EXPECT_FALSE(wildcard_match("*a*a*a*a*a*b", text));
  EXPECT_TRUE(wildcard_match("*a*a*a*a*a*a", text));
  std::string pattern;
  for (int i = 0; i < 1000; ++i) pattern += "*a";
  pattern += "*b";
  EXPECT_FALSE(wildcard_match(pattern, text));
  std::string long_piece = "*" + std::string(5000, 'a') + "b*";
  EXPECT_FALSE(wildcard_match(long_piece, text));
  EXPECT_TRUE(wildcard_match(long_piece, text + "b"));
}
