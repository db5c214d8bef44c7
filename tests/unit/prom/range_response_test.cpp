// parse_range_response (VAL-8, issue 36 `kubex plan sizing`): a /api/v1/query_range answer is data only as
// `status: success` with a "matrix" result; NaN and Inf points count as missing (and a series of nothing else is
// left out); everything else is an error naming what is wrong (REA-10's wording).
#include <gtest/gtest.h>

#include <string>

#include "prom/client.h"

namespace kubex::prom {
namespace {

std::string error_of(int status, std::string_view body) {
  auto r = parse_range_response(status, body, "http://p:9090/api/v1/query_range");
  EXPECT_FALSE(r.has_value()) << body;
  return r ? std::string() : r.error().message;
}

common::TimePoint at_ms(long long ms) { return common::TimePoint(std::chrono::milliseconds(ms)); }

// VAL-8
TEST(ParseRangeResponse, SuccessMatrixPointsInOrderWithMillisecondTimestamps) {
  auto r = parse_range_response(200, R"({"status":"success","data":{"resultType":"matrix","result":[
      {"metric":{"namespace":"ns1","pod":"p1","container":"c"},"values":[[1700000000.123,"42.5"],[1700000060.123,"+7"]]},
      {"metric":{},"values":[[1700000000,"-3e-2"]]}]}})");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->series.size(), 2u);
  EXPECT_EQ(r->series[0].labels,
            (std::map<std::string, std::string>{{"container", "c"}, {"namespace", "ns1"}, {"pod", "p1"}}));
  ASSERT_EQ(r->series[0].points.size(), 2u);
  EXPECT_EQ(r->series[0].points[0].at, at_ms(1700000000123));
  EXPECT_DOUBLE_EQ(r->series[0].points[0].value, 42.5);
  EXPECT_EQ(r->series[0].points[1].at, at_ms(1700000060123));
  EXPECT_DOUBLE_EQ(r->series[0].points[1].value, 7);
  EXPECT_TRUE(r->series[1].labels.empty());
  EXPECT_DOUBLE_EQ(r->series[1].points[0].value, -0.03);
  EXPECT_EQ(r->non_finite, 0u);
}

// VAL-8: NaN, +Inf and -Inf are missing points, counted; a series of nothing else is left out.
TEST(ParseRangeResponse, NonFinitePointsAreMissingAndCounted) {
  auto r = parse_range_response(200, R"({"status":"success","data":{"resultType":"matrix","result":[
      {"metric":{"pod":"a"},"values":[[1,"NaN"],[2,"5"],[3,"+Inf"]]},
      {"metric":{"pod":"b"},"values":[[1,"-Inf"],[2,"NaN"]]}]}})");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->series.size(), 1u);
  EXPECT_EQ(r->series[0].labels.at("pod"), "a");
  ASSERT_EQ(r->series[0].points.size(), 1u);
  EXPECT_EQ(r->series[0].points[0].at, at_ms(2000));
  EXPECT_DOUBLE_EQ(r->series[0].points[0].value, 5);
  EXPECT_EQ(r->non_finite, 4u);
}

TEST(ParseRangeResponse, EmptyMatrix) {
  auto r = parse_range_response(200, R"({"status":"success","data":{"resultType":"matrix","result":[]}})");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_TRUE(r->series.empty());
}

// REA-10: every error names the range query's URL and what was wrong.
TEST(ParseRangeResponse, ErrorsNameTheUrlAndTheProblem) {
  EXPECT_EQ(error_of(200, R"({"status":"success","data":{"resultType":"vector","result":[]}})"),
            "Prometheus range query to http://p:9090/api/v1/query_range returned a \"vector\" result, not a matrix");
  EXPECT_EQ(error_of(400, R"({"status":"error","errorType":"bad_data","error":"exceeded maximum resolution"})"),
            "Prometheus range query to http://p:9090/api/v1/query_range returned status \"error\": bad_data: "
            "exceeded maximum resolution");
  EXPECT_EQ(error_of(503, "down for maintenance"),
            "Prometheus range query to http://p:9090/api/v1/query_range returned HTTP 503: down for maintenance");
  EXPECT_EQ(error_of(200, R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,"x"]]}]}})"),
            "Prometheus range query to http://p:9090/api/v1/query_range returned a malformed series: value \"x\" is "
            "not a number");
  EXPECT_EQ(error_of(200, R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"value":[1,"2"]}]}})"),
            "Prometheus range query to http://p:9090/api/v1/query_range returned a malformed series: \"values\" is "
            "not a list of [<timestamp>, \"<number>\"] pairs");
  EXPECT_EQ(error_of(200, "not json"),
            "Prometheus range query to http://p:9090/api/v1/query_range returned a response that is not JSON");
}

// The instant parser is unchanged by the shared envelope: a matrix is not a vector.
TEST(ParseRangeResponse, InstantParserStillRejectsAMatrix) {
  auto r = parse_query_response(200, R"({"status":"success","data":{"resultType":"matrix","result":[]}})");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message, "Prometheus query returned a \"matrix\" result, not a vector");
}

}  // namespace
}  // namespace kubex::prom
