#include "common/time_format.h"

#include <gtest/gtest.h>

using namespace kubex::common;

TEST(TimeFormat, RoundTripsSecondsAndFractions) {
  auto t = parse_rfc3339("2026-11-29T22:24:48Z");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(format_rfc3339(*t), "2026-11-29T22:24:48Z");
  auto m = parse_rfc3339("2026-11-29T22:24:48.123456Z");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(format_rfc3339_micro(*m), "2026-11-29T22:24:48.123456Z");
  EXPECT_EQ(format_rfc3339_milli(*m), "2026-11-29T22:24:48.123Z");
}

TEST(TimeFormat, AppliesOffsets) {
  auto a = parse_rfc3339("2026-11-29T23:24:48+01:00");
  auto b = parse_rfc3339("2026-11-29T22:24:48Z");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*a, *b);
}

TEST(TimeFormat, RejectsGarbageWithMessage) {
  for (const char* bad : {"", "yesterday", "2026-13-01T00:00:00Z", "2026-11-29T22:24:48", "2026-11-29T22:24:48Zjunk"}) {
    auto r = parse_rfc3339(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_NE(r.error().message.find("invalid RFC3339 time"), std::string::npos);
  }
}
