// The Go renderer behind kube-apiserver's messages (schema, patch and CEL errors print values through it).
#include "sim/apiserver/go_format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

namespace kubex::sim {
namespace {

using nlohmann::json;

TEST(GoFormat, QuoteIsStrconvQuote) {
  EXPECT_EQ(go_quote("plain"), R"("plain")");
  EXPECT_EQ(go_quote("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(go_quote("\a\b\f\n\r\t\v"), R"("\a\b\f\n\r\t\v")");
  EXPECT_EQ(go_quote(std::string("\x01\x7f", 2)), R"("\x01\x7f")");
  EXPECT_EQ(go_quote("\xff"), R"("\xff")");              // invalid UTF-8 byte
  EXPECT_EQ(go_quote("caf\xC3\xA9"), "\"caf\xC3\xA9\"");  // printable code points stay
  EXPECT_EQ(go_quote("\xE2\x80\x8B"), R"("\u200b")");     // ZERO WIDTH SPACE is not printable
  EXPECT_EQ(go_quote("\xF3\xB0\x80\x80"), R"("\U000f0000")");  // private use
}

TEST(GoFormat, FloatIsPercentV) {
  EXPECT_EQ(go_float(1.5), "1.5");
  EXPECT_EQ(go_float(1e6), "1e+06");
  EXPECT_EQ(go_float(123456.0), "123456");
  EXPECT_EQ(go_float(1234567.0), "1.234567e+06");
  EXPECT_EQ(go_float(0.0001), "0.0001");
  EXPECT_EQ(go_float(0.00001), "1e-05");
  EXPECT_EQ(go_float(-0.0), "-0");
  EXPECT_EQ(go_float(NAN), "NaN");
  EXPECT_EQ(go_float(-INFINITY), "-Inf");
}

TEST(GoFormat, PrintIsPercentVOfInterface) {
  EXPECT_EQ(go_print(json::parse(R"({"b":[1,"x",null],"a":{"c":true}})")),
            "map[a:map[c:true] b:[1 x <nil>]]");
  EXPECT_EQ(go_print(json(1234567.0)), "1.234567e+06");
  EXPECT_EQ(go_type(json(1)), "int64");
  EXPECT_EQ(go_type(json(1.5)), "float64");
  EXPECT_EQ(go_type(json::array()), "[]interface {}");
  EXPECT_EQ(go_type(json::object()), "map[string]interface {}");
}

TEST(GoFormat, JsonAndFieldErrorValues) {
  EXPECT_EQ(go_json(json::parse(R"({"b":"<&>","a":1e21,"c":0.000001})")),
            R"({"a":1e+21,"b":"\u003c\u0026\u003e","c":0.000001})");
  EXPECT_EQ(go_value(json("x")), R"("x")");
  EXPECT_EQ(go_value(json(2.5)), "2.5");
  EXPECT_EQ(go_value(json::parse("18446744073709551615")), "1.8446744073709552e+19");
  EXPECT_EQ(go_value(json::parse(R"({"k":"v"})")), R"({"k":"v"})");
}

}  // namespace
}  // namespace kubex::sim
