#include "common/duration.h"

#include <gtest/gtest.h>

#include <chrono>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace kubex::common;
using namespace std::chrono;

namespace {

constexpr auto kMax = nanoseconds(std::numeric_limits<std::int64_t>::max());
constexpr auto kMin = nanoseconds(std::numeric_limits<std::int64_t>::min());

}  // namespace

// GPU-4: the spellings specs use.
TEST(GoDuration, ParsesSpecSpellings) {
  EXPECT_EQ(parse_go_duration("90s").value(), seconds(90));    // GPU-4
  EXPECT_EQ(parse_go_duration("1m30s").value(), seconds(90));  // GPU-4
  EXPECT_EQ(parse_go_duration("1h").value(), hours(1));        // GPU-4
  EXPECT_EQ(parse_go_duration("10m").value(), minutes(10));
}

TEST(GoDuration, ParsesGoGrammar) {
  const std::vector<std::pair<const char*, nanoseconds>> cases = {
      {"0", nanoseconds(0)},
      {"-0", nanoseconds(0)},
      {"+0", nanoseconds(0)},
      {"1.5h", minutes(90)},
      {"300ms", milliseconds(300)},
      {"2h45m", hours(2) + minutes(45)},
      {"1us", microseconds(1)},
      {"1\xC2\xB5s", microseconds(1)},    // µs, U+00B5
      {"12\xCE\xBCs", microseconds(12)},  // μs, U+03BC
      {"1ns", nanoseconds(1)},
      {"-1m", -minutes(1)},
      {"+5s", seconds(5)},
      {"5.0s", seconds(5)},
      {"5.6s", seconds(5) + milliseconds(600)},
      {"5.s", seconds(5)},
      {".5s", milliseconds(500)},
      {"1.004s", seconds(1) + milliseconds(4)},
      {"100.00100s", seconds(100) + milliseconds(1)},
      {"10.5s4m", minutes(4) + seconds(10) + milliseconds(500)},
      {"1m1h", minutes(61)},
      {"-2m3.4s", -(minutes(2) + seconds(3) + milliseconds(400))},
      {"1h2m3s4ms5us6ns",
       hours(1) + minutes(2) + seconds(3) + milliseconds(4) + microseconds(5) + nanoseconds(6)},
      {"39h9m14.425s", hours(39) + minutes(9) + seconds(14) + milliseconds(425)},
      {"52763797000ns", nanoseconds(52763797000)},
      {"0.3333333333333333333h", minutes(20)},
      {"9007199254740993ns", nanoseconds((std::int64_t{1} << 53) + 1)},
      {"0.100000000000000000000h", minutes(6)},
      {"0.830103483285477580700h", minutes(49) + seconds(48) + nanoseconds(372539827)},
      {"9223372036854775807ns", kMax},
      {"9223372036854775.807us", kMax},
      {"9223372036s854ms775us807ns", kMax},
      {"-9223372036854775808ns", kMin},
      {"-9223372036854775.808us", kMin},
      {"-2562047h47m16.854775808s", kMin},
      {"1.0000000001s", seconds(1)},
      {"00001s", seconds(1)},
  };
  for (const auto& [in, want] : cases) {
    auto r = parse_go_duration(in);
    ASSERT_TRUE(r.has_value()) << in << ": " << r.error().str();
    EXPECT_EQ(r->count(), want.count()) << in;
  }
}

