#include "common/label_selector.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

using namespace kubex::common;
using nlohmann::json;
using Labels = std::map<std::string, std::string>;

namespace {

LabelSelector sel(std::string_view s, LabelSelector::Options options = {}) {
  auto r = LabelSelector::parse(s, options);
  EXPECT_TRUE(r.has_value()) << s << ": " << (r ? "" : r.error().str());
  return r.value_or(LabelSelector());
}

LabelSelector from(const json& j, LabelSelector::Options options = {}) {
  auto r = LabelSelector::from_json(j, "spec.nodeSelector", options);
  EXPECT_TRUE(r.has_value()) << j.dump() << ": " << (r ? "" : r.error().str());
  return r.value_or(LabelSelector());
}

std::vector<std::string> error_strings(const Errors& errors) {
  std::vector<std::string> out;
  for (const auto& e : errors.items()) out.push_back(e.str());
  return out;
}

}  // namespace

TEST(LabelSelectorParse, AcceptsEveryOperator) {
  EXPECT_EQ(sel("a=b").str(), "a=b");
  EXPECT_EQ(sel("a==b").str(), "a==b");
  EXPECT_EQ(sel("a!=b").str(), "a!=b");
  EXPECT_EQ(sel("a in (x,y)").str(), "a in (x,y)");
  EXPECT_EQ(sel("a notin (x)").str(), "a notin (x)");
  EXPECT_EQ(sel("a").str(), "a");
  EXPECT_EQ(sel("!a").str(), "!a");
  EXPECT_EQ(sel("a>1").str(), "a>1");
  EXPECT_EQ(sel("a<5").str(), "a<5");
  EXPECT_FALSE(LabelSelector::parse("a<-1").has_value());  // "-1" is not a valid label value
  EXPECT_EQ(sel("a=").str(), "a=");
  EXPECT_EQ(sel("a!=").str(), "a!=");
  auto r = sel("a in (y,x)").requirements();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].key, "a");
  EXPECT_EQ(r[0].op, LabelOperator::In);
  EXPECT_EQ(r[0].values, (std::vector<std::string>{"x", "y"}));
}

TEST(LabelSelectorParse, JoinsSortsAndToleratesWhitespace) {
  EXPECT_EQ(sel("  b = 2 ,  a in ( y , x , y ) ,!c,  d  ").str(), "a in (x,y),b=2,!c,d");
  EXPECT_EQ(sel("x in (foo,,baz),y,z notin ()").str(), "x in (,baz,foo),y,z notin ()");
  EXPECT_EQ(sel("x in (,a)").str(), "x in (,a)");
  EXPECT_EQ(sel("x in (a,)").str(), "x in (,a)");
  EXPECT_EQ(sel("x in (in,notin)").str(), "x in (in,notin)");  // keywords are values inside ()
  EXPECT_EQ(sel("in=notin").str(), "in=notin");
  EXPECT_EQ(sel("app.kubernetes.io/name=web").str(), "app.kubernetes.io/name=web");
  EXPECT_EQ(sel("x=a\t,\ny=b\r").str(), "x=a,y=b");
  EXPECT_TRUE(sel("").empty());
  EXPECT_TRUE(sel("   ").empty());
  EXPECT_FALSE(sel("a").empty());
}

TEST(LabelSelectorParse, StrRoundTrips) {
  for (const char* s : {"a in (x,y),b!=c,!d,e", "x>3,y<4", "a==b", "k notin (,v)", "p.q/r=s"}) {
    auto once = sel(s);
    auto twice = sel(once.str());
    EXPECT_EQ(once.str(), twice.str()) << s;
    EXPECT_EQ(once.requirements(), twice.requirements()) << s;
  }
}

