// The fast JSON parser the admission webhook decodes reviews with (common/json_parse.h) accepts exactly what
// nlohmann::json::parse accepts and builds the same value, so VAL-9's answers do not change with it.
#include "common/json_parse.h"

#include "kubex_paths.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace kubex::common {
namespace {

using nlohmann::json;

// Same acceptance and, when accepted, the same value and the same types (dump() tells unsigned from signed
// from float).
void expect_same(const std::string& text) {
  json reference;
  bool nlohmann_ok = true;
  try {
    reference = json::parse(text);
  } catch (const json::exception&) {
    nlohmann_ok = false;
  }
  json fast;
  bool fast_ok = parse_json_fast(text, fast);
  if (fast_ok) {
    EXPECT_TRUE(nlohmann_ok) << "accepted what nlohmann refuses: " << text;
    EXPECT_EQ(fast, reference) << text;
    EXPECT_EQ(fast.dump(), reference.dump()) << text;
  }
}

TEST(JsonParseFast, AcceptsAndBuildsWhatNlohmannDoes) {
  const std::vector<std::string> accepted = {
      "{}",
      "[]",
      " \t\r\n{ \"a\" : [ 1 , -2 , 3.5 , -0 , 0.0 , 1e3 , 1E-2 , -1.5e+2 ] } \n",
      "\"\"",
      "true",
      "false",
      "null",
      "0",
      "-0",
      "18446744073709551615",
      "-9223372036854775808",
      R"({"a":1,"a":2})",  // the last duplicate wins
      R"("\"\\\/\b\f\n\r\t")",
      R"("\u0041\u00e9\u20AC\ud83d\ude00")",
      R"("\u0000")",
      "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"",
      "\xEF\xBB\xBF{\"bom\":true}",
      R"({"nested":{"deeper":[{"x":[[]]}]}})",
      "\"\x7f\"",
  };
  for (const auto& text : accepted) {
    json fast;
    EXPECT_TRUE(parse_json_fast(text, fast)) << text;
    expect_same(text);
  }
  json dup;
  ASSERT_TRUE(parse_json_fast(R"({"a":1,"a":2})", dup));
  EXPECT_EQ(dup["a"], 2);
}

TEST(JsonParseFast, RefusesWhatNlohmannRefuses) {
  const std::vector<std::string> refused = {
      "",
      " ",
      "{",
      "[1,]",
      "{\"a\":1,}",
      "{a:1}",
      "'a'",
      "01",
      "1.",
      ".5",
      "+1",
      "-",
      "1e",
      "1e+",
      "tru",
      "nul",
      "[1 2]",
      "{\"a\" 1}",
      "\"abc",
      "\"a\x01\"",
      "\"\\x\"",
      "\"\\u12\"",
      "\"\\ud800\"",
      "\"\\ud800\\u0041\"",
      "\"\\udc00\"",
      "\"\xc3\"",
      "\"\xc0\xaf\"",
      "\"\xed\xa0\x80\"",
      "\"\xf4\x90\x80\x80\"",
      "\"\xff\"",
      "{} {}",
      "[1]x",
      std::string("[1,\0]", 5),
      "NaN",
      "Infinity",
      "/* c */ {}",
  };
  for (const auto& text : refused) {
    json fast;
    EXPECT_FALSE(parse_json_fast(text, fast)) << text;
    EXPECT_THROW({ json j = json::parse(text); }, json::exception) << text;
  }
}

// Beyond its range it says false, so the caller's nlohmann parse decides (and the value never differs).
TEST(JsonParseFast, LeavesOutOfRangeNumbersAndDeepNestingToNlohmann) {
  json out;
  EXPECT_FALSE(parse_json_fast("18446744073709551616", out));  // nlohmann: a double
  EXPECT_FALSE(parse_json_fast("-9223372036854775809", out));
  EXPECT_FALSE(parse_json_fast("1e999", out));
  EXPECT_FALSE(parse_json_fast(std::string(600, '[') + std::string(600, ']'), out));
  EXPECT_TRUE(parse_json_fast(std::string(100, '[') + std::string(100, ']'), out));
  for (const char* text :
       {"18446744073709551616", "-9223372036854775809", "1e999", "4.9e-324", "2.2250738585072014e-308"}) {
    expect_same(text);
  }
}

TEST(JsonParseFast, RealObjectsParseTheSame) {
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(kubex_paths::source_dir()) +
                                                           "/tests/unit/sim/apiserver/testdata/protobuf")) {
    if (e.path().extension() != ".json") continue;
    std::ifstream f(e.path());
    std::stringstream ss;
    ss << f.rdbuf();
    json out;
    EXPECT_TRUE(parse_json_fast(ss.str(), out)) << e.path();
    expect_same(ss.str());
    ++files;
  }
  EXPECT_GT(files, 5);
  // A document with every kind of value at once, big enough to exercise the string runs.
  json big = json::object();
  for (int i = 0; i < 200; ++i) {
    big["key-" + std::to_string(i)] = {{"s", std::string(i, 'x') + "\xc3\xa9\"\\"},
                                       {"n", i * 1.25},
                                       {"i", -i},
                                       {"u", static_cast<unsigned>(i)},
                                       {"b", i % 2 == 0},
                                       {"z", nullptr},
                                       {"a", json::array({i, "x", json::object()})}};
  }
  expect_same(big.dump());
  expect_same(big.dump(2));
}

}  // namespace
}  // namespace kubex::common