TEST(GoDuration, RejectsWhatGoRejects) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "time: invalid duration \"\""},
      {"5", "time: missing unit in duration \"5\""},
      {"3.5", "time: missing unit in duration \"3.5\""},
      {"1d", "time: unknown unit \"d\" in duration \"1d\""},
      {"m", "time: invalid duration \"m\""},
      {"1.5.3s", "time: missing unit in duration \"1.5.3s\""},
      {"1h-1m", "time: unknown unit \"h-\" in duration \"1h-1m\""},
      {"-", "time: invalid duration \"-\""},
      {"s", "time: invalid duration \"s\""},
      {".", "time: invalid duration \".\""},
      {"-.", "time: invalid duration \"-.\""},
      {".s", "time: invalid duration \".s\""},
      {"+.s", "time: invalid duration \"+.s\""},
      {"--1s", "time: invalid duration \"--1s\""},
      {" 1s", "time: invalid duration \" 1s\""},
      {"1s ", "time: unknown unit \"s \" in duration \"1s \""},
      {"1S", "time: unknown unit \"S\" in duration \"1S\""},
      {"1sec", "time: unknown unit \"sec\" in duration \"1sec\""},
      {"9223372036854775808ns", "time: invalid duration \"9223372036854775808ns\""},
      {"9223372036854775.808us", "time: invalid duration \"9223372036854775.808us\""},
      {"9223372036854ms775us808ns", "time: invalid duration \"9223372036854ms775us808ns\""},
      {"-9223372036854775809ns", "time: invalid duration \"-9223372036854775809ns\""},
      {"99999999999999999999h", "time: invalid duration \"99999999999999999999h\""},
      {"3000000h", "time: invalid duration \"3000000h\""},
      {"\x85\x85", "time: invalid duration \"\x85\x85\""},
      {"1\n", "time: unknown unit \"\\x0a\" in duration \"1\\x0a\""},
  };
  for (const auto& [in, message] : cases) {
    auto r = parse_go_duration(in);
    ASSERT_FALSE(r.has_value()) << in;
    EXPECT_EQ(r.error().message, message);
  }
}

TEST(GoDuration, FormatsLikeGo) {
  const std::vector<std::pair<nanoseconds, const char*>> cases = {
      {nanoseconds(0), "0s"},
      {nanoseconds(1), "1ns"},
      {nanoseconds(1100), "1.1\xC2\xB5s"},
      {nanoseconds(1500), "1.5\xC2\xB5s"},
      {microseconds(2200), "2.2ms"},
      {milliseconds(500), "500ms"},
      {milliseconds(3300), "3.3s"},
      {seconds(90), "1m30s"},
      {hours(1), "1h0m0s"},
      {minutes(10), "10m0s"},
      {-minutes(1), "-1m0s"},
      {minutes(4) + seconds(5), "4m5s"},
      {minutes(4) + seconds(5) + milliseconds(1), "4m5.001s"},
      {hours(5) + minutes(6) + seconds(7) + milliseconds(1), "5h6m7.001s"},
      {minutes(8) + nanoseconds(1), "8m0.000000001s"},
      {hours(26), "26h0m0s"},
      {kMax, "2562047h47m16.854775807s"},
      {kMin, "-2562047h47m16.854775808s"},
      {-nanoseconds(1), "-1ns"},
      {seconds(1), "1s"},
  };
  for (const auto& [d, want] : cases) EXPECT_EQ(format_go_duration(d), want) << d.count();
}

TEST(GoDuration, FormatParsesBack) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 5000; ++i) {
    auto n = static_cast<std::int64_t>(rng());
    if (i % 3 == 0) n %= 10'000'000'000;
    auto d = nanoseconds(n);
    auto back = parse_go_duration(format_go_duration(d));
    ASSERT_TRUE(back.has_value()) << format_go_duration(d);
    EXPECT_EQ(back->count(), n) << format_go_duration(d);
  }
}

TEST(GoDuration, NeverCrashesOnGarbage) {
  std::mt19937 rng(99);
  const std::string alphabet = "0123456789.+-hmsunµ \xce\xbc";
  for (int i = 0; i < 20000; ++i) {
    std::string s;
    std::size_t len = rng() % 10;
    for (std::size_t j = 0; j < len; ++j) s += alphabet[rng() % alphabet.size()];
    auto r = parse_go_duration(s);
    if (!r) {
      EXPECT_EQ(r.error().message.rfind("time: ", 0), 0u) << s;
    }
  }
  EXPECT_FALSE(parse_go_duration(std::string(100000, '9') + "s").has_value());
  EXPECT_EQ(parse_go_duration("0." + std::string(100000, '0') + "1s").value(), nanoseconds(0));
}