TEST(LabelSelectorParse, ErrorsNameTheOffendingToken) {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {"x in a)", "unable to parse requirement: found 'a', expected: '('"},
      {"x in (a", "unable to parse requirement: found end of string, expected: ',' or ')'"},
      {"x in (a b)", "unable to parse requirement: found 'b', expected: ',' or ')'"},
      {"x in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier"},
      {"x (a)", "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt"},
      {"x notin", "unable to parse requirement: found end of string, expected: '('"},
      {",x", "found ',', expected: !, identifier, or 'end of string'"},
      {"x,", "found end of string, expected: identifier after ','"},
      {"x=a,", "found end of string, expected: identifier after ','"},
      {"x=a,,y=b", "found ',', expected: identifier after ','"},
      {"!", "unable to parse requirement: found end of string, expected: identifier"},
      {"!x=a", "found '=', expected: ',' or 'end of string'"},
      {"x==a==b", "found '==', expected: ',' or 'end of string'"},
      {"x=a||y=b",
       "unable to parse requirement: invalid label value \"a||y\" for key \"x\": a valid label must be an "
       "empty "
       "string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
       "alphanumeric "
       "character"},
      {"a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"},
      {"a=b c", "found 'c', expected: ',' or 'end of string'"},
      {"=a", "found '=', expected: !, identifier, or 'end of string'"},
      {"x=(a)", "unable to parse requirement: found '(', expected: identifier"},
      {"x===a", "unable to parse requirement: found '=', expected: identifier"},
      {"x>a",
       "unable to parse requirement: invalid value \"a\" for key \"x\": for 'Gt', 'Lt' operators, the value "
       "must be an integer"},
      {"x<1.5",
       "unable to parse requirement: invalid value \"1.5\" for key \"x\": for 'Gt', 'Lt' operators, the "
       "value must be an integer"},
  };
  for (const auto& [in, message] : cases) {
    auto r = LabelSelector::parse(in);
    ASSERT_FALSE(r.has_value()) << in;
    EXPECT_EQ(r.error().message, message) << in;
  }
}

TEST(LabelSelectorParse, ValidatesKeysAndValues) {
  auto bad_key = LabelSelector::parse("a@b=c");
  ASSERT_FALSE(bad_key.has_value());
  EXPECT_NE(bad_key.error().message.find("invalid label key \"a@b\""), std::string::npos);
  auto bad_value = LabelSelector::parse("a=b@c");
  ASSERT_FALSE(bad_value.has_value());
  EXPECT_NE(bad_value.error().message.find("invalid label value \"b@c\" for key \"a\""), std::string::npos);
  auto bad_set_value = LabelSelector::parse("a in (ok,-bad)");
  ASSERT_FALSE(bad_set_value.has_value());
  EXPECT_NE(bad_set_value.error().message.find("\"-bad\""), std::string::npos);
  EXPECT_FALSE(LabelSelector::parse(std::string(64, 'k') + "=v").has_value());
  EXPECT_FALSE(LabelSelector::parse("k=" + std::string(64, 'v')).has_value());
  EXPECT_TRUE(LabelSelector::parse(std::string(63, 'k') + "=" + std::string(63, 'v')).has_value());
  // `*` is only allowed with the wildcard option, and only in set values.
  EXPECT_FALSE(LabelSelector::parse("pool in (gpu-*)").has_value());
  EXPECT_TRUE(LabelSelector::parse("pool in (gpu-*)", {.wildcard_values = true}).has_value());
  EXPECT_FALSE(LabelSelector::parse("pool=gpu-*", {.wildcard_values = true}).has_value());
}

TEST(LabelSelectorMatch, FollowsKubernetesSemantics) {
  const Labels xy = {{"x", "y"}};
  const Labels xz = {{"x", "z"}};
  const Labels none;
  EXPECT_TRUE(sel("x=y").matches(xy));
  EXPECT_FALSE(sel("x=y").matches(xz));
  EXPECT_FALSE(sel("x=y").matches(none));
  EXPECT_TRUE(sel("x==y").matches(xy));
  EXPECT_TRUE(sel("x!=y").matches(xz));
  EXPECT_TRUE(sel("x!=y").matches(none));  // absent counts as "not equal"
  EXPECT_FALSE(sel("x!=y").matches(xy));
  EXPECT_TRUE(sel("x in (y,w)").matches(xy));
  EXPECT_FALSE(sel("x in (w)").matches(xy));
  EXPECT_FALSE(sel("x in (y)").matches(none));
  EXPECT_TRUE(sel("x notin (w)").matches(xy));
  EXPECT_TRUE(sel("x notin (w)").matches(none));
  EXPECT_FALSE(sel("x notin (y)").matches(xy));
  EXPECT_TRUE(sel("x").matches(xy));
  EXPECT_FALSE(sel("x").matches(none));
  EXPECT_TRUE(sel("!x").matches(none));
  EXPECT_FALSE(sel("!x").matches(xy));
  EXPECT_TRUE(sel("x=").matches(Labels{{"x", ""}}));
  EXPECT_FALSE(sel("x=").matches(none));
  EXPECT_TRUE(sel("x in ()").matches(Labels{{"x", ""}}));
  EXPECT_TRUE(sel("n>1").matches(Labels{{"n", "2"}}));
  EXPECT_FALSE(sel("n>1").matches(Labels{{"n", "1"}}));
  EXPECT_FALSE(sel("n>1").matches(Labels{{"n", "two"}}));
  EXPECT_FALSE(sel("n>1").matches(none));
  EXPECT_TRUE(sel("n<1").matches(Labels{{"n", "-5"}}));
  EXPECT_TRUE(sel("x=y,!w").matches(xy));
  EXPECT_FALSE(sel("x=y,w").matches(xy));
  EXPECT_TRUE(LabelSelector().matches(none));
  EXPECT_TRUE(sel("").matches(xy));
  EXPECT_FALSE(sel("x=Y").matches(xy));  // case-sensitive
}

