#include "common/yaml.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

using namespace kubex::common;
using nlohmann::json;

namespace {

json one(std::string_view text) {
  auto r = yaml_to_json(text);
  EXPECT_TRUE(r.has_value()) << text << "\n" << (r ? "" : r.error().str());
  return r.value_or(json("<<error>>"));
}

// The value of key `v` in a one-line document "v: <scalar>".
json value_of(const std::string& scalar) {
  json doc = one("v: " + scalar + "\n");
  if (!doc.is_object() || !doc.contains("v")) return json("<<missing>>");
  return doc["v"];
}

std::string error_of(std::string_view text) {
  auto r = yaml_to_json_documents(text);
  EXPECT_FALSE(r.has_value()) << text;
  return r ? std::string() : r.error().message;
}

}  // namespace

TEST(Yaml, ConvertsAManifest) {
  json doc = one(R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web, tier: "front"}
spec:
  replicas: 3
  template:
    spec:
      containers:
        - name: app
          image: nginx:1.25
          args: ["--port", 8080]
          resources:
            requests: {cpu: 500m, memory: 1Gi}
)");
  json want = json::parse(R"({"apiVersion":"apps/v1","kind":"Deployment",
    "metadata":{"name":"web","labels":{"app":"web","tier":"front"}},
    "spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.25",
      "args":["--port",8080],"resources":{"requests":{"cpu":"500m","memory":"1Gi"}}}]}}}})");
  EXPECT_EQ(doc, want);
  EXPECT_TRUE(doc["spec"]["replicas"].is_number_integer());
}

TEST(Yaml, SplitsDocumentsAndSkipsEmptyOnes) {
  auto docs = yaml_to_json_documents(
      "---\n# just a comment\n---\na: 1\n---\n~\n---\nnull\n---\n- x\n...\n---\nb: 2\n");
  ASSERT_TRUE(docs.has_value()) << docs.error().str();
  ASSERT_EQ(docs->size(), 3u);
  EXPECT_EQ((*docs)[0], json::parse(R"({"a":1})"));
  EXPECT_EQ((*docs)[1], json::parse(R"(["x"])"));
  EXPECT_EQ((*docs)[2], json::parse(R"({"b":2})"));
  auto empty = yaml_to_json_documents("");
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(empty->empty());
  auto quoted_empty = yaml_to_json_documents("''");
  ASSERT_TRUE(quoted_empty.has_value());
  ASSERT_EQ(quoted_empty->size(), 1u);  // an empty string is not an empty document
  EXPECT_EQ((*quoted_empty)[0], json(""));
}

TEST(Yaml, SingleDocument) {
  EXPECT_EQ(one("a: 1"), json::parse(R"({"a":1})"));
  EXPECT_EQ(one("---\n---\na: 1\n---\n"), json::parse(R"({"a":1})"));
  EXPECT_TRUE(one("").is_null());
  EXPECT_TRUE(one("# nothing\n").is_null());
  auto two = yaml_to_json("a: 1\n---\nb: 2\n");
  ASSERT_FALSE(two.has_value());
  EXPECT_EQ(two.error().message, "yaml: expected a single document, found 2");
}

TEST(Yaml, AcceptsJson) {
  json doc =
      one("{\n\t\"a\": \"x\\/y\\u00e9\",\n\t\"b\": [1, 2.5, true, null, -3],\n\t\"c\": {\"d\": \"1\"}\n}");
  EXPECT_EQ(doc, json::parse(R"({"a":"x/yé","b":[1,2.5,true,null,-3],"c":{"d":"1"}})"));
  EXPECT_EQ(one(R"([{"k": "v"}, "s", 0.25])"), json::parse(R"([{"k":"v"},"s",0.25])"));
}

