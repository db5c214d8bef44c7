#include "sim/apiserver/field_selector.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

using namespace kubex::sim;

namespace {

FieldSelector sel(std::string_view s) {
  auto r = FieldSelector::parse(s);
  EXPECT_TRUE(r.has_value()) << s << ": " << (r ? "" : r.error().str());
  return r.value_or(FieldSelector());
}

FieldSelector::Getter getter(std::map<std::string, std::string> fields) {
  return [fields = std::move(fields)](std::string_view f) -> std::optional<std::string> {
    auto it = fields.find(std::string(f));
    if (it == fields.end()) return std::nullopt;
    return it->second;
  };
}

}  // namespace

TEST(FieldSelector, ParsesTermsAndOperators) {
  auto s = sel("metadata.name=x,metadata.namespace==y,spec.nodeName!=,status.phase=Running");
  ASSERT_EQ(s.requirements().size(), 4u);
  // Sorted by term text, like Kubernetes.
  EXPECT_EQ(s.requirements()[0], (FieldRequirement{"metadata.name", FieldOperator::Equals, "x"}));
  EXPECT_EQ(s.requirements()[1], (FieldRequirement{"metadata.namespace", FieldOperator::Equals, "y"}));
  EXPECT_EQ(s.requirements()[2], (FieldRequirement{"spec.nodeName", FieldOperator::NotEquals, ""}));
  EXPECT_EQ(s.requirements()[3], (FieldRequirement{"status.phase", FieldOperator::Equals, "Running"}));
  EXPECT_EQ(s.str(), "metadata.name=x,metadata.namespace=y,spec.nodeName!=,status.phase=Running");
  EXPECT_EQ(s.fields(), (std::vector<std::string>{"metadata.name", "metadata.namespace", "spec.nodeName",
                                                  "status.phase"}));
  EXPECT_EQ(sel("b=1,a=2").str(), "a=2,b=1");
  EXPECT_EQ(sel("a=1,a!=2").fields(), (std::vector<std::string>{"a"}));
}

TEST(FieldSelector, EmptyMeansEverything) {
  EXPECT_TRUE(sel("").empty());
  EXPECT_TRUE(sel(",,").empty());
  EXPECT_TRUE(sel("").matches(getter({})));
  EXPECT_TRUE(FieldSelector().matches(nullptr));
  EXPECT_EQ(sel(",a=b,").str(), "a=b");
}

TEST(FieldSelector, UnescapesValues) {
  auto s = sel(R"(metadata.name=a\,b\=c\\d)");
  ASSERT_EQ(s.requirements().size(), 1u);
  EXPECT_EQ(s.requirements()[0].value, R"(a,b=c\d)");
  EXPECT_EQ(s.str(), R"(metadata.name=a\,b\=c\\d)");
  EXPECT_TRUE(s.matches(getter({{"metadata.name", R"(a,b=c\d)"}})));
  EXPECT_EQ(escape_field_value(R"(x=y,z\)"), R"(x\=y\,z\\)");
  // A field name is taken verbatim (spaces included) so callers can reject it.
  EXPECT_EQ(sel("metadata.name = x").fields(), (std::vector<std::string>{"metadata.name "}));
  EXPECT_EQ(sel(R"(a=b\=c)").requirements().at(0).value, "b=c");
}

TEST(FieldSelector, RejectsMalformed) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"x", "invalid selector: 'x'; can't understand 'x'"},
      {"x=a,y", "invalid selector: 'x=a,y'; can't understand 'y'"},
      {"x=a||y=b", "invalid field selector: unescaped character in value: '='"},
      {"x==a==b", "invalid field selector: unescaped character in value: '='"},
      {R"(x=a\b)", R"(invalid field selector: invalid escape sequence: \b)"},
      {"x=a\\", R"(invalid field selector: invalid escape sequence: \)"},
      {"x=a\\\xC3\xA9", "invalid field selector: invalid escape sequence: \\\xC3\xA9"},
  };
  for (const auto& [in, message] : cases) {
    auto r = FieldSelector::parse(in);
    ASSERT_FALSE(r.has_value()) << in;
    EXPECT_EQ(r.error().message, message) << in;
  }
}

TEST(FieldSelector, Matches) {
  auto pod =
      getter({{"metadata.name", "web-0"}, {"metadata.namespace", "prod"}, {"status.phase", "Running"}});
  EXPECT_TRUE(sel("metadata.name=web-0").matches(pod));
  EXPECT_TRUE(sel("metadata.name==web-0,metadata.namespace=prod").matches(pod));
  EXPECT_FALSE(sel("metadata.name=web-1").matches(pod));
  EXPECT_TRUE(sel("status.phase!=Pending").matches(pod));
  EXPECT_FALSE(sel("status.phase!=Running").matches(pod));
  // A missing field compares as "".
  EXPECT_TRUE(sel("spec.nodeName=").matches(pod));
  EXPECT_FALSE(sel("spec.nodeName!=").matches(pod));
  EXPECT_TRUE(sel("spec.nodeName!=node-1").matches(pod));
  EXPECT_FALSE(sel("spec.nodeName=node-1").matches(pod));
  EXPECT_FALSE(sel("metadata.name=web-0,status.phase=Pending").matches(pod));
}

TEST(FieldSelector, RequiresExactMatch) {
  auto s = sel("spec.nodeName=node-1,metadata.name!=x");
  EXPECT_EQ(s.requires_exact_match("spec.nodeName"), "node-1");
  EXPECT_EQ(s.requires_exact_match("metadata.name"), std::nullopt);
  EXPECT_EQ(s.requires_exact_match("status.phase"), std::nullopt);
}

TEST(FieldSelector, NeverCrashesOnGarbage) {
  std::mt19937 rng(5);
  const std::string alphabet = "ab.=!,\\ x";
  for (int i = 0; i < 30000; ++i) {
    std::string s;
    std::size_t len = rng() % 14;
    for (std::size_t j = 0; j < len; ++j) s += alphabet[rng() % alphabet.size()];
    auto r = FieldSelector::parse(s);
    if (r) {
      auto again = FieldSelector::parse(r->str());
      ASSERT_TRUE(again.has_value()) << s << " -> " << r->str();
      EXPECT_EQ(again->requirements(), r->requirements()) << s;
      (void)r->matches(getter({{"a", "b"}}));
    } else {
      EXPECT_FALSE(r.error().message.empty());
    }
  }
}
