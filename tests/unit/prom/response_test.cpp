// parse_query_response (VAL-8): only `status: success` with a vector result is data; NaN and Inf samples
// count as missing; everything else is an error a platform engineer can act on (REA-10).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "prom/client.h"

namespace kubex::prom {
namespace {

std::string error_of(int status, std::string_view body) {
  auto r = parse_query_response(status, body);
  EXPECT_FALSE(r.has_value()) << body;
  return r ? std::string() : r.error().message;
}

// VAL-8
TEST(ParseQueryResponse, SuccessVector) {
  auto r = parse_query_response(200, R"({"status":"success","data":{"resultType":"vector","result":[
      {"metric":{"namespace":"ns1","pod":"p1","container":"c"},"value":[1700000000.123,"42.5"]},
      {"metric":{},"value":[1700000000,"-3e-2"]},
      {"metric":{"a":"b"},"value":[1700000000,"+7"]}]}})");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->samples.size(), 3u);
  EXPECT_EQ(r->samples[0].labels, (std::map<std::string, std::string>{{"container", "c"}, {"namespace", "ns1"},
                                                                       {"pod", "p1"}}));
  EXPECT_DOUBLE_EQ(r->samples[0].value, 42.5);
  EXPECT_TRUE(r->samples[1].labels.empty());
  EXPECT_DOUBLE_EQ(r->samples[1].value, -0.03);
  EXPECT_DOUBLE_EQ(r->samples[2].value, 7);
  EXPECT_EQ(r->non_finite, 0u);
}

TEST(ParseQueryResponse, EmptyVector) {
  auto r = parse_query_response(200, R"({"status":"success","data":{"resultType":"vector","result":[]}})");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_TRUE(r->samples.empty());
  EXPECT_EQ(r->non_finite, 0u);
}

// VAL-8: "NaN and Inf samples count as missing": dropped and counted.
TEST(ParseQueryResponse, NonFiniteSamplesAreDroppedAndCounted) {
  auto r = parse_query_response(200, R"({"status":"success","data":{"resultType":"vector","result":[
      {"metric":{"pod":"a"},"value":[1,"NaN"]},
      {"metric":{"pod":"b"},"value":[1,"+Inf"]},
      {"metric":{"pod":"c"},"value":[1,"-Inf"]},
      {"metric":{"pod":"d"},"value":[1,"0.25"]}]}})");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->samples.size(), 1u);
  EXPECT_EQ(r->samples[0].labels.at("pod"), "d");
  EXPECT_DOUBLE_EQ(r->samples[0].value, 0.25);
  EXPECT_EQ(r->non_finite, 3u);
}

struct ErrorCase {
  const char* name;
  int status;
  const char* body;
  const char* want;
};

