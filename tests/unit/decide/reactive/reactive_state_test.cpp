// The reactive-state annotation and the owner's desired-resource-requests value (SPEC §2, VAL-7).
#include <gtest/gtest.h>

#include "decide/reactive/reactive.h"
#include "reactive_fixtures.h"

namespace kubex::decide::reactive::test {
namespace {

// SPEC §2: {"baseline":{"app":"0.25"},"driver":"compute|memory","updatedAt":"<RFC3339>"}, sorted, GPU-2.
TEST(ReactiveState, FormatAndParseRoundTrip) {
  const State s{{{"b", 70}, {"a", 25}, {"c", 224}}, "memory", "2026-12-01T10:00:00Z"};
  const std::string text = format_state(s);
  EXPECT_EQ(text,
            R"({"baseline":{"a":"0.25","b":"0.7","c":"2.24"},"driver":"memory",)"
            R"("updatedAt":"2026-12-01T10:00:00Z"})");
  auto back = parse_state(text);
  ASSERT_TRUE(back) << back.error().str();
  EXPECT_EQ(*back, s);
  EXPECT_EQ(format_state(State{}), R"({"baseline":{}})");
  ASSERT_TRUE(parse_state(R"({"baseline":{}})"));
  EXPECT_EQ(*parse_state(R"({"baseline":{}})"), State{});
}

TEST(ReactiveState, ParseAccepts) {
  auto s = parse_state(R"({"baseline":{"app":0.25,"x":"1"},"driver":"compute",)"
                       R"("updatedAt":"2026-12-01T10:00:00+01:00","extra":1})");
  ASSERT_TRUE(s) << s.error().str();
  EXPECT_EQ(s->baseline, (std::map<std::string, Hundredths>{{"app", 25}, {"x", 100}}));
  EXPECT_EQ(s->driver, "compute");
  s = parse_state(R"({"baseline":{"app":"0.255"}})");  // GPU-2: rounded up
  ASSERT_TRUE(s);
  EXPECT_EQ(s->baseline.at("app"), 26);
  EXPECT_EQ(s->driver, "");
  EXPECT_EQ(s->updated_at, "");
  ASSERT_TRUE(parse_state("{}"));
}

// VAL-7: an invalid reactive-state is an error (the caller resets it).
TEST(ReactiveState, ParseRejects) {
  for (const char* bad : {"", "not json", "[]", "\"x\"", R"({"baseline":[]})",
                          R"({"baseline":{"app":"half"}})", R"({"baseline":{"app":0}})",
                          R"({"baseline":{"app":"-1"}})", R"({"baseline":{"app":null}})",
                          R"({"driver":"cpu"})", R"({"driver":1})", R"({"updatedAt":"yesterday"})",
                          R"({"updatedAt":5})", R"({"baseline":{"app":"0.25"})"}) {
    EXPECT_FALSE(parse_state(bad)) << bad;
  }
}

// SPEC §2 desired-resource-requests: {"<c>":{"gpu":"<GPU-2>"}} with sorted keys.
TEST(ReactiveRequests, FormatAndParseRoundTrip) {
  const std::map<std::string, Hundredths> m = {{"y", 112}, {"x", 224}, {"a", 1}, {"b", 70}, {"c", 100}};
  const std::string text = format_requests(m);
  EXPECT_EQ(text, R"({"a":{"gpu":"0.01"},"b":{"gpu":"0.7"},"c":{"gpu":"1"},)"
                  R"("x":{"gpu":"2.24"},"y":{"gpu":"1.12"}})");
  auto back = parse_requests(text);
  ASSERT_TRUE(back) << back.error().str();
  EXPECT_EQ(*back, m);
  EXPECT_EQ(format_requests({}), "{}");
}

// Only gpu entries are read; unreadable entries are skipped; a document that is not an object is an error.
TEST(ReactiveRequests, Parse) {
  auto r = parse_requests(
      R"({"app":{"gpu":"0.48","cpu":"200m"},"side":{"cpu":"1"},"bad":{"gpu":"x"},"n":{"gpu":0.3},"s":"1"})");
  ASSERT_TRUE(r) << r.error().str();
  EXPECT_EQ(*r, (std::map<std::string, Hundredths>{{"app", 48}, {"n", 30}}));
  for (const char* bad : {"", "[", "[]", "null", "1", "\"{}\""}) {
    EXPECT_FALSE(parse_requests(bad)) << bad;  // VAL-7
  }
}

}  // namespace
}  // namespace kubex::decide::reactive::test