TEST(Yaml, QuotedAndBlockScalarsAreStrings) {
  for (const char* s :
       {"\"true\"", "'123'", "\"null\"", "'~'", "\"1.5\"", "'yes'", "\"0x10\"", "''", "\".inf\""}) {
    json v = value_of(s);
    EXPECT_TRUE(v.is_string()) << s << " -> " << v.dump();
  }
  EXPECT_EQ(value_of("'it''s'"), json("it's"));
  EXPECT_EQ(one("v: |\n  line1\n  line2\n"), json::parse(R"({"v":"line1\nline2\n"})"));
  EXPECT_EQ(one("v: >-\n  folded\n  text\n"), json::parse(R"({"v":"folded text"})"));
  EXPECT_EQ(one("v: |\n  123\n"), json::parse(R"({"v":"123\n"})"));
}

// GPU-3: decimals must be quoted in YAML, because a plain 0.5 is a number.
TEST(Yaml, PlainDecimalsAreNumbersQuotedOnesStrings) {
  EXPECT_TRUE(value_of("0.5").is_number_float());  // GPU-3
  EXPECT_EQ(value_of("\"0.5\""), json("0.5"));     // GPU-3
  EXPECT_EQ(value_of("500m"), json("500m"));
  EXPECT_EQ(value_of("4"), json(4));
}