TEST(LabelSelectorMatch, JsonAndLookup) {
  auto s = sel("app=web,tier notin (db)");
  EXPECT_TRUE(s.matches_json(json{{"app", "web"}}));
  EXPECT_FALSE(s.matches_json(json{{"app", "web"}, {"tier", "db"}}));
  EXPECT_FALSE(s.matches_json(json(nullptr)));
  EXPECT_FALSE(s.matches_json(json{{"app", 1}}));  // non-string values count as absent
  EXPECT_TRUE(sel("!app").matches_json(json(nullptr)));
  EXPECT_TRUE(sel("!app").matches_json(json("not an object")));
  EXPECT_TRUE(LabelSelector().matches_json(json(nullptr)));
  EXPECT_TRUE(s.matches_lookup([](std::string_view key) -> std::optional<std::string_view> {
    if (key == "app") return "web";
    return std::nullopt;
  }));
  EXPECT_FALSE(s.matches_lookup(nullptr));
}

// CON-1 / SEL-3: with the wildcard option, `*` in In/NotIn values matches any run of characters.
TEST(LabelSelectorMatch, WildcardValues) {
  LabelSelector::Options wild{.wildcard_values = true};
  auto in = sel("pool in (gpu-*,cpu)", wild);
  EXPECT_TRUE(in.matches(Labels{{"pool", "gpu-a100"}}));  // CON-1
  EXPECT_TRUE(in.matches(Labels{{"pool", "gpu-"}}));      // SEL-3: empty run
  EXPECT_TRUE(in.matches(Labels{{"pool", "cpu"}}));
  EXPECT_FALSE(in.matches(Labels{{"pool", "gpu"}}));
  EXPECT_FALSE(in.matches(Labels{}));
  auto notin = sel("pool notin (*-spot)", wild);
  EXPECT_TRUE(notin.matches(Labels{{"pool", "gpu-ondemand"}}));
  EXPECT_FALSE(notin.matches(Labels{{"pool", "gpu-spot"}}));
  EXPECT_TRUE(notin.matches(Labels{}));
  // Without the option the same value is literal (and not even valid).
  auto literal =
      from(json{{"matchExpressions", {{{"key", "pool"}, {"operator", "In"}, {"values", {"gpu"}}}}}});
  EXPECT_FALSE(literal.matches(Labels{{"pool", "gpu-a100"}}));
  auto j = json{{"matchExpressions", {{{"key", "pool"}, {"operator", "In"}, {"values", {"gpu-*"}}}}}};
  EXPECT_TRUE(from(j, wild).matches(Labels{{"pool", "gpu-h100"}}));  // CON-1
  EXPECT_EQ(from(j, wild).str(), "pool in (gpu-*)");
  EXPECT_TRUE(from(j, wild).options().wildcard_values);
  auto no_wild = LabelSelector::from_json(j, "spec.nodeSelector");
  ASSERT_FALSE(no_wild.has_value());
  EXPECT_NE(no_wild.error().str().find(
                "spec.nodeSelector.matchExpressions[0].values[0]: invalid label value \"gpu-*\""),
            std::string::npos)
      << no_wild.error().str();
  auto bad_pattern = LabelSelector::from_json(
      json{{"matchExpressions", {{{"key", "pool"}, {"operator", "In"}, {"values", {"gpu *"}}}}}},
      "spec.nodeSelector", wild);
  ASSERT_FALSE(bad_pattern.has_value());
  EXPECT_NE(bad_pattern.error().str().find("wildcard value"), std::string::npos);
}

