// Projected parsing (common/json_projection.h): the admission webhook builds only the parts of a pod its
// decision reads. What it builds must be exactly project(whole value), and what it accepts exactly what the
// whole parse (and nlohmann) accepts, so VAL-9's answers do not change with a projection.
#include "common/json_projection.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/json_parse.h"

namespace kubex::common {
namespace {

using nlohmann::json;
using P = JsonProjection;

// A pod-like projection: a few metadata members, containers cut to name and resources, "status" dropped.
const P& pod_like() {
  static const P p = P::members({
      {"kind", {}},
      {"metadata", P::members({{"name", {}}, {"labels", {}}})},
      {"spec", P::members({{"containers", P::elements(P::members({{"name", {}}, {"resources", {}}}))}})},
  });
  return p;
}

TEST(JsonProjection, ProjectKeepsListedMembersAndWholeValuesOfOtherTypes) {
  const json pod = json::parse(R"({
    "kind": "Pod", "apiVersion": "v1",
    "metadata": {"name": "a", "labels": {"x": "1"}, "managedFields": [{"manager": "m"}]},
    "spec": {"volumes": [{"name": "v"}],
             "containers": [{"name": "c", "resources": {"limits": {"cpu": "1"}}, "env": [{"name": "E"}]},
                            "not-an-object", 7]},
    "status": {}})");
  EXPECT_EQ(project(pod, pod_like()), json::parse(R"({
    "kind": "Pod",
    "metadata": {"name": "a", "labels": {"x": "1"}},
    "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "1"}}}, "not-an-object", 7]}})"));
  // A members projection of a non-object (or elements of a non-array) keeps the value as it is, so type
  // checks downstream see what the whole document has.
  EXPECT_EQ(project(json::parse(R"({"metadata": "odd", "spec": {"containers": {"k": 1}}})"), pod_like()),
            json::parse(R"({"metadata": "odd", "spec": {"containers": {"k": 1}}})"));
  EXPECT_EQ(project(json::array({1, 2}), pod_like()), json::array({1, 2}));
  EXPECT_EQ(project(pod, P()), pod);  // whole
  // keep_others: unlisted members kept whole, listed ones projected.
  const P outer = P::members({{"object", pod_like()}}, true);
  const json review = {{"uid", "u"}, {"object", pod}, {"options", {{"kind", "CreateOptions"}}}};
  EXPECT_EQ(
      project(review, outer),
      (json{{"uid", "u"}, {"object", project(pod, pod_like())}, {"options", {{"kind", "CreateOptions"}}}}));
}

// The projected parse builds project(nlohmann's value) and accepts exactly what the whole parse accepts.
void expect_projected_same(const std::string& text, const P& projection) {
  json whole;
  const bool whole_ok = parse_json_fast(text, whole);
  json cut;
  const bool cut_ok = parse_json_fast(text, cut, 512, &projection);
  EXPECT_EQ(cut_ok, whole_ok) << text;
  if (cut_ok && whole_ok) {
    EXPECT_EQ(cut.dump(), project(json::parse(text), projection).dump()) << text;
  }
}

TEST(JsonProjection, ParseBuildsTheProjectionOfTheWholeValue) {
  const std::vector<std::string> texts = {
      R"({"kind":"Pod","metadata":{"name":"a","name":"b","uid":"x"},"spec":{"containers":[]}})",  // last wins
      R"({"status":{"a":[1,2,{"b":null}]},"kind":"Pod"})",
      R"({"spec":{"containers":[{"name":"c","env":[{"name":"\u00e9\ud83d\ude00","value":"\"\\\/\b"}],)"
      R"("resources":{"requests":{"nvidia.com/gpu":"1"}}}],"tolerations":[{"k":-1.5e3,"t":true,"f":false}]}})",
      R"({"metadata":null,"spec":[]})",
      R"([{"metadata":{}}])",
      R"("just a string")",
      R"({})",
      " {\"kind\" : \"Pod\" , \"skipped\" : [ 1 , { } , [ ] ] } ",
      "\xEF\xBB\xBF{\"kind\":\"Pod\",\"x\":\"caf\xc3\xa9\"}",
  };
  for (const auto& t : texts) expect_projected_same(t, pod_like());
}

// A dropped member is checked as strictly as a built one: the same refusals, and the same "false" for what
// the fast parser leaves to nlohmann (out-of-range numbers, nesting past max_depth).
TEST(JsonProjection, DroppedMembersAreCheckedAsJson) {
  const std::vector<std::string> bad_values = {
      "[1,]",
      "{\"a\":1,}",
      "{a:1}",
      "01",
      "1.",
      "-",
      "tru",
      "\"a\x01\"",
      "\"\\x\"",
      "\"\\ud800\"",
      "\"\xc3\"",
      "\"\xed\xa0\x80\"",
      "[1 2]",
      "{\"a\" 1}",
      "NaN",
      "\"abc",
      "{\"k\":\"\xff\"}",
      "{\"\xff\":1}",  // an invalid key
  };
  for (const auto& v : bad_values) {
    const std::string text = R"({"kind":"Pod","status":)" + v + "}";
    json out;
    EXPECT_FALSE(parse_json_fast(text, out, 512, &pod_like())) << text;
    EXPECT_THROW({ json j = json::parse(text); }, json::exception) << text;
  }
  for (const char* v : {"18446744073709551616", "1e999", "-9223372036854775809"}) {
    json out;
    const std::string text = std::string(R"({"status":)") + v + "}";
    EXPECT_FALSE(parse_json_fast(text, out, 512, &pod_like())) << text;  // nlohmann decides
    EXPECT_FALSE(parse_json_fast(text, out)) << text;                    // as without the projection
  }
  const std::string deep = R"({"status":)" + std::string(20, '[') + std::string(20, ']') + "}";
  json out;
  EXPECT_FALSE(parse_json_fast(deep, out, 10, &pod_like()));
  EXPECT_TRUE(parse_json_fast(deep, out, 30, &pod_like()));
  EXPECT_EQ(out, json::object());
}

}  // namespace
}  // namespace kubex::common