TEST(Yaml, BooleansFollowGoYamlV2) {
  for (const char* t : {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"}) {
    EXPECT_EQ(value_of(t), json(true)) << t;
  }
  for (const char* f : {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"}) {
    EXPECT_EQ(value_of(f), json(false)) << f;
  }
  for (const char* s : {"tRue", "yES", "oN", "nO", "FaLsE", "yes!", "truee", "t", "f"}) {
    EXPECT_EQ(value_of(s), json(s)) << s;
  }
}

TEST(Yaml, Nulls) {
  for (const char* n : {"~", "null", "Null", "NULL", ""}) EXPECT_TRUE(value_of(n).is_null()) << n;
  EXPECT_EQ(value_of("nULL"), json("nULL"));
  EXPECT_EQ(one("a:\nb: ~\n"), json::parse(R"({"a":null,"b":null})"));
}

TEST(Yaml, IntegersFollowGoYamlV2) {
  const std::vector<std::pair<const char*, json>> cases = {
      {"42", json(42)},
      {"-7", json(-7)},
      {"+7", json(7)},
      {"0", json(0)},
      {"-0", json(0)},
      {"0x1F", json(31)},
      {"0X1f", json(31)},
      {"-0x10", json(-16)},
      {"0o17", json(15)},
      {"0b101", json(5)},
      {"017", json(15)},  // leading zero: octal
      {"00", json(0)},
      {"1_000", json(1000)},
      {"1_0_0", json(100)},
      {"9223372036854775807", json(std::numeric_limits<std::int64_t>::max())},
      {"-9223372036854775808", json(std::numeric_limits<std::int64_t>::min())},
      {"9223372036854775808", json(std::uint64_t{9223372036854775808u})},
      {"18446744073709551615", json(std::numeric_limits<std::uint64_t>::max())},
      {"0xFFFFFFFFFFFFFFFF", json(std::numeric_limits<std::uint64_t>::max())},
  };
  for (const auto& [in, want] : cases) {
    json v = value_of(in);
    EXPECT_EQ(v, want) << in;
    EXPECT_TRUE(v.is_number_integer()) << in;
  }
  EXPECT_TRUE(value_of("18446744073709551615").is_number_unsigned());
  // Out of uint64 range: go-yaml falls back to a float.
  json big = value_of("18446744073709551616");
  EXPECT_TRUE(big.is_number_float());
  EXPECT_DOUBLE_EQ(big.get<double>(), 18446744073709551616.0);
  EXPECT_TRUE(value_of("-99999999999999999999").is_number_float());
  EXPECT_EQ(value_of("1_"), json(1));  // go-yaml drops every '_' before parsing
  // "08" is not octal; go-yaml reads it as the float 8 (which prints as the integer 8).
  EXPECT_EQ(value_of("08"), json(8));
  // Not numbers.
  for (const char* s : {"0x", "0xG", "_1", "+", "1-2", "12:30", "1.2.3", "0b102", "1e", "2024-01-02", "1h"}) {
    EXPECT_EQ(value_of(s), json(s)) << s;
  }
}

TEST(Yaml, FloatsFollowGoYamlV2) {
  EXPECT_EQ(value_of("1.5"), json(1.5));
  EXPECT_EQ(value_of(".5"), json(0.5));
  EXPECT_EQ(value_of("-.5"), json(-0.5));
  EXPECT_EQ(value_of("+1.25e1"), json(12.5));
  EXPECT_EQ(value_of("6.02e23"), json(6.02e23));
  EXPECT_EQ(value_of("1_0.5"), json(10.5));  // underscores dropped before parsing
  EXPECT_EQ(value_of(".5_5"), json(0.55));
  EXPECT_EQ(value_of("1.10"), json(1.1));  // the classic version-number trap, as with kubectl
  // Integral floats become JSON integers (what kubectl sends on the wire).
  for (const char* s : {"1e3", "1.", "1.0", "1000.000", "-2e0"}) {
    json v = value_of(s);
    EXPECT_TRUE(v.is_number_integer()) << s << " -> " << v.dump();
  }
  EXPECT_EQ(value_of("1e3"), json(1000));
  EXPECT_TRUE(value_of("1e19").is_number_float());  // integral but beyond int64
  // Beyond the double range go-yaml keeps the text; below it the value underflows to 0.
  EXPECT_EQ(value_of("1e400"), json("1e400"));
  EXPECT_EQ(value_of("1e-400"), json(0));
  for (const char* s : {"._5", ".", ".e5", "1.5.", "1e5e5"}) EXPECT_EQ(value_of(s), json(s)) << s;
}

TEST(Yaml, InfinityAndNanAreErrors) {
  for (const char* s : {".inf", ".Inf", ".INF", "+.inf", "-.inf", "-.INF", ".nan", ".NaN", ".NAN"}) {
    std::string message = error_of(std::string("a: 1\nv: ") + s + "\n");
    EXPECT_EQ(message, std::string("yaml: line 2, column 4: `") + s +
                           "` (infinity or NaN) cannot be represented in JSON");
  }
  EXPECT_EQ(value_of(".INf"), json(".INf"));  // not a word go-yaml knows: a string
}

TEST(Yaml, ExplicitTags) {
  EXPECT_EQ(value_of("!!str 123"), json("123"));
  EXPECT_EQ(value_of("!!str true"), json("true"));
  EXPECT_EQ(value_of("!!str"), json(""));
  EXPECT_EQ(value_of("!!str ~"), json("~"));
  EXPECT_EQ(value_of("!!int \"12\""), json(12));
  EXPECT_EQ(value_of("!!int 0x10"), json(16));
  EXPECT_EQ(value_of("!!float 1"), json(1));
  EXPECT_EQ(value_of("!!float 2.5"), json(2.5));
  EXPECT_EQ(value_of("!!bool yes"), json(true));
  EXPECT_EQ(value_of("!!bool \"false\""), json(false));
  EXPECT_TRUE(value_of("!!null ~").is_null());
  EXPECT_TRUE(value_of("!!null \"\"").is_null());
  EXPECT_EQ(value_of("!!binary aGVsbG8="), json("hello"));
  EXPECT_EQ(value_of("!!binary |\n  aGVs\n  bG8h\n"), json("hello!"));
  EXPECT_EQ(value_of("!!binary /w=="), json("\xEF\xBF\xBD"));  // invalid UTF-8 becomes U+FFFD
  EXPECT_EQ(value_of("!!timestamp 2001-12-14"), json("2001-12-14"));
  EXPECT_EQ(value_of("!<tag:yaml.org,2002:int> 5"), json(5));
  EXPECT_EQ(value_of("!foo 123"), json("123"));  // unknown tags give the text
  EXPECT_EQ(value_of("! 123"), json("123"));     // the non-specific tag too
  EXPECT_EQ(value_of("!!seq x"), json("x"));
  EXPECT_EQ(one("v: !!map {a: 1}\n"), json::parse(R"({"v":{"a":1}})"));

  EXPECT_EQ(error_of("a: 1\nb: 2\nc: !!int abc\n"),
            "yaml: line 3, column 4: cannot decode !!str `abc` as a !!int");
  EXPECT_EQ(error_of("v: !!int 1.5"), "yaml: line 1, column 4: cannot decode !!float `1.5` as a !!int");
  EXPECT_EQ(error_of("v: !!bool 1"), "yaml: line 1, column 4: cannot decode !!int `1` as a !!bool");
  EXPECT_EQ(error_of("v: !!null x"), "yaml: line 1, column 4: cannot decode !!str `x` as a !!null");
  EXPECT_EQ(error_of("v: !!float yes"), "yaml: line 1, column 4: cannot decode !!bool `yes` as a !!float");
  EXPECT_EQ(error_of("v: !!int ~"), "yaml: line 1, column 4: cannot decode !!null `~` as a !!int");
  EXPECT_EQ(error_of("v: !!timestamp soon"),
            "yaml: line 1, column 4: cannot decode !!str `soon` as a !!timestamp");
  EXPECT_EQ(error_of("v: !!binary a$=="),
            "yaml: line 1, column 4: !!binary value contains invalid base64 data");
}

TEST(Yaml, AnchorsAliasesAndMergeKeys) {
  EXPECT_EQ(one("a: &x {k: 1}\nb: *x\nc: &s hello\nd: *s\n"),
            json::parse(R"({"a":{"k":1},"b":{"k":1},"c":"hello","d":"hello"})"));
  // Merge: keys set after `<<` override merged ones; keys set before are overwritten (go-yaml v2 order).
  EXPECT_EQ(one("base: &b {cpu: 1, mem: 2, gpu: 3}\nv:\n  mem: 20\n  <<: *b\n  cpu: 10\n"),
            json::parse(R"({"base":{"cpu":1,"mem":2,"gpu":3},"v":{"cpu":10,"mem":2,"gpu":3}})"));
  // A list of maps: earlier maps take precedence.
  EXPECT_EQ(one("a: &a {x: 1, w: 1}\nb: &b {w: 2, z: 2}\nv:\n  <<: [*a, *b]\n")["v"],
            json::parse(R"({"x":1,"w":1,"z":2})"));
  EXPECT_EQ(one("v:\n  <<: {x: 1}\n  z: 2\n")["v"], json::parse(R"({"x":1,"z":2})"));
  EXPECT_EQ(one("v:\n  '<<': 1\n")["v"], json::parse(R"({"<<":1})"));  // quoted: an ordinary key
  EXPECT_EQ(one("v: <<\n")["v"], json("<<"));
  EXPECT_EQ(error_of("v:\n  <<: 1\n"),
            "yaml: line 2, column 7: map merge requires map or sequence of maps as the value");
  EXPECT_EQ(error_of("v:\n  <<: [{a: 1}, 2]\n"),
            "yaml: line 2, column 7: map merge requires map or sequence of maps as the value");
}

TEST(Yaml, MapKeysBecomeStrings) {
  EXPECT_EQ(one("1: a\n0x10: b\ntrue: c\nno: d\n1.5: e\n1e6: f\n\"2\": g\n~x: h\n.inf: i\n1.0: j\n"),
            json::parse(R"({"1":"a","16":"b","true":"c","false":"d","1.5":"e","1e+06":"f","2":"g","~x":"h",
                            ".inf":"i","1":"j"})"));
  using StringMap = std::map<std::string, std::string>;
  const StringMap want = {{"0.1", "a"},    {"100000", "b"}, {"123456", "c"},
                          {"0.0001", "d"}, {"1e-05", "e"},  {"-2.5", "f"}};
  EXPECT_EQ(one("0.1: a\n100000: b\n123456.0: c\n0.0001: d\n0.00001: e\n-2.5: f\n").get<StringMap>(), want);
  EXPECT_EQ(one("a: 1\na: 2\n"), json::parse(R"({"a":2})"));  // last one wins
  // YAML 1.1 booleans are booleans as keys too, exactly as kubectl reads them.
  EXPECT_EQ(one("y: 1\non: 2\nN: 3\n"), json::parse(R"({"true":2,"false":3})"));
  EXPECT_EQ(error_of("~: x\n"), "yaml: line 1, column 1: unsupported map key: null");
  EXPECT_EQ(error_of("? [a]\n: b\n"), "yaml: line 1, column 3: unsupported map key: a sequence");
  EXPECT_EQ(error_of("? {a: 1}\n: b\n"), "yaml: line 1, column 3: unsupported map key: a mapping");
  EXPECT_EQ(error_of("18446744073709551615: x\n"),
            "yaml: line 1, column 1: unsupported map key: integer 18446744073709551615 (beyond int64)");
}

TEST(Yaml, SyntaxErrorsCarryPositions) {
  EXPECT_EQ(error_of("a: [1\nb: 2"), "yaml: line 2, column 2: end of sequence flow not found");
  EXPECT_EQ(error_of("a: *nope\n"), "yaml: line 1, column 4: the referenced anchor is not defined");
  std::string bad_indent = error_of("a:\n  b: 1\n c: 2\n");
  EXPECT_EQ(bad_indent.rfind("yaml: line 3, column ", 0), 0u) << bad_indent;
  EXPECT_EQ(error_of("a: \"x"), "yaml: line 1, column 6: illegal EOF in scalar");
  EXPECT_EQ(error_of("a: b: c"), "yaml: line 1, column 5: illegal map value");
  EXPECT_EQ(error_of("{a: 1"), "yaml: line 1, column 1: end of map flow not found");
  EXPECT_EQ(
      error_of("- a\nb: c\n"),
      "yaml: line 2, column 1: unexpected content after the end of the document (use '---' to start another "
      "document)");
  EXPECT_EQ(
      error_of("a: 1\n---\n[1]\n{a: 1}\n"),
      "yaml: line 4, column 1: unexpected content after the end of the document (use '---' to start another "
      "document)");
  auto separated = yaml_to_json_documents("---\n- a\n---\nb: c\n...\n--- |\n  text\n...\nd: 1\n");
  ASSERT_TRUE(separated.has_value()) << separated.error().str();
  EXPECT_EQ(separated->size(), 4u);
  auto continued = yaml_to_json_documents("a: 1\n--- x\n[1]\n");  // a plain scalar continues on the next line
  ASSERT_TRUE(continued.has_value());
  ASSERT_EQ(continued->size(), 2u);
  EXPECT_EQ((*continued)[1], json("x [1]"));
}

TEST(Yaml, RejectsBadEncoding) {
  EXPECT_EQ(error_of("a: 1\nb: \xff\xfe\n"), "yaml: line 2, column 4: invalid UTF-8 in input");
  EXPECT_EQ(error_of("a: x\x01y\n"), "yaml: line 1, column 5: control characters are not allowed");
  EXPECT_EQ(error_of(std::string("a: x\0y", 6)),
            "yaml: line 1, column 5: control characters are not allowed");
  EXPECT_EQ(error_of("a: \xed\xa0\x80\n"), "yaml: line 1, column 4: invalid UTF-8 in input");  // a surrogate
  EXPECT_EQ(one("\xEF\xBB\xBF"
                "a: \"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\"\n"),
            json::parse("{\"a\":\"é€😀\"}"));
  EXPECT_EQ(one("a:\t1\n"), json::parse(R"({"a":1})"));
  // UTF-16 with a byte-order mark is decoded by yaml-cpp.
  const char utf16_bytes[] = {'\xFF', '\xFE', 'a', 0, ':', 0, ' ', 0, 'x', 0, '\n', 0};
  std::string utf16le(utf16_bytes, sizeof utf16_bytes);
  EXPECT_EQ(one(utf16le), json::parse(R"({"a":"x"})"));
}

TEST(Yaml, SurvivesHostileDocuments) {
  // Inputs that make yaml-cpp's own LoadAll loop forever, or that hung older yaml-cpp versions.
  EXPECT_EQ(error_of(","), "yaml: line 1, column 1: unexpected character ','");
  EXPECT_EQ(error_of("\n,~&1"), "yaml: line 2, column 1: unexpected character ','");
  EXPECT_EQ(error_of("- a\n,"), "yaml: line 2, column 1: unexpected character ','");
  for (const char* s : {"[:", "{:", "[[:", "{# ke\ny{:", "bad YAML: [", "- !+(.,.)"}) {
    EXPECT_EQ(error_of(s).rfind("yaml: line ", 0), 0u) << s;
  }
  // An anchor that contains itself.
  EXPECT_NE(error_of("&a [*a]").find("anchor value contains itself"), std::string::npos);
  EXPECT_NE(error_of("&a {x: [*a]}").find("anchor value contains itself"), std::string::npos);
  // Exponential alias expansion ("billion laughs").
  std::string laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  char prev = 'a';
  for (char c = 'b'; c <= 'j'; ++c) {
    laughs += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 10; ++i) laughs += std::string(i ? ", *" : "*") + prev;
    laughs += "]\n";
    prev = c;
  }
  EXPECT_NE(error_of(laughs).find("excessive aliasing"), std::string::npos);
  // Deep nesting: yaml-cpp's own limit, and ours for nesting built up through aliases.
  std::string deep = std::string(1500, '[') + std::string(1500, ']');
  EXPECT_EQ(error_of(deep), "yaml: line 1, column 1: document is nested too deeply");
  EXPECT_EQ(error_of(std::string(100000, '[')).rfind("yaml: ", 0), 0u);
  EXPECT_TRUE(yaml_to_json(std::string(400, '[') + std::string(400, ']')).has_value());
  std::string stacked = "a: &a " + std::string(400, '[') + std::string(400, ']') + "\n";
  stacked += "b: &b " + std::string(400, '[') + "*a" + std::string(400, ']') + "\n";
  stacked += "c: " + std::string(400, '[') + "*b" + std::string(400, ']') + "\n";
  EXPECT_NE(error_of(stacked).find("nested more than 1000 levels"), std::string::npos);
}

TEST(Yaml, NeverCrashesOnGarbage) {
  std::mt19937 rng(77);
  const std::string alphabet = "ab:-[]{}&*!|>'\"#,? \n\t01.~<";
  int ok = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string s;
    std::size_t len = rng() % 24;
    for (std::size_t j = 0; j < len; ++j) s += alphabet[rng() % alphabet.size()];
    auto r = yaml_to_json_documents(s);
    if (r) {
      ++ok;
      for (const auto& doc : *r) (void)doc.dump();  // always valid JSON (and valid UTF-8)
    } else {
      EXPECT_EQ(r.error().message.rfind("yaml: ", 0), 0u) << s;
    }
  }
  EXPECT_GT(ok, 1000);
  for (int i = 0; i < 2000; ++i) {
    std::string s;
    std::size_t len = rng() % 32;
    for (std::size_t j = 0; j < len; ++j) s += static_cast<char>(rng() & 0xFF);
    auto r = yaml_to_json_documents(s);
    if (r) {
      for (const auto& doc : *r) (void)doc.dump();
    }
  }
}