TEST(LabelSelectorJson, BuildsRequirements) {
  auto s = from(json{{"matchLabels", {{"app", "web"}, {"tier", "front"}}},
                     {"matchExpressions",
                      {{{"key", "zone"}, {"operator", "In"}, {"values", {"b", "a"}}},
                       {{"key", "env"}, {"operator", "NotIn"}, {"values", {"dev"}}},
                       {{"key", "gpu"}, {"operator", "Exists"}},
                       {{"key", "spot"}, {"operator", "DoesNotExist"}, {"values", json::array()}}}}});
  EXPECT_EQ(s.str(), "app=web,env notin (dev),gpu,!spot,tier=front,zone in (a,b)");
  EXPECT_TRUE(s.matches(Labels{{"app", "web"}, {"tier", "front"}, {"zone", "a"}, {"gpu", "1"}}));
  EXPECT_FALSE(
      s.matches(Labels{{"app", "web"}, {"tier", "front"}, {"zone", "a"}, {"gpu", "1"}, {"spot", ""}}));
  EXPECT_FALSE(s.matches(Labels{{"app", "web"}, {"tier", "front"}, {"zone", "c"}, {"gpu", "1"}}));
  // null, {} and null members all mean "match everything".
  EXPECT_TRUE(from(json(nullptr)).empty());
  EXPECT_TRUE(from(json(nullptr)).matches(Labels{{"a", "b"}}));
  EXPECT_TRUE(from(json::object()).empty());
  EXPECT_TRUE(from(json{{"matchLabels", nullptr}, {"matchExpressions", nullptr}}).empty());
  EXPECT_TRUE(from(json{{"unknownField", 1}}).empty());
}

// VAL-4: selector messages with exact field paths, every problem reported.
TEST(LabelSelectorJson, ReportsEveryProblemWithPaths) {
  auto r = LabelSelector::from_json(json::parse(R"({
    "matchExpressions": [
      {"key": "a", "operator": "In"},
      {"key": "b", "operator": "Exists", "values": ["x"]},
      {"key": "c", "operator": "Foo", "values": ["x"]},
      {"operator": "In", "values": ["x"]},
      {"key": "d", "operator": "NotIn", "values": []},
      {"key": "e", "operator": "DoesNotExist", "values": ["x"]},
      {"key": "f"},
      {"key": "", "operator": "Exists"}
    ]})"),
                                    "spec.nodeSelector");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(error_strings(r.error()),
            (std::vector<std::string>{
                "spec.nodeSelector.matchExpressions[0].values: required for operator In",           // VAL-4
                "spec.nodeSelector.matchExpressions[1].values: must be empty for operator Exists",  // VAL-4
                "spec.nodeSelector.matchExpressions[2].operator: unsupported value \"Foo\": supported "
                "values: \"In\", "
                "\"NotIn\", \"Exists\", \"DoesNotExist\"",
                "spec.nodeSelector.matchExpressions[3].key: required",
                "spec.nodeSelector.matchExpressions[4].values: required for operator NotIn",
                "spec.nodeSelector.matchExpressions[5].values: must be empty for operator DoesNotExist",
                "spec.nodeSelector.matchExpressions[6].operator: required",
                "spec.nodeSelector.matchExpressions[7].key: required",
            }));
}

TEST(LabelSelectorJson, ReportsSyntaxAndTypeProblems) {
  auto r = LabelSelector::from_json(json::parse(R"({
    "matchLabels": {"bad key": "v", "ok": "bad value", "n": 5},
    "matchExpressions": [
      {"key": "Example.com/x", "operator": "In", "values": ["ok", 3, "-no"]},
      {"key": 7, "operator": 8, "values": "x"},
      "not an object"
    ]})"),
                                    "spec.scope.labelSelector");
  ASSERT_FALSE(r.has_value());
  auto errs = error_strings(r.error());
  ASSERT_EQ(errs.size(), 10u) << r.error().str();
  EXPECT_EQ(
      errs[0].rfind(
          "spec.scope.labelSelector.matchLabels: invalid label key \"bad key\": name part must consist", 0),
      0u);
  EXPECT_EQ(errs[1], "spec.scope.labelSelector.matchLabels: value for key \"n\" must be a string");
  EXPECT_EQ(errs[2].rfind(
                "spec.scope.labelSelector.matchLabels: invalid label value \"bad value\" for key \"ok\"", 0),
            0u);
  EXPECT_EQ(
      errs[3].rfind("spec.scope.labelSelector.matchExpressions[0].key: invalid label key \"Example.com/x\": "
                    "prefix part",
                    0),
      0u);
  EXPECT_EQ(errs[4], "spec.scope.labelSelector.matchExpressions[0].values[1]: must be a string");
  EXPECT_EQ(
      errs[5].rfind("spec.scope.labelSelector.matchExpressions[0].values[2]: invalid label value \"-no\"", 0),
      0u);
  EXPECT_EQ(errs[6], "spec.scope.labelSelector.matchExpressions[1].key: must be a string");
  EXPECT_EQ(errs[7], "spec.scope.labelSelector.matchExpressions[1].operator: must be a string");
  EXPECT_EQ(errs[8], "spec.scope.labelSelector.matchExpressions[1].values: must be a list of strings");
  EXPECT_EQ(errs[9], "spec.scope.labelSelector.matchExpressions[2]: must be an object");
  auto r2 = LabelSelector::from_json(json{{"matchExpressions", {"x"}}}, "p");
  ASSERT_FALSE(r2.has_value());
  EXPECT_EQ(r2.error().str(), "p.matchExpressions[0]: must be an object");
  auto r3 = LabelSelector::from_json(json{{"matchExpressions", "x"}, {"matchLabels", {1, 2}}}, "p");
  ASSERT_FALSE(r3.has_value());
  EXPECT_EQ(r3.error().str(), "p.matchLabels: must be an object; p.matchExpressions: must be a list");
  auto r4 = LabelSelector::from_json(json("app=web"), "spec.selector");
  ASSERT_FALSE(r4.has_value());
  EXPECT_EQ(r4.error().str(), "spec.selector: must be an object");
  auto r5 = LabelSelector::from_json(json{{"matchLabels", {{"a", "b"}}}}, "");
  ASSERT_TRUE(r5.has_value());
}