// VAL-8 / REA-10: each of these is an error, with the message shown.
const ErrorCase kErrors[] = {
    {"matrix", 200, R"({"status":"success","data":{"resultType":"matrix","result":[]}})",
     R"(Prometheus query returned a "matrix" result, not a vector)"},
    {"scalar", 200, R"({"status":"success","data":{"resultType":"scalar","result":[1,"1"]}})",
     R"(Prometheus query returned a "scalar" result, not a vector)"},
    {"string", 200, R"({"status":"success","data":{"resultType":"string","result":[1,"x"]}})",
     R"(Prometheus query returned a "string" result, not a vector)"},
    {"bad_data_400", 400, R"({"status":"error","errorType":"bad_data","error":"1:5: parse error: unexpected"})",
     R"(Prometheus query returned status "error": bad_data: 1:5: parse error: unexpected)"},
    {"timeout_503", 503, R"({"status":"error","errorType":"timeout","error":"query timed out in expression evaluation"})",
     R"(Prometheus query returned status "error": timeout: query timed out in expression evaluation)"},
    {"execution_422", 422, R"({"status":"error","errorType":"execution","error":"many-to-many matching"})",
     R"(Prometheus query returned status "error": execution: many-to-many matching)"},
    {"error_in_200", 200, R"({"status":"error","errorType":"internal","error":"boom"})",
     R"(Prometheus query returned status "error": internal: boom)"},
    {"error_multiline", 400, R"({"status":"error","errorType":"bad_data","error":"line one\nline two"})",
     R"(Prometheus query returned status "error": bad_data: line one line two)"},
    {"error_without_type", 400, R"({"status":"error","error":"boom"})",
     R"(Prometheus query returned status "error": boom)"},
    {"http_503_plain", 503, "Service Unavailable\n\nthe proxy has no upstream",
     "Prometheus query returned HTTP 503: Service Unavailable the proxy has no upstream"},
    {"http_502_empty", 502, "", "Prometheus query returned HTTP 502"},
    {"http_401_json_not_prometheus", 401, R"({"message":"Unauthorized"})",
     R"(Prometheus query returned HTTP 401: {"message":"Unauthorized"})"},
    {"not_json", 200, "<html>hello</html>", "Prometheus query returned a response that is not JSON"},
    {"json_array", 200, "[]", "Prometheus query returned JSON that is not an object"},
    {"missing_status", 200, R"({"data":{"resultType":"vector","result":[]}})",
     R"(Prometheus query returned a response without "status")"},
    {"other_status", 200, R"({"status":"partial","data":{"resultType":"vector","result":[]}})",
     R"(Prometheus query returned status "partial", not "success")"},
    {"missing_data", 200, R"({"status":"success"})", R"(Prometheus query returned a response without "data")"},
    {"missing_result_type", 200, R"({"status":"success","data":{"result":[]}})",
     R"(Prometheus query returned a response without "data.resultType")"},
    {"missing_result", 200, R"({"status":"success","data":{"resultType":"vector"}})",
     R"(Prometheus query returned a response without a "data.result" list)"},
    {"missing_value", 200, R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{}}]}})",
     R"(Prometheus query returned a malformed sample: "value" is not a [<timestamp>, "<number>"] pair)"},
    {"value_not_a_number", 200,
     R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"abc"]}]}})",
     R"(Prometheus query returned a malformed sample: value "abc" is not a number)"},
    {"value_trailing_junk", 200,
     R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"1.5x"]}]}})",
     R"(Prometheus query returned a malformed sample: value "1.5x" is not a number)"},
    {"label_not_string", 200,
     R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":1},"value":[1,"1"]}]}})",
     R"(Prometheus query returned a malformed sample: label "a" is not a string)"},
    {"histogram", 200,
     R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{},"histogram":[1,{}]}]}})",
     R"(Prometheus query returned a malformed sample: a native histogram sample, not a float)"},
};

class ParseQueryResponseError : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ParseQueryResponseError, NamesTheProblem) {
  EXPECT_EQ(error_of(GetParam().status, GetParam().body), GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(Val8, ParseQueryResponseError, ::testing::ValuesIn(kErrors),
                         [](const auto& info) { return std::string(info.param.name); });

// A long or multi-line error body is shown as one line of at most 200 characters.
TEST(ParseQueryResponse, LongBodyIsCutToOneLine) {
  std::string body = "line one\r\nline two\n" + std::string(500, 'x');
  std::string msg = error_of(500, body);
  std::string prefix = "Prometheus query returned HTTP 500: ";
  ASSERT_TRUE(msg.starts_with(prefix)) << msg;
  std::string snippet = msg.substr(prefix.size());
  EXPECT_TRUE(snippet.starts_with("line one line two xxx")) << snippet;
  EXPECT_TRUE(snippet.ends_with("...")) << snippet;
  EXPECT_LE(snippet.size(), 203u);
  EXPECT_EQ(snippet.find('\n'), std::string::npos);
}

// A cut never leaves half a UTF-8 character.
TEST(ParseQueryResponse, CutKeepsUtf8Whole) {
  for (std::size_t pad = 195; pad < 200; ++pad) {
    std::string body = std::string(pad, 'a') + "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80" + std::string(50, 'z');
    std::string snippet = error_of(500, body).substr(std::string("Prometheus query returned HTTP 500: ").size());
    ASSERT_TRUE(snippet.ends_with("...")) << snippet;
    std::string kept = snippet.substr(0, snippet.size() - 3);
    EXPECT_LE(kept.size(), 200u);
    EXPECT_TRUE(body.starts_with(kept)) << pad;
    // `kept` ends on a character boundary: the next byte of the body is not a continuation byte.
    EXPECT_NE(static_cast<unsigned char>(body[kept.size()]) & 0xC0, 0x80) << pad;
    EXPECT_GE(kept.size(), 197u) << pad;  // at most one character (up to 3 bytes of it) dropped
  }
}

// The client's form names the queried URL.
TEST(ParseQueryResponse, WithUrlNamesIt) {
  auto r = parse_query_response(200, R"({"status":"success","data":{"resultType":"scalar","result":[1,"1"]}})",
                                "http://127.0.0.1:9090/api/v1/query");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message,
            R"(Prometheus query to http://127.0.0.1:9090/api/v1/query returned a "scalar" result, not a vector)");
}

}  // namespace
}  // namespace kubex::prom