TEST(Yaml, DocumentLinesNameWhereEachDocumentAndListItemStarts) {  // CLI-3: <file>:<line> of each object
  std::vector<DocumentLines> lines;
  auto docs = yaml_to_json_documents(
      "# leading comment\n"       // 1
      "a: 1\n"                    // 2: document 1
      "---\n"                     // 3
      "---\n"                     // 4: an empty document, skipped
      "\n"                        // 5
      "# about the list\n"        // 6
      "kind: List\n"              // 7: document 2
      "items:\n"                  // 8
      "  - name: x\n"             // 9: item 1
      "    v: 1\n"                // 10
      "  -\n"                     // 11: item 2 (its value starts on the next line)
      "    name: y\n"             // 12
      "--- {\"json\": true}\n",   // 13: document 3
      &lines);
  ASSERT_TRUE(docs.has_value()) << docs.error().str();
  ASSERT_EQ(docs->size(), 3u);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].line, 2);
  EXPECT_TRUE(lines[0].items.empty());
  EXPECT_EQ(lines[1].line, 7);
  EXPECT_EQ(lines[1].items, (std::vector<int>{9, 12}));
  EXPECT_EQ(lines[2].line, 13);
  // Without the out-parameter nothing changes.
  EXPECT_EQ(yaml_to_json_documents("a: 1\n")->size(), 1u);
}