TEST(LabelKeySyntax, QualifiedNames) {
  for (const std::string& ok :
       {std::string("app"), std::string("app.kubernetes.io/name"), std::string("a_b.c-d"), std::string("A9"),
        std::string(63, 'a'), std::string(253, 'a') + "/x", std::string("kubex.ai/gpu-pool")}) {
    EXPECT_FALSE(check_label_key(ok).has_value()) << ok << ": " << check_label_key(ok).value_or("");
  }
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"", "name part must be non-empty"},
      {"a/b/c", "a qualified name must consist"},
      {"/a", "prefix part must be non-empty"},
      {"Example.com/a", "prefix part a lowercase RFC 1123 subdomain"},
      {"a..b/c", "prefix part a lowercase RFC 1123 subdomain"},
      {"x/", "name part must be non-empty"},
      {std::string(64, 'a'), "name part must be no more than 63 characters"},
      {std::string(254, 'a') + "/x", "prefix part must be no more than 253 characters"},
      {"-a", "name part must consist of alphanumeric characters"},
      {"a-", "name part must consist of alphanumeric characters"},
      {"a b", "name part must consist of alphanumeric characters"},
      {"a*", "name part must consist of alphanumeric characters"},
  };
  for (const auto& [key, message] : bad) {
    auto problem = check_label_key(key);
    ASSERT_TRUE(problem.has_value()) << key;
    EXPECT_NE(problem->find(message), std::string::npos) << key << ": " << *problem;
  }
}

TEST(LabelValueSyntax, ValuesMayBeEmpty) {
  EXPECT_FALSE(check_label_value("").has_value());
  EXPECT_FALSE(check_label_value("v1.2_3-x").has_value());
  EXPECT_FALSE(check_label_value(std::string(63, 'v')).has_value());
  EXPECT_NE(check_label_value(std::string(64, 'v')).value_or("").find("no more than 63"), std::string::npos);
  EXPECT_NE(check_label_value("a b").value_or("").find("a valid label must be an empty string"),
            std::string::npos);
  EXPECT_TRUE(check_label_value("_a").has_value());
  EXPECT_TRUE(check_label_value("a/b").has_value());
}

TEST(LabelSelector, NeverCrashesOnGarbage) {
  std::mt19937 rng(2024);
  const std::string alphabet = "ab=!(),<> \tinotx*-./";
  for (int i = 0; i < 30000; ++i) {
    std::string s;
    std::size_t len = rng() % 16;
    for (std::size_t j = 0; j < len; ++j) s += alphabet[rng() % alphabet.size()];
    for (bool wild : {false, true}) {
      auto r = LabelSelector::parse(s, {.wildcard_values = wild});
      if (r) {
        auto again = LabelSelector::parse(r->str(), {.wildcard_values = wild});
        ASSERT_TRUE(again.has_value()) << s << " -> " << r->str();
        EXPECT_EQ(again->requirements(), r->requirements()) << s;
        (void)r->matches(Labels{{"a", "b"}});
      } else {
        EXPECT_FALSE(r.error().message.empty());
      }
    }
  }
  const std::vector<json> garbage = {
      json(1),
      json::array(),
      json{{"matchLabels", "x"}},
      json{{"matchExpressions", {nullptr, 1, json::array(), json::object()}}},
      json{{"matchExpressions", {{{"key", "a"}, {"operator", "In"}, {"values", nullptr}}}}},
      json{{"matchLabels", {{"a", nullptr}}}}};
  for (const auto& g : garbage) {
    auto r = LabelSelector::from_json(g, "x");
    EXPECT_FALSE(r.has_value()) << g.dump();
  }
}
